//! pinlog-verifier: verification of a published log: its checkpoint, witnesses, tiles and
//! entries, incrementally from a remembered state, a mirror that always verifies, and inclusion
//! receipts. Builds `pinlog-verify`, which offers the gate too.
//!
//! No async runtime, no network, no child processes: the library reads a log through a
//! `LogSource` (a directory, or what the caller fetches) and checks it against keys the caller
//! pinned. Only the `cli` feature, for the binaries, builds the HTTP source in.

mod carried;
pub mod checkpoint;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "cli")]
pub mod command;
pub mod mirror;
pub mod outcome;
#[cfg(feature = "cli")]
pub mod public_log;
pub mod record;
pub mod verify_log;
pub mod verify_proof;

pub use checkpoint::Policy;
pub use outcome::{Location, VerifyError};
