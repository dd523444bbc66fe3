//! pinlog-clients: where MCP clients keep their configuration, and what pinlog does with it.
//!
//! Reading a configuration to capture every server it names ([`config`], [`export`]); editing it
//! in place to put the proxy in front of each local server and taking it out again ([`wrap`],
//! with backups); the command line that puts it there, written and read by one type
//! ([`wrapped`]); writing the managed-policy files that allow only wrapped, locked servers
//! ([`policy`]); and the fixed instructions lookup gives per client ([`guide`]).

pub mod config;
pub mod export;
pub mod guide;
pub mod policy;
pub mod wrap;
pub mod wrapped;
