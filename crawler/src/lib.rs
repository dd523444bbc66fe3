//! pinlog-crawler: finds public MCP servers, probes each in a sandbox, and appends to the log
//! when a server's surface is new or moved. `docs/OPERATIONS.md` says how to run it safely.

pub mod candidate;
pub mod cgroup;
pub mod confine;
pub mod discover;
pub mod env_needs;
mod fetch;
pub mod install;
pub mod install_cache;
pub mod limits;
pub mod look;
pub mod names;
pub mod optout;
pub mod outcome;
pub mod queue;
pub mod records;
pub mod registry_check;
pub mod run;
pub mod sandbox;
pub mod schedule;
mod seccomp;
pub mod start;
pub mod usage;
