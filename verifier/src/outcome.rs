//! What a verification found: where, which rule, and whether it is proof of a bad log (exit 1) or
//! an input that could not be read (exit 4).

use std::fmt;

use pinlog_core::exit::Exit;
use pinlog_log::tile_reader::{TileFault, TileReadError};

/// Where a failure was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// The log's `checkpoint` file.
    Checkpoint,
    /// Entry number `n` of the log.
    Entry(u64),
    /// A file of the log directory, by its path inside it (`tile/0/000`, `blobs/sha256/…`).
    File(String),
    /// The `--state` file.
    State,
    /// The `--proof` file.
    Proof,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Checkpoint => f.write_str("checkpoint"),
            Location::Entry(n) => write!(f, "entry {n}"),
            Location::File(p) => f.write_str(p),
            Location::State => f.write_str("state file"),
            Location::Proof => f.write_str("proof file"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The data read proves the log wrong: exit 1.
    Bad,
    /// An input could not be read or parsed: exit 4.
    Unreadable,
}

/// The first failure found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyError {
    pub severity: Severity,
    pub at: Location,
    /// A stable rule name (docs/SPEC-log.md, "What a verifier checks").
    pub rule: &'static str,
    pub detail: String,
    /// For a rollback or a fork: the checkpoint verified before and the one served now, as read.
    /// Together they are the evidence to keep.
    pub checkpoints: Option<Box<(String, String)>>,
}

impl VerifyError {
    pub fn bad(at: Location, rule: &'static str, detail: impl Into<String>) -> Self {
        VerifyError {
            severity: Severity::Bad,
            at,
            rule,
            detail: detail.into(),
            checkpoints: None,
        }
    }

    pub fn unreadable(at: Location, detail: impl Into<String>) -> Self {
        VerifyError {
            severity: Severity::Unreadable,
            at,
            rule: "unreadable",
            detail: detail.into(),
            checkpoints: None,
        }
    }

    /// The same failure with the two checkpoints that prove it.
    pub fn with_checkpoints(mut self, before: &str, now: &str) -> Self {
        self.checkpoints = Some(Box::new((before.to_string(), now.to_string())));
        self
    }

    /// The exit code this failure means (docs/CLI.md).
    pub fn exit(&self) -> Exit {
        match self.severity {
            Severity::Bad => Exit::Bad,
            Severity::Unreadable => Exit::Unreadable,
        }
    }
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.at, self.rule, self.detail)
    }
}

impl std::error::Error for VerifyError {}

/// A tile that could not serve a proof or a resumed check.
impl From<TileReadError> for VerifyError {
    fn from(e: TileReadError) -> Self {
        let at = Location::File(e.tile);
        match e.fault {
            TileFault::Missing => VerifyError::bad(at, "missing", e.detail),
            TileFault::Damaged => VerifyError::bad(at, "tile-mismatch", e.detail),
            TileFault::Unreadable => VerifyError::unreadable(at, e.detail),
        }
    }
}
