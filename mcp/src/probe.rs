//! One whole look at one server: start it, read its surface, end it, and say what it wrote on
//! standard error whatever happened. A blocking entry point for callers without a runtime.

use std::time::{Duration, SystemTime};

use pinlog_core::manifest::{Manifest, ManifestServer};

use crate::caps::Caps;
use crate::client::{Client, Transport};
use crate::error::WireError;
use crate::revision::Revision;
use crate::stdio::{Launch, Stderr, StdioTransport};
use crate::surface::{self, ProbeOptions, Surface};

/// What a look found, or why it failed; standard error either way.
#[derive(Debug)]
pub struct Look {
    pub outcome: Result<Surface, WireError>,
    pub stderr: Stderr,
}

/// Runs the server `launch` describes and reads its surface, within the caps.
pub fn probe_stdio(launch: &Launch, options: &ProbeOptions, caps: Caps) -> Look {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            return Look {
                outcome: Err(WireError::Unreachable(format!("no runtime: {e}"))),
                stderr: Stderr::default(),
            }
        }
    };
    runtime.block_on(async {
        let transport = match StdioTransport::spawn(launch, caps) {
            Ok(t) => t,
            Err(e) => {
                return Look {
                    outcome: Err(e),
                    stderr: Stderr::default(),
                }
            }
        };
        let mut client = Client::new(Transport::Stdio(transport), caps);
        let session = Duration::from_millis(caps.session_ms);
        let outcome =
            match tokio::time::timeout(session, surface::probe(&mut client, options)).await {
                Ok(r) => r,
                Err(_) => Err(WireError::Timeout(format!(
                    "the session took longer than {} ms",
                    caps.session_ms
                ))),
            };
        let stderr = client.close().await;
        Look { outcome, stderr }
    })
}

/// The current time as a manifest writes it.
pub fn now() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

/// A manifest of one server's surface.
pub fn manifest<'s>(id: &str, surface: &'s Surface, asked: Revision) -> Manifest<'s> {
    Manifest {
        protocol_version: asked.as_str().to_string(),
        complete: surface.complete,
        captured_at: now(),
        captured_by: format!("pinlog/{}", env!("CARGO_PKG_VERSION")),
        scope: None,
        servers: vec![ManifestServer {
            id: id.to_string(),
            reported_name: surface.reported_name().map(str::to_string),
            protocol_version: surface.revision.as_str().to_string(),
            passes: surface.passes,
            instructions: surface.instructions.clone(),
            tools: surface.tools.clone(),
            prompts: surface.prompts.clone(),
        }],
    }
}
