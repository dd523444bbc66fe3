//! `pinlog export`: every server of a client configuration, as one manifest.

use pinlog_clients::export::{self, ExportError};

use crate::io;
use crate::ExportArgs;
use pinlog_core::exit::{Exit, Failure};

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
