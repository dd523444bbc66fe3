//! pinlog-verifier: offline verification of a published log and the lock/verify gate.
//!
//! No async runtime, no network, no child processes: everything here reads local files and
//! checks them against keys the caller pinned.

pub mod checkpoint;
pub mod cli;
pub mod gate;
pub mod outcome;
pub mod signature;
pub mod verify_log;
pub mod verify_proof;

pub use checkpoint::Policy;
pub use outcome::{Location, VerifyError};
