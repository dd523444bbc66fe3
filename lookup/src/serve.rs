//! `pinlog lookup` running: the log verified and indexed ahead of the first question, and the
//! server on standard input and output or on a loopback HTTP address.

use std::io::{self, IsTerminal};
use std::sync::Arc;

use pinlog_core::exit::{Exit, Failure};
use pinlog_core::render::safe;
use pinlog_mcp::server::{run_stdio, McpServer};
use pinlog_proxy::store::Store;

use pinlog_verifier::public_log::{OnUnavailable, PublicLog};

use crate::history::{self, LogProblem};
use crate::http::{loopback_addr, serve_http, PATH};
use crate::safe::SiteUrl;
use crate::tools::{server, LookupTools, Pins};

/// What `pinlog lookup` serves.
#[derive(Debug, Default)]
pub struct LookupOptions {
    /// The public log to answer from, pinned.
    pub log: Option<PublicLog>,
    /// The loopback address to serve Streamable HTTP at, instead of stdio.
    pub http: Option<String>,
    /// The base URL of the log's site, to link each server's page.
    pub site: Option<SiteUrl>,
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
        Some(Err(LogProblem::Unreadable { at, why })) => eprintln!(
            "pinlog lookup: the log cannot be read ({}: {}); nothing is answered from it",
            safe(&at),
            safe(&why)
        ),
        _ => {}
    });
}

/// Serves lookup until the client goes away: over stdio with this machine's pins, or over
/// Streamable HTTP on a loopback address with the public tools only. Exit 0 when the client
/// closed the connection; 2 for an address that is not loopback; 4 when the address cannot be
/// bound or the streams fail.
pub fn serve(options: LookupOptions) -> Result<Exit, Failure> {
    let log = options.log;
    // Asked to refuse without the log: it must open before anything is served.
    let opened = match log.as_ref() {
        Some(l) if l.on_unavailable == OnUnavailable::Block => {
            Some(history::load(l).map_err(refused)?)
        }
        _ => None,
    };
    let Some(http) = &options.http else {
        let pins = Store::home().map_or(Pins::NoHome, Pins::Home);
        let server = Arc::new(server(
            LookupTools::new(log, pins)
                .with_site(options.site)
                .opened(opened),
        ));
        warm(&server);
        if io::stdin().is_terminal() {
            eprintln!(
                "pinlog lookup speaks MCP on standard input and output: add it to a client's \
                 configuration (docs/LOOKUP.md) rather than running it in a terminal"
            );
        }
        return match run_stdio(&server, io::stdin().lock(), io::stdout().lock()) {
            Ok(()) => Ok(Exit::Ok),
            // The client closed its side while an answer was written: it is gone, as at the end.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(Exit::Ok),
            Err(e) => Err(Failure::unreadable(format!(
                "standard input or output failed: {e}"
            ))),
        };
    };
    let addr = loopback_addr(http).map_err(Failure::usage)?;
    let server = Arc::new(server(
        LookupTools::new(log, Pins::Off)
            .with_site(options.site)
            .opened(opened),
    ));
    warm(&server);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::unreadable(format!("cannot start the runtime: {e}")))?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Failure::unreadable(format!("cannot listen on {addr}: {e}")))?;
        let bound = listener.local_addr().unwrap_or(addr);
        eprintln!(
            "pinlog lookup: serving MCP (Streamable HTTP) at http://{bound}{PATH}, public tools \
             only (pinlog_server_status, pinlog_how_to_protect)"
        );
        serve_http(listener, server)
            .await
            .map_err(|e| Failure::unreadable(format!("the listener on {bound} failed: {e}")))?;
        Ok(Exit::Ok)
    })
}

/// The failure of a log that could not be used under `--on-public-unavailable block`.
fn refused(problem: LogProblem) -> Failure {
    let (exit, why) = match problem {
        LogProblem::Bad { rule, at } => (Exit::Bad, format!("it does not verify ({at}: {rule})")),
        LogProblem::Unreadable { at, why } => (Exit::Unreadable, format!("{at}: {why}")),
        LogProblem::Moved => (Exit::Unreadable, "it changed while it was read".into()),
    };
    Failure::new(
        exit,
        format!(
            "the public log cannot be used ({why}), and --on-public-unavailable block refuses to \
             serve without it"
        ),
    )
}
