//! What `pinlog proxy` was asked to run: read by both transports.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;

use pinlog_verifier::public_log::PublicLog;

use crate::session::{OnDrift, OnPublicMismatch};

/// What `pinlog proxy` was asked to run.
#[derive(Debug)]
pub struct ProxyOptions {
    /// What people see the server called; for none, [`default_label`] of the command.
    pub name: Option<String>,
    /// A team lockfile the server named `name` is held to, instead of a first-use pin.
    pub lock: Option<PathBuf>,
    /// With `lock`: refuse a server the lockfile does not name.
    pub only_locked: bool,
    pub on_drift: OnDrift,
    /// With `upstream`: the loopback address served over Streamable HTTP.
    pub listen: Option<SocketAddr>,
    /// The server's Streamable HTTP endpoint, instead of a command.
    pub upstream: Option<String>,
    /// The server's command and its arguments.
    pub command: Vec<OsString>,
    /// The public log to compare what is served with, on first use and on a change: the flags'
    /// or the pinlog home's setting.
    pub public_log: Option<PublicLog>,
    pub on_public_mismatch: OnPublicMismatch,
}
