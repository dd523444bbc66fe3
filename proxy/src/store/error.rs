//! Why the pin store refused or failed.

use std::fmt;
use std::path::PathBuf;

use super::ServerKey;
use crate::events::LogError;

/// Why the store refused or failed.
#[derive(Debug)]
pub enum PinStoreError {
    /// The store exists and cannot be read (not SQLite, another schema, a damaged page, a row
    /// that does not read back). Whoever opened it stops.
    Unreadable { path: PathBuf, why: String },
    /// No store there (commands only: the proxy creates it).
    Missing(PathBuf),
    /// The home directory or the store could not be created.
    Io(String),
    /// SQLite failed: the disk is full, or other writers held the store past the busy timeout.
    Sql(rusqlite::Error),
    /// The request cannot be carried out (nothing pending, a surface that cannot be read…);
    /// nothing was written.
    Refused(String),
    /// What is pending for the server is no longer the change a person was shown: a session
    /// recorded another meanwhile, or it was approved or released. Nothing was written.
    Replaced(ServerKey),
    /// The local log does not verify: `index` is the first event that disagrees.
    Audit { index: u64, why: String },
}

impl fmt::Display for PinStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PinStoreError::Unreadable { path, why } => write!(
                f,
                "the pin store {} cannot be read: {why}. Move it away to start over (every server \
                 is then pinned again the next time it runs); pinlog never re-trusts a store it \
                 cannot read",
                path.display()
            ),
            PinStoreError::Missing(path) => write!(
                f,
                "no pin store at {}: the proxy creates it the first time it pins a server \
                 (PINLOG_HOME chooses another directory)",
                path.display()
            ),
            PinStoreError::Io(why) => f.write_str(why),
            PinStoreError::Sql(e) => write!(f, "the pin store failed: {e}"),
            PinStoreError::Refused(why) => f.write_str(why),
            PinStoreError::Replaced(key) => write!(
                f,
                "the pin of {key} or what is pending for it changed after it was shown (a \
                 session recorded another change, or it was approved or released meanwhile): \
                 nothing done; run the command again to see it as it is now"
            ),
            PinStoreError::Audit { index, why } => write!(
                f,
                "the local log does not verify at event {index}: {why}. Nothing more is written \
                 to it; keep the store for inspection and move it away to start over"
            ),
        }
    }
}

impl std::error::Error for PinStoreError {}

impl From<rusqlite::Error> for PinStoreError {
    fn from(e: rusqlite::Error) -> Self {
        PinStoreError::Sql(e)
    }
}

impl From<LogError> for PinStoreError {
    fn from(e: LogError) -> Self {
        match e {
            LogError::Sql(e) => PinStoreError::Sql(e),
            LogError::Bad { index, why } => PinStoreError::Audit { index, why },
        }
    }
}
