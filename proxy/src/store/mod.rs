//! The pin store: what each local server was approved to serve, in one SQLite database under the
//! user's data directory, and the local log (crate::events) of every change made to it.
//!
//! - A pin is a one-server version 2 lockfile, as `pinlog lock` writes it; a pending (drifted, not
//!   approved) surface is a one-server manifest. Both are read with the strict readers every time,
//!   so a row edited by hand (a description changed without its digest) is refused, never used.
//! - A store that exists and cannot be read stops whoever opened it: it is never replaced, and no
//!   server is re-pinned from what it serves now.
//! - Every write is one `BEGIN IMMEDIATE` transaction holding the change, its event and the log's
//!   new head, so concurrent proxies are put in order by SQLite and lose nothing.
//! - A server is known by a key derived from its command line; the command line itself is never
//!   stored (it often holds tokens). The label is what people see.

mod audit;
mod changes;
mod create;
mod error;
mod key;
mod row;

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use pinlog_core::json::{self, Limits};
use pinlog_core::lockfile::Lockfile;
use pinlog_core::manifest::Manifest;
use pinlog_log::Hash;
use rusqlite::{
    Connection, ErrorCode, OpenFlags, OptionalExtension, Transaction, TransactionBehavior,
};

use create::{create, exists};
use row::Raw;

pub use error::PinStoreError;
pub use key::ServerKey;

/// The schema this code reads and writes, kept in `PRAGMA user_version`.
pub const SCHEMA_VERSION: i64 = 1;
/// The database's file name in the home directory.
pub const DB_FILE: &str = "pins.db";
/// How long a write waits for other proxies before it fails.
const BUSY: Duration = Duration::from_secs(10);

const SERVERS: &str = "
    CREATE TABLE servers (
        key TEXT PRIMARY KEY,
        label TEXT NOT NULL,
        pin BLOB NOT NULL,
        pinned_at TEXT NOT NULL,
        pending BLOB,
        pending_at TEXT,
        pending_labels TEXT);";
const COLUMNS: &str = "key, label, pin, pinned_at, pending, pending_at, pending_labels";
const CLEAR_PENDING: &str =
    "UPDATE servers SET pending = NULL, pending_at = NULL, pending_labels = NULL WHERE key = ?1";

/// A server's pin, as read and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    /// What people see: untrusted text, rendered safe wherever it is shown.
    pub label: String,
    /// The approved surface: a one-server version 2 lockfile.
    pub pin: Vec<u8>,
    pub pinned_at: String,
    /// The server's id inside the lockfile (and in the manifests recorded for it).
    pub id: String,
    pub serial: u64,
    pub tools: usize,
    pub prompts: usize,
    pub pending: Option<Pending>,
}

/// A surface the server served that differs from its pin, waiting for review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// A one-server manifest.
    pub manifest: Vec<u8>,
    pub at: String,
    /// The policies broken and the change labels (fixed tokens).
    pub labels: Vec<String>,
}

impl Pinned {
    /// The pin as a lockfile (it was read once already, so this only fails on a bug).
    pub fn lock(&self) -> Result<Lockfile<'_>, PinStoreError> {
        Lockfile::read(&self.pin).map_err(|e| PinStoreError::Refused(e.to_string()))
    }
}

/// What a first-use pin did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FirstUse {
    Pinned {
        tools: usize,
        prompts: usize,
    },
    /// Another proxy pinned this server first; its pin stands and is returned.
    AlreadyPinned(Pinned),
}

/// What an approval did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approved {
    /// The pin's approval serial now.
    pub serial: u64,
    /// Whether the pin changed (approving what is already approved leaves it as it was).
    pub moved: bool,
    /// What is still pending, with its labels, when only some tools were approved.
    pub pending: Option<Vec<String>>,
}

/// What a verified local log holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditReport {
    pub events: u64,
    pub root: Hash,
    /// The pins found to agree with the log's last pin or approval of their server.
    pub pins: usize,
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

fn now() -> String {
    pinlog_core::clock::now()
}

fn io_error(what: &str, path: &Path, e: io::Error) -> PinStoreError {
    PinStoreError::Io(format!("cannot {what} {}: {e}", path.display()))
}

/// The labels as stored: a JSON array of strings.
fn labels_to_text(labels: &[String]) -> String {
    let mut out = Vec::new();
    json::write_strings(&mut out, labels.iter().map(String::as_str));
    String::from_utf8(out).expect("the writer writes UTF-8")
}

fn labels_from_text(text: &str) -> Option<Vec<String>> {
    let v = json::parse(text.as_bytes(), Limits::default()).ok()?;
    v.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// A manifest given to the store: strictly read, and of exactly one server.
fn one_server(bytes: &[u8]) -> Result<Manifest<'_>, String> {
    let m = Manifest::read(bytes).map_err(|e| e.to_string())?;
    if m.servers.len() != 1 {
        return Err(format!("it holds {} servers, not one", m.servers.len()));
    }
    Ok(m)
}

impl Store {
    /// Where pins live: pinlog's data directory ([`pinlog_core::data_dir`]).
    pub fn home() -> Result<PathBuf, PinStoreError> {
        pinlog_core::data_dir::data_dir()
            .ok_or_else(|| PinStoreError::Io("no data directory: set PINLOG_HOME".into()))
    }

    /// Opens the store in `home`, creating it (and `home`, mode 0700) if it does not exist.
    pub fn open(home: &Path) -> Result<Store, PinStoreError> {
        let path = home.join(DB_FILE);
        if !exists(&path)? {
            create(home, &path)?;
        }
        Store::connect(path)
    }

    /// Opens the store in `home`, which must exist.
    pub fn open_existing(home: &Path) -> Result<Store, PinStoreError> {
        let path = home.join(DB_FILE);
        if !exists(&path)? {
            return Err(PinStoreError::Missing(path));
        }
        Store::connect(path)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The pinlog home the store is in, where the settings beside it are.
    pub fn home_dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    fn connect(path: PathBuf) -> Result<Store, PinStoreError> {
        let unreadable = |why: String| PinStoreError::Unreadable {
            path: path.clone(),
            why,
        };
        // Never SQLITE_OPEN_CREATE: a store that vanished is not silently replaced by an empty one.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn =
            Connection::open_with_flags(&path, flags).map_err(|e| unreadable(e.to_string()))?;
        conn.busy_timeout(BUSY)?;
        // Read before anything writes: switching a foreign file to WAL would change it.
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| unreadable(e.to_string()))?;
        if version != SCHEMA_VERSION {
            return Err(unreadable(format!(
                "its schema version is {version}, and this pinlog reads version {SCHEMA_VERSION}"
            )));
        }
        let check: String = conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(|e| unreadable(e.to_string()))?;
        if check != "ok" {
            return Err(unreadable(format!("SQLite finds it damaged ({check})")));
        }
        for probe in [
            format!("SELECT {COLUMNS} FROM servers LIMIT 0"),
            "SELECT idx, record FROM events LIMIT 0".into(),
            "SELECT size, root FROM heads LIMIT 0".into(),
        ] {
            conn.prepare(&probe)
                .map_err(|e| unreadable(format!("it lacks pinlog's tables ({e})")))?;
        }
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            conn.pragma_update(None, "journal_mode", "WAL")?;
        }
        conn.pragma_update(None, "synchronous", "FULL")?;
        Ok(Store { conn, path })
    }

    /// A SQLite failure that means the file is damaged, or a value of a type pinlog never
    /// writes there (an edited row), becomes [`PinStoreError::Unreadable`].
    fn classify(&self, e: PinStoreError) -> PinStoreError {
        let damaged = |e: &rusqlite::Error| {
            matches!(
                e.sqlite_error_code(),
                Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
            ) || matches!(
                e,
                rusqlite::Error::InvalidColumnType(..)
                    | rusqlite::Error::FromSqlConversionFailure(..)
            )
        };
        match e {
            PinStoreError::Sql(e) if damaged(&e) => self.unreadable(e.to_string()),
            e => e,
        }
    }

    fn unreadable(&self, why: String) -> PinStoreError {
        PinStoreError::Unreadable {
            path: self.path.clone(),
            why,
        }
    }

    /// A write transaction: `BEGIN IMMEDIATE` takes the write lock first, so that what it reads
    /// cannot change before it writes (a deferred one could fail to upgrade instead of waiting).
    fn write(&self) -> Result<Transaction<'_>, PinStoreError> {
        Ok(Transaction::new_unchecked(
            &self.conn,
            TransactionBehavior::Immediate,
        )?)
    }

    fn raw(conn: &Connection, key: &ServerKey) -> Result<Option<Raw>, PinStoreError> {
        let sql = format!("SELECT {COLUMNS} FROM servers WHERE key = ?1");
        Ok(conn
            .query_row(&sql, [key.as_str()], Raw::from_row)
            .optional()?)
    }

    fn load(&self, conn: &Connection, key: &ServerKey) -> Result<Option<Pinned>, PinStoreError> {
        match Self::raw(conn, key)? {
            None => Ok(None),
            Some(raw) => raw
                .read()
                .map(|(_, p)| Some(p))
                .map_err(|e| self.unreadable(e)),
        }
    }

    /// The pin of `key`, if it has one. A row that does not read back is an error, never `None`.
    pub fn pinned(&self, key: &ServerKey) -> Result<Option<Pinned>, PinStoreError> {
        self.load(&self.conn, key).map_err(|e| self.classify(e))
    }

    /// Every pin, by label then key.
    pub fn list(&self) -> Result<Vec<(ServerKey, Pinned)>, PinStoreError> {
        let run = || -> Result<_, PinStoreError> {
            let sql = format!("SELECT {COLUMNS} FROM servers ORDER BY label, key");
            let mut stmt = self.conn.prepare(&sql)?;
            let raws = stmt
                .query_map([], Raw::from_row)?
                .collect::<Result<Vec<_>, _>>()?;
            raws.into_iter()
                .map(|r| r.read().map_err(|e| self.unreadable(e)))
                .collect()
        };
        run().map_err(|e| self.classify(e))
    }

    /// Every key and its label, without reading the pins: to find a server by prefix or label,
    /// and to forget one whose pin no longer reads.
    pub fn keys(&self) -> Result<Vec<(ServerKey, String)>, PinStoreError> {
        let run = || -> Result<_, PinStoreError> {
            let sql = "SELECT key, label FROM servers ORDER BY label, key";
            let mut stmt = self.conn.prepare(sql)?;
            let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get(1)?)))?;
            let mut out = Vec::new();
            for row in rows {
                let (key, label) = row?;
                let key = ServerKey::parse(&key)
                    .ok_or_else(|| self.unreadable("a key is not 24 hex digits".into()))?;
                out.push((key, label));
            }
            Ok(out)
        };
        run().map_err(|e| self.classify(e))
    }

    /// Runs `f` in a write transaction and commits what it did; an error rolls it all back.
    fn writing<T>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T, PinStoreError>,
    ) -> Result<T, PinStoreError> {
        let run = || {
            let tx = self.write()?;
            let out = f(&tx)?;
            tx.commit()?;
            Ok(out)
        };
        run().map_err(|e| self.classify(e))
    }

    fn must_load(&self, tx: &Connection, key: &ServerKey) -> Result<Pinned, PinStoreError> {
        self.load(tx, key)?
            .ok_or_else(|| PinStoreError::Refused(format!("{key} is not pinned")))
    }
}
