//! Exit codes, a public contract (docs/CLI.md): changing one is a breaking change. Every binary
//! of the project exits with one of these, and every error a command can end with says which
//! ([`Failure`]).

use std::fmt;
use std::process::ExitCode;

use crate::digest::ListingError;
use crate::json::{ReadError, Undecidable};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything held.
    Ok = 0,
    /// A departure or an inconsistency was proven.
    Bad = 1,
    /// The command line is wrong.
    Usage = 2,
    /// Something could not be compared: a number no double stands for unambiguously, an
    /// incomplete capture, a narrower scope.
    Undecidable = 3,
    /// An input could not be read (or an output could not be written).
    Unreadable = 4,
}

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        self as u8
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e.code())
    }
}

/// What a command that stopped reports: the message for standard error (rendered safe when
/// printed, after `error: `) and the exit code that says why. The project's one error type at
/// the command level: each crate converts its own errors into it, since each knows which exit
/// code its errors mean.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub exit: Exit,
    pub message: String,
}

impl Failure {
    pub fn new(exit: Exit, message: impl Into<String>) -> Self {
        Failure {
            exit,
            message: message.into(),
        }
    }

    /// Exit 1: a departure or an inconsistency was proven.
    pub fn bad(message: impl Into<String>) -> Self {
        Failure::new(Exit::Bad, message)
    }

    /// Exit 2: the command line is wrong.
    pub fn usage(message: impl Into<String>) -> Self {
        Failure::new(Exit::Usage, message)
    }

    /// Exit 4: an input could not be read, or an output written.
    pub fn unreadable(message: impl Into<String>) -> Self {
        Failure::new(Exit::Unreadable, message)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

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
        Failure::new(Exit::Undecidable, e.to_string())
    }
}
