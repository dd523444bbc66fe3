//! `pinlog export`: every server of a client configuration, as one manifest.

use std::path::PathBuf;

use clap::Args;
use pinlog_clients::export::{self, ExportError};
use pinlog_core::exit::{Exit, Failure};

use crate::cli::look::LookArgs;
use crate::io;

#[derive(Args)]
pub struct ExportArgs {
    /// The client configuration (claude_desktop_config.json, .mcp.json, .vscode/mcp.json, …)
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// Only this server (repeatable); the manifest's scope names them
    #[arg(long, value_name = "ID")]
    pub server: Vec<String>,
    #[command(flatten)]
    pub look: LookArgs,
    /// Where to write the manifest (whole or not at all)
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
}

pub fn run(args: ExportArgs) -> Result<Exit, Failure> {
    let config = pinlog_core::files::read_bounded(&args.config, 16 << 20)
        .map_err(|e| Failure::unreadable(format!("cannot read {}: {e}", args.config.display())))?;
    let (options, caps) = (args.look.options(), args.look.caps());
    let env = |name: &str| std::env::var(name).ok();
    let manifest =
        export::export(&config, &env, &args.server, &options, caps).map_err(|e| match &e {
            ExportError::UnknownServer(_) => Failure::usage(e.to_string()),
            ExportError::Server(s) if !s.stderr.kept.is_empty() => Failure::unreadable(format!(
                "{e}\nits standard error:\n{}",
                String::from_utf8_lossy(&s.stderr.kept)
            )),
            _ => Failure::unreadable(e.to_string()),
        })?;
    io::write_atomic(&args.output, &manifest.to_bytes())?;
    eprintln!(
        "exported {} servers to {}: {}",
        manifest.servers.len(),
        args.output.display(),
        if manifest.complete {
            "complete"
        } else {
            "NOT complete (a listing changed between readings, or was read once)"
        }
    );
    Ok(Exit::Ok)
}
