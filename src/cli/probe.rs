//! `pinlog probe`: the surface of one server, as a one-server manifest.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use pinlog_core::exit::{Exit, Failure};
use pinlog_core::render;
use pinlog_mcp::probe::{self, ProbeReport, Target};
use pinlog_mcp::stdio::Launch;

use crate::cli::look::LookArgs;
use crate::io;

#[derive(Args)]
pub struct ProbeArgs {
    #[command(flatten)]
    pub look: LookArgs,
    /// The server's id in the manifest
    #[arg(long)]
    pub id: Option<String>,
    /// Write the manifest to this file (whole or not at all) instead of standard output
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// A header sent with every HTTP request, `Name: value` (repeatable)
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url")]
    pub headers: Vec<String>,
    /// The server's Streamable HTTP endpoint (http:// or https://)
    #[arg(
        value_name = "URL",
        required_unless_present = "command",
        conflicts_with = "command"
    )]
    pub url: Option<String>,
    /// The server's command and its arguments, run over stdio
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

pub fn run(args: ProbeArgs) -> Result<Exit, Failure> {
    let launch = Launch {
        argv: args.command.iter().map(Into::into).collect(),
        ..Launch::default()
    };
    let (options, caps) = (args.look.options(), args.look.caps());
    let headers = args
        .headers
        .iter()
        .map(|h| match h.split_once(':') {
            Some((k, v)) => Ok((k.trim().to_string(), v.trim().to_string())),
            None => Err(Failure::usage(format!(
                "--header {h:?} is not `Name: value`"
            ))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let target = match &args.url {
        Some(url) => Target::Http {
            url,
            headers: &headers,
            guard: None,
        },
        None => Target::Stdio(&launch),
    };
    let ProbeReport {
        outcome,
        stderr,
        noise,
        ..
    } = probe::probe(target, &options, caps);
    let surface = match outcome {
        Ok(s) => s,
        Err(e) => {
            let mut message = format!("the server could not be probed: {e}");
            if !stderr.kept.is_empty() {
                message.push_str("\nits standard error:\n");
                message.push_str(&String::from_utf8_lossy(&stderr.kept));
            }
            return Err(Failure::unreadable(message));
        }
    };
    let id = args.id.as_deref().unwrap_or("server");
    let mut summary = format!(
        "probed {} ({}): {} tools, {} prompts, {} in {} passes",
        render::quoted(surface.reported_name().unwrap_or("(no name)"), 80),
        surface.revision,
        surface.tools.len(),
        surface.prompts.len(),
        if surface.complete {
            "complete"
        } else {
            "NOT complete"
        },
        surface.passes
    );
    if noise.lines > 0 {
        summary.push_str(&format!(
            "; skipped {} lines of its output that are not JSON-RPC, the first {}",
            noise.lines,
            render::quoted(&noise.first(), 80)
        ));
    }
    let bytes = probe::manifest(id, surface, args.look.protocol.0).to_bytes();
    match &args.output {
        Some(path) => io::write_atomic(path, &bytes)?,
        // Served text on a terminal is rendered safe, as `canon` renders it; piped, it is exact.
        None if io::stdout_is_terminal() => {
            let text = String::from_utf8_lossy(&bytes);
            print!("{}", render::safe(&text));
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes).map_err(crate::io::stdout_failed)?;
            out.flush().map_err(crate::io::stdout_failed)?;
        }
    }
    eprintln!("{summary}");
    Ok(Exit::Ok)
}
