//! Exit codes: a public contract (docs/CLI.md). Changing one is a breaking change.

use std::process::ExitCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything held.
    Ok = 0,
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
