//! Exit codes, a public contract (docs/CLI.md): changing one is a breaking change. And the failure
//! a command returns: what to say, and the exit code that says why.

use std::process::ExitCode;

use pinlog_core::digest::ListingError;
use pinlog_core::json::{ReadError, Undecidable};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything held.
    Ok = 0,
    /// A departure or an inconsistency was proven.
    Bad = 1,
    /// The command line is wrong.
    Usage = 2,
    /// Something could not be compared: a number no double stands for unambiguously.
    Undecidable = 3,
    /// An input could not be read (or an output could not be written).
    Unreadable = 4,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e as u8)
    }
}

/// A command that stopped: the message for standard error (rendered safe when printed) and the
/// exit code.
pub struct Failure {
    pub exit: Exit,
    pub message: String,
}

impl Failure {
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            exit: Exit::Usage,
            message: message.into(),
        }
    }

    pub fn unreadable(message: impl Into<String>) -> Self {
        Failure {
            exit: Exit::Unreadable,
            message: message.into(),
        }
    }
}

impl From<ReadError> for Failure {
    fn from(e: ReadError) -> Self {
        Failure::unreadable(e.to_string())
    }
}

impl From<ListingError> for Failure {
    fn from(e: ListingError) -> Self {
        Failure::unreadable(e.to_string())
    }
}

impl From<Undecidable> for Failure {
    fn from(e: Undecidable) -> Self {
        Failure {
            exit: Exit::Undecidable,
            message: e.to_string(),
        }
    }
}

impl From<std::io::Error> for Failure {
    /// An output that could not be written; inputs name their file themselves.
    fn from(e: std::io::Error) -> Self {
        Failure::unreadable(format!("cannot write to standard output: {e}"))
    }
}
