//! `pinlog lookup [--log DIR --vkey VKEY] [--http ADDR]`: the command line. Exit codes: 0 when
//! the client closed the connection, 2 for a wrong command line (a malformed key, a non-loopback
//! address, --log without a key), 4 when the address cannot be bound or the streams fail.

use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use pinlog_core::files::read_bounded;
use pinlog_core::render::safe;
use pinlog_log::note::VerifierKey;
use pinlog_mcp::server::{run_stdio, McpServer};

use super::history::{LogConfig, LogProblem};
use super::http::{loopback_addr, serve_http, PATH};
use super::tools::{server, LookupTools, Pins};
use crate::store::Store;

const EXIT_OK: u8 = 0;
const EXIT_USAGE: u8 = 2;
const EXIT_UNREADABLE: u8 = 4;

#[derive(Args, Debug)]
pub struct LookupArgs {
    /// A local copy of the published log (checkpoint, tile/, blobs/): verified against the key
    /// before anything is answered from it
    #[arg(long, value_name = "DIR")]
    pub log: Option<PathBuf>,
    /// The log's public key, `name+hex8+base64`, pinned from a source you trust (never the copy
    /// shipped beside the data)
    #[arg(long, value_name = "VKEY", requires = "log")]
    pub vkey: Vec<String>,
    /// A file holding the log's public key (one per line; `#` starts a comment)
    #[arg(long, value_name = "FILE", requires = "log")]
    pub vkey_file: Vec<PathBuf>,
    /// Serve Streamable HTTP at this loopback address (PORT, or HOST:PORT with a loopback host)
    /// instead of stdio; only the public tools are offered there, never this machine's pins
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
}

fn parse_key(text: &str, from: &str) -> Result<VerifierKey, String> {
    let key = VerifierKey::parse(text.trim()).map_err(|e| format!("{from}: {e}"))?;
    if key.is_cosignature() {
        return Err(format!(
            "{from}: {} is a witness cosignature key, not a log key",
            key.name()
        ));
    }
    Ok(key)
}

/// The log to answer from, if one was given: its directory and pinned keys.
fn log_config(args: &LookupArgs) -> Result<Option<LogConfig>, (u8, String)> {
    let Some(dir) = &args.log else {
        return Ok(None);
    };
    let mut keys = Vec::new();
    for v in &args.vkey {
        keys.push(parse_key(v, "--vkey").map_err(|e| (EXIT_USAGE, e))?);
    }
    for f in &args.vkey_file {
        let bytes = read_bounded(f, 64 << 10)
            .map_err(|e| (EXIT_UNREADABLE, format!("cannot read {}: {e}", f.display())))?;
        for line in String::from_utf8_lossy(&bytes).lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            if !line.is_empty() {
                let from = f.display().to_string();
                keys.push(parse_key(line, &from).map_err(|e| (EXIT_USAGE, e))?);
            }
        }
    }
    if keys.is_empty() {
        return Err((
            EXIT_USAGE,
            "--log needs the log's public key, pinned from a source you trust: --vkey or \
             --vkey-file (docs/VERIFYING.md says where to get it)"
                .into(),
        ));
    }
    Ok(Some(LogConfig {
        dir: dir.clone(),
        keys,
    }))
}

/// Verifies and indexes the log ahead of the first question, saying on standard error when it
/// does not verify (the tools then say so too).
fn warm(server: &Arc<McpServer<LookupTools>>) {
    let server = server.clone();
    std::thread::spawn(move || match server.tools.index() {
        Some(Err(LogProblem::Bad { rule, at })) => eprintln!(
            "pinlog lookup: the log does not verify ({}: {rule}); nothing is answered from it",
            safe(&at)
        ),
        Some(Err(LogProblem::Unreadable { at })) => {
            eprintln!("pinlog lookup: the log cannot be read ({})", safe(&at))
        }
        _ => {}
    });
}

/// `pinlog lookup`: serves until the client goes away. Returns the exit code.
pub fn lookup(args: LookupArgs) -> u8 {
    match run(args) {
        Ok(code) => code,
        Err((code, message)) => {
            eprintln!("pinlog: error: {}", safe(&message));
            code
        }
    }
}

fn run(args: LookupArgs) -> Result<u8, (u8, String)> {
    let log = log_config(&args)?;
    let Some(http) = &args.http else {
        let pins = Store::home().map_or(Pins::NoHome, Pins::Home);
        let server = Arc::new(server(LookupTools::new(log, pins)));
        warm(&server);
        if io::stdin().is_terminal() {
            eprintln!(
                "pinlog lookup speaks MCP on standard input and output: add it to a client's \
                 configuration (docs/LOOKUP.md) rather than running it in a terminal"
            );
        }
        return match run_stdio(&server, io::stdin().lock(), io::stdout().lock()) {
            Ok(()) => Ok(EXIT_OK),
            // The client closed its side while an answer was written: it is gone, as at the end.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(EXIT_OK),
            Err(e) => Err((
                EXIT_UNREADABLE,
                format!("standard input or output failed: {e}"),
            )),
        };
    };
    let addr = loopback_addr(http).map_err(|e| (EXIT_USAGE, e))?;
    let server = Arc::new(server(LookupTools::new(log, Pins::Off)));
    warm(&server);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| (EXIT_UNREADABLE, format!("cannot start the runtime: {e}")))?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| (EXIT_UNREADABLE, format!("cannot listen on {addr}: {e}")))?;
        let bound = listener.local_addr().unwrap_or(addr);
        eprintln!(
            "pinlog lookup: serving MCP (Streamable HTTP) at http://{bound}{PATH}, public tools \
             only (pinlog_server_status, pinlog_how_to_protect)"
        );
        serve_http(listener, server).await.map_err(|e| {
            (
                EXIT_UNREADABLE,
                format!("the listener on {bound} failed: {e}"),
            )
        })?;
        Ok(EXIT_OK)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: LookupArgs,
    }

    fn parse(args: &[&str]) -> Result<LookupArgs, clap::Error> {
        Cli::try_parse_from(["lookup"].iter().chain(args)).map(|c| c.args)
    }

    #[test]
    fn a_log_needs_a_pinned_key_and_http_a_loopback_address() {
        assert!(parse(&["--vkey", "x"]).is_err(), "--vkey without --log");
        let no_key = parse(&["--log", "/nowhere"]).unwrap();
        assert_eq!(log_config(&no_key).unwrap_err().0, EXIT_USAGE);
        let bad_key = parse(&["--log", "/nowhere", "--vkey", "not+a+key"]).unwrap();
        assert_eq!(log_config(&bad_key).unwrap_err().0, EXIT_USAGE);
        let key = pinlog_log::note::SignerKey::generate("log.example/x")
            .unwrap()
            .verifier()
            .to_string();
        let ok = parse(&["--log", "/nowhere", "--vkey", &key]).unwrap();
        assert_eq!(log_config(&ok).unwrap().unwrap().keys.len(), 1);
        assert!(log_config(&parse(&[]).unwrap()).unwrap().is_none());
        // Refused before anything is bound.
        assert_eq!(
            lookup(parse(&["--http", "0.0.0.0:8787"]).unwrap()),
            EXIT_USAGE
        );
    }
}
