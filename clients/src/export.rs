//! Export: every server of a client configuration probed, one manifest of them all. A server that
//! cannot be read fails the whole export: an absent server is not a smaller surface, it is an
//! unknown one.
//!
//! A server `pinlog wrap` put the proxy in front of is run without it: the proxy would pin it on
//! first use (export must leave the pin store alone) and could hold back what drifted (export
//! captures what the server serves). A server run by a registry's runner at an exact version
//! gets that package in the manifest, read from its command line as the proxy reads it.

use std::ffi::OsString;
use std::fmt;

use pinlog_core::identity::PublicIdentity;
use pinlog_core::manifest::{Manifest, ManifestServer};
use pinlog_core::package::Package;

use crate::config::{self, ConfigError, ServerEntry};
use crate::wrapped::{is_pinlog_name, WrappedCommand};
use pinlog_mcp::caps::Caps;
use pinlog_mcp::error::WireError;
use pinlog_mcp::probe::{self, Target};
use pinlog_mcp::stdio::{Launch, Stderr};
use pinlog_mcp::surface::{ProbeOptions, Surface};

/// Why an export produced no manifest.
#[derive(Debug)]
pub enum ExportError {
    /// The configuration was refused.
    Config(ConfigError),
    /// `-server` named a server the configuration does not declare.
    UnknownServer(String),
    /// A server could not be read.
    Server(Box<ServerFailure>),
}

/// Which server failed, why, and what it wrote on standard error, if it ran.
#[derive(Debug)]
pub struct ServerFailure {
    pub id: String,
    pub error: WireError,
    pub stderr: Stderr,
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::Config(e) => e.fmt(f),
            ExportError::UnknownServer(id) => {
                write!(f, "the configuration declares no server {id:?}")
            }
            ExportError::Server(s) => write!(
                f,
                "server {:?} could not be read, so nothing was exported: {}",
                s.id, s.error
            ),
        }
    }
}

impl std::error::Error for ExportError {}

/// Probes the servers of `config` (all of them, or those in `only`) and returns their manifest.
pub fn export(
    config: &[u8],
    env: &dyn Fn(&str) -> Option<String>,
    only: &[String],
    options: &ProbeOptions,
    caps: Caps,
) -> Result<Manifest<'static>, ExportError> {
    let servers = config::read(config, env).map_err(ExportError::Config)?;
    if let Some(unknown) = only.iter().find(|id| !servers.contains_key(*id)) {
        return Err(ExportError::UnknownServer(unknown.clone()));
    }
    let mut read: Vec<(String, Surface, Option<Package>)> = Vec::new();
    for (id, entry) in &servers {
        if !only.is_empty() && !only.contains(id) {
            continue;
        }
        let fail = |error, stderr| {
            ExportError::Server(Box::new(ServerFailure {
                id: id.clone(),
                error,
                stderr,
            }))
        };
        let entry = entry.as_ref().map_err(|e| ExportError::Config(e.clone()))?;
        let (launch, package);
        let target = match entry {
            ServerEntry::Stdio(l) => {
                launch = unwrapped(id, l).map_err(ExportError::Config)?;
                package = PublicIdentity::of_command(&launch.argv).and_then(|i| i.exact_package());
                Target::Stdio(&launch)
            }
            ServerEntry::Http {
                url,
                headers,
                legacy_sse,
            } => {
                package = None;
                match legacy_sse {
                    true => Target::SseLegacy {
                        url,
                        headers,
                        guard: None,
                    },
                    false => Target::Http {
                        url,
                        headers,
                        guard: None,
                    },
                }
            }
        };
        let look = probe::probe(target, options, caps);
        match look.outcome {
            Ok(surface) => read.push((id.clone(), surface, package)),
            Err(e) => return Err(fail(e, look.stderr)),
        }
    }
    let mut scope: Vec<String> = only.to_vec();
    scope.sort();
    scope.dedup();
    Ok(Manifest {
        protocol_version: options.revision.map_or("auto", |r| r.as_str()).to_string(),
        complete: read.iter().all(|(_, s, _)| s.complete),
        captured_at: pinlog_core::clock::now(),
        captured_by: probe::captured_by(),
        scope: (!only.is_empty()).then_some(scope),
        servers: read
            .into_iter()
            .map(|(id, s, package)| ManifestServer {
                package,
                ..probe::manifest_server(id, s)
            })
            .collect(),
    })
}

/// The server's own command line: `launch` itself, or for a server behind `pinlog proxy`, the
/// command the proxy would run, with the entry's environment and directory.
fn unwrapped(id: &str, launch: &Launch) -> Result<Launch, ConfigError> {
    let Some(argv) = launch
        .argv
        .iter()
        .map(|a| a.to_str().map(str::to_string))
        .collect::<Option<Vec<String>>>()
    else {
        return Ok(launch.clone());
    };
    match WrappedCommand::parse(&argv[0], &argv[1..], is_pinlog_name) {
        None => Ok(launch.clone()),
        Some(Ok(wrapped)) => Ok(Launch {
            argv: wrapped.server.into_iter().map(OsString::from).collect(),
            ..launch.clone()
        }),
        Some(Err(broken)) => Err(ConfigError(format!(
            "server {id:?}: {}; export reads the server itself, so give the proxy the \
             server's command (or run `pinlog unwrap`)",
            broken.why
        ))),
    }
}
