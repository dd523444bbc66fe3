//! The `pinlog` command line: parses arguments, calls a crate, renders the result, exits.

mod cmd;
mod exit;
mod io;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use pinlog_core::json::Limits;

use crate::io::Render;

/// Pin what MCP servers tell agents, and keep a public, verifiable log of it.
#[derive(Parser)]
#[command(
    name = "pinlog",
    version,
    propagate_version = true,
    max_term_width = 100
)]
#[command(
    after_help = "Exit codes: 0 ok, 1 a departure was proven, 2 the command line is wrong, \
3 something could not be compared (an undecidable number), 4 an input could not be read. \
See docs/CLI.md."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the RFC 8785 canonical bytes of one JSON document
    ///
    /// The document is read strictly (docs/SPEC-digest.md): a repeated member name, an unpaired
    /// surrogate, invalid UTF-8 or trailing data is refused with exit code 4. On a terminal the
    /// bytes are shown with hidden characters written as <U+XXXX>; piped or written with -o they are
    /// exact.
    Canon(CanonArgs),
    /// Print the digest of one JSON document, or of each tool in a listing
    ///
    /// Without --listing: `sha256:<hex>` of the canonical bytes. With --listing the input is a JSON
    /// array of tool (or prompt) objects, as tools/list returns them: one line
    /// `<name>\tsha256:<hex>` per object in set-hash order, then `set\t<hex>`.
    Digest(DigestArgs),
}

#[derive(Args)]
struct InputArgs {
    /// The JSON file to read; `-` or nothing reads standard input
    #[arg(value_name = "FILE|-")]
    file: Option<PathBuf>,
    /// Refuse a document larger than this many bytes
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 30)]
    max_bytes: usize,
    /// Write every non-ASCII character of names and messages as <U+XXXX>
    #[arg(long)]
    ascii: bool,
}

#[derive(Args)]
struct CanonArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Write the canonical bytes to this file (whole or not at all) instead of standard output
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Args)]
struct DigestArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Read a JSON array of tools or prompts and print each digest and the set hash
    #[arg(long)]
    listing: bool,
}

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

impl InputArgs {
    fn limits(&self) -> Limits {
        Limits::with_max_bytes(self.max_bytes)
    }

    fn render(&self) -> Render {
        Render { ascii: self.ascii }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let (render, outcome) = match cli.command {
        Command::Canon(args) => {
            let render = args.input.render();
            (render, cmd::canon::run(args, render))
        }
        Command::Digest(args) => {
            let render = args.input.render();
            (render, cmd::digest::run(args, render))
        }
    };
    match outcome {
        Ok(exit) => exit.into(),
        Err(failure) => {
            render.error(&failure.message);
            failure.exit.into()
        }
    }
}
