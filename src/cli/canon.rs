//! `pinlog canon`: the canonical bytes of one document.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use pinlog_core::exit::{Exit, Failure};
use pinlog_core::json;

use crate::cli::input::InputArgs;
use crate::io::{self, Render};

#[derive(Args)]
pub struct CanonArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Write the canonical bytes to this file (whole or not at all) instead of standard output
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: CanonArgs, render: Render) -> Result<Exit, Failure> {
    let input = io::read_input(args.input.file.as_deref(), args.input.max_bytes)?;
    let canonical = json::canonicalize(&input, args.input.limits())??;
    match &args.output {
        Some(path) => io::write_atomic(path, &canonical)?,
        None if io::stdout_is_terminal() => {
            let text = String::from_utf8_lossy(&canonical);
            let shown = render.text(&text);
            if shown.len() != text.len() {
                eprintln!(
                    "note: characters written as <U+XXXX> for the terminal; pipe the output or use -o for the exact bytes"
                );
            }
            write_all(shown.as_bytes()).map_err(crate::io::stdout_failed)?;
        }
        None => write_all(&canonical).map_err(crate::io::stdout_failed)?,
    }
    Ok(Exit::Ok)
}

fn write_all(bytes: &[u8]) -> std::io::Result<()> {
    let mut out = io::stdout_buffered();
    out.write_all(bytes)?;
    out.flush()
}
