//! pinlog-verifier: offline verification of a published log: its checkpoint, witnesses, tiles and
//! entries, and inclusion receipts. Builds `pinlog-verify`, which offers the gate too.
//!
//! No async runtime, no network, no child processes: everything here reads local files and
//! checks them against keys the caller pinned.

pub mod checkpoint;
#[cfg(feature = "cli")]
pub mod cli;
pub mod command;
pub mod outcome;
pub mod verify_log;
pub mod verify_proof;

pub use checkpoint::Policy;
pub use outcome::{Location, VerifyError};
