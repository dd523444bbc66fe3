//! One whole look at one server: start it, read its surface, end it, and say what it wrote on
//! standard error whatever happened. A blocking entry point for callers without a runtime.

use std::time::{Duration, Instant};

use pinlog_core::manifest::{Manifest, ManifestServer};

use crate::caps::Caps;
use crate::client::{Client, Transport};
use crate::error::WireError;
use crate::guard::NetGuard;
use crate::http::HttpTransport;
use crate::jsonrpc::UNSUPPORTED_VERSION;
use crate::noise::Noise;
use crate::revision::Era;
use crate::revision::Revision;
use crate::sse_legacy::SseLegacyTransport;
use crate::stdio::{Exit, Launch, Stderr, StdioTransport};
use crate::surface::{self, ProbeOptions, Surface};

/// What a look found, or why it failed; standard error either way.
#[derive(Debug)]
pub struct ProbeReport {
    pub outcome: Result<Surface, WireError>,
    pub stderr: Stderr,
    /// How a stdio server ended, if it ended on its own (a crash, an exit before answering).
    pub exit: Option<Exit>,
    /// Lines of its output that were no message at all, skipped.
    pub noise: Noise,
}

/// Where the server is.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// A process to run, spoken to over stdio.
    Stdio(&'a Launch),
    /// A Streamable HTTP endpoint, headers to send with every request, and the guard every
    /// hop is held to, if any.
    Http {
        url: &'a str,
        headers: &'a [(String, String)],
        guard: Option<&'a NetGuard>,
    },
    /// The event-stream URL of a 2024-11-05 HTTP+SSE server, headers for every request, and the
    /// guard every hop is held to, if any.
    SseLegacy {
        url: &'a str,
        headers: &'a [(String, String)],
        guard: Option<&'a NetGuard>,
    },
}

impl Target<'_> {
    async fn connect(&self, caps: Caps) -> Result<Transport, WireError> {
        match *self {
            Target::Stdio(launch) => {
                StdioTransport::spawn(launch, caps).map(|t| Transport::Stdio(Box::new(t)))
            }
            Target::Http {
                url,
                headers,
                guard,
            } => {
                HttpTransport::new(url, headers, caps, guard).map(|t| Transport::Http(Box::new(t)))
            }
            Target::SseLegacy {
                url,
                headers,
                guard,
            } => SseLegacyTransport::connect(url, headers, caps, guard)
                .await
                .map(|t| Transport::SseLegacy(Box::new(t))),
        }
    }
}

/// Runs the server `launch` describes and reads its surface, within the caps.
pub fn probe_stdio(launch: &Launch, options: &ProbeOptions, caps: Caps) -> ProbeReport {
    probe(Target::Stdio(launch), options, caps)
}

/// Reads the surface of the server at `target`, within the caps.
///
/// Without a revision (`auto`), the stateless era is tried first, as the specification's fallback
/// rules ask: a `server/discover` answer keeps it; an error other than "unsupported protocol
/// version", a closed connection or silence means a handshake-era server, which is then started
/// afresh (a server may settle on the era of its first request) and asked to `initialize`.
pub fn probe(target: Target<'_>, options: &ProbeOptions, caps: Caps) -> ProbeReport {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            return ProbeReport {
                outcome: Err(WireError::Unreachable(format!("no runtime: {e}"))),
                stderr: Stderr::default(),
                exit: None,
                noise: Noise::default(),
            }
        }
    };
    runtime.block_on(async {
        // One bound for the whole look, however many sessions it takes.
        let deadline = Instant::now() + Duration::from_millis(caps.session_ms);
        let handshake = match options.revision {
            Some(revision) if revision.era() == Era::Stateless => {
                return session(target, options, caps, Step::Probe(revision), deadline)
                    .await
                    .look
            }
            Some(revision) => revision,
            None => {
                let first = session(target, options, caps, Step::Discover, deadline).await;
                if !first.handshake_era {
                    return first.look;
                }
                Revision::newest_handshake()
            }
        };
        let look = session(target, options, caps, Step::Probe(handshake), deadline)
            .await
            .look;
        // The 2025-03-26 compatibility procedure: an initialize POST refused with 400, 404 or
        // 405 may be a server of the older HTTP+SSE transport at the same URL.
        match (target, &look.outcome) {
            (
                Target::Http {
                    url,
                    headers,
                    guard,
                },
                Err(WireError::HttpStatus(400 | 404 | 405, _)),
            ) => {
                let legacy = session(
                    Target::SseLegacy {
                        url,
                        headers,
                        guard,
                    },
                    options,
                    caps,
                    Step::Probe(handshake),
                    deadline,
                )
                .await
                .look;
                // A legacy server that failed says more than the refused POST.
                match &legacy.outcome {
                    Err(WireError::HttpStatus(..) | WireError::Unreachable(_)) => look,
                    _ => legacy,
                }
            }
            _ => look,
        }
    })
}

/// What one session does.
#[derive(Clone, Copy)]
enum Step {
    /// Read the surface in this revision.
    Probe(Revision),
    /// `server/discover` (bounded by a short wait), then the stateless listings.
    Discover,
}

/// Whether the failure of `server/discover` says the server is of the handshake era. Only
/// "unsupported protocol version" (-32022) is an answer of the stateless era; a malformed or
/// oversized answer is a fault either way.
fn era_evidence(e: &WireError) -> bool {
    match e {
        WireError::Rpc { error, .. } => error.code != UNSUPPORTED_VERSION,
        WireError::Timeout(_) | WireError::Closed(_) => true,
        // Over HTTP, a 400, 404 or 405 without a JSON-RPC error in its body.
        WireError::HttpStatus(code, _) => matches!(code, 400 | 404 | 405),
        _ => false,
    }
}

/// The longest wait for an answer to the era probe.
const DISCOVER_MS: u64 = 10_000;

/// One session's look, and whether it failed at `server/discover` in a way that says the server
/// is of the handshake era.
struct SessionLook {
    look: ProbeReport,
    handshake_era: bool,
}

async fn session(
    target: Target<'_>,
    options: &ProbeOptions,
    caps: Caps,
    step: Step,
    deadline: Instant,
) -> SessionLook {
    let late = || WireError::Timeout(format!("the look took longer than {} ms", caps.session_ms));
    let failed = |e| SessionLook {
        look: ProbeReport {
            outcome: Err(e),
            stderr: Stderr::default(),
            exit: None,
            noise: Noise::default(),
        },
        handshake_era: false,
    };
    let transport = match tokio::time::timeout_at(deadline.into(), target.connect(caps)).await {
        Ok(Ok(t)) => t,
        Ok(Err(e)) => return failed(e),
        Err(_) => return failed(late()),
    };
    let mut client = Client::new(transport, caps);
    let mut handshake_era = false;
    let work = async {
        match step {
            Step::Probe(revision) => surface::probe(&mut client, options, revision).await,
            Step::Discover => {
                let modern = Revision::R2026_07_28;
                let usual = client.set_call_ms(caps.call_ms.min(DISCOVER_MS));
                let found = surface::discover(&mut client, options, modern).await;
                client.set_call_ms(usual);
                // Only the era probe's own failure is evidence of the era; a later one is a
                // fault of a stateless server.
                if let Err(e) = &found {
                    handshake_era = era_evidence(e);
                }
                surface::list_stateless(&mut client, options, modern, found?).await
            }
        }
    };
    let outcome = match tokio::time::timeout_at(deadline.into(), work).await {
        Ok(r) => r,
        Err(_) => Err(late()),
    };
    let noise = std::mem::take(&mut client.noise);
    let (stderr, exit) = client.close().await;
    SessionLook {
        look: ProbeReport {
            outcome,
            stderr,
            exit,
            noise,
        },
        handshake_era,
    }
}

/// A manifest of one server's surface; `asked` is the revision asked for (`None` for auto, when
/// the one the session ran under stands in).
pub fn manifest(id: &str, surface: Surface, asked: Option<Revision>) -> Manifest<'static> {
    Manifest {
        protocol_version: asked.unwrap_or(surface.revision).as_str().to_string(),
        complete: surface.complete,
        captured_at: pinlog_core::clock::now(),
        captured_by: captured_by(),
        scope: None,
        servers: vec![manifest_server(id.to_string(), surface)],
    }
}

/// The exporter named in manifests.
pub fn captured_by() -> String {
    format!("pinlog/{}", env!("CARGO_PKG_VERSION"))
}

/// One server's part of a manifest.
pub fn manifest_server(id: String, s: Surface) -> ManifestServer<'static> {
    ManifestServer {
        reported_name: s.reported_name().map(str::to_string),
        id,
        protocol_version: s.revision.as_str().to_string(),
        passes: s.passes,
        instructions: s.instructions,
        package: None,
        tools: s.tools,
        prompts: s.prompts,
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str) -> Launch {
        Launch {
            argv: vec!["sh".into(), "-c".into(), script.into()],
            ..Launch::default()
        }
    }

    #[test]
    fn a_server_that_ends_on_its_own_says_how() {
        let quick = Caps {
            call_ms: 300,
            shutdown_grace_ms: 200,
            ..Caps::default()
        };
        let l = probe_stdio(&sh("exit 3"), &ProbeOptions::default(), quick);
        assert!(matches!(l.outcome, Err(WireError::Closed(_))), "{l:?}");
        assert_eq!(l.exit, Some(Exit::Code(3)));
        assert_eq!(Exit::Code(3).to_string(), "exited 3");
        let l = probe_stdio(&sh("kill -9 $$"), &ProbeOptions::default(), quick);
        assert_eq!(l.exit, Some(Exit::Signal(9)), "{l:?}");
        // Silent, then ended by our signal: not on its own.
        let l = probe_stdio(&sh("exec sleep 30"), &ProbeOptions::default(), quick);
        assert!(matches!(l.outcome, Err(WireError::Timeout(_))), "{l:?}");
        assert_eq!(l.exit, None);
    }
}
