//! Export: every server of a client configuration probed, one manifest of them all. A server that
//! cannot be read fails the whole export: an absent server is not a smaller surface, it is an
//! unknown one.

use std::fmt;

use pinlog_core::manifest::Manifest;

use crate::config::{self, ConfigError, ServerEntry};
use pinlog_mcp::caps::Caps;
use pinlog_mcp::error::WireError;
use pinlog_mcp::probe::{self, Target};
use pinlog_mcp::stdio::Stderr;
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
    let mut read: Vec<(String, Surface)> = Vec::new();
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
        let target = match entry {
            ServerEntry::Stdio(launch) => Target::Stdio(launch),
            ServerEntry::Http {
                url,
                headers,
                legacy_sse: true,
            } => Target::SseLegacy {
                url,
                headers,
                guard: None,
            },
            ServerEntry::Http { url, headers, .. } => Target::Http {
                url,
                headers,
                guard: None,
            },
        };
        let look = probe::probe(target, options, caps);
        match look.outcome {
            Ok(surface) => read.push((id.clone(), surface)),
            Err(e) => return Err(fail(e, look.stderr)),
        }
    }
    let mut scope: Vec<String> = only.to_vec();
    scope.sort();
    scope.dedup();
    Ok(Manifest {
        protocol_version: options.revision.map_or("auto", |r| r.as_str()).to_string(),
        complete: read.iter().all(|(_, s)| s.complete),
        captured_at: pinlog_core::clock::now(),
        captured_by: probe::captured_by(),
        scope: (!only.is_empty()).then_some(scope),
        servers: read
            .into_iter()
            .map(|(id, s)| probe::manifest_server(id, s))
            .collect(),
    })
}
