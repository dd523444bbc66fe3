//! The operator's store: one SQLite database (WAL) holding the log's entries and blobs, the
//! checkpoints it signed, and each server's liveness.
//!
//! Every append is one `BEGIN IMMEDIATE` transaction that reads the tail, checks the new entry
//! against it and writes it, so two appenders in two processes are put in order by SQLite and
//! neither's entry is lost or misnumbered.

use pinlog_core::exit::Failure;
use std::fmt;
use std::path::Path;
use std::time::Duration;

use pinlog_core::{Digest, ServerId};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use crate::entry::{Entry, EntryError, SurfaceSummary, Timestamp};
use crate::hash::Hash;

/// The schema this code writes; a store with another is refused.
const SCHEMA: i64 = 1;

/// How long an append waits for another writer before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the store refused or failed.
#[derive(Debug)]
pub enum StoreError {
    /// SQLite failed, or the file is not a pinlog store.
    Sql(rusqlite::Error),
    /// The store exists and is not one this version reads.
    Schema(String),
    /// The entry was refused; nothing was written.
    Entry(EntryError),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Sql(e) => write!(f, "store: {e}"),
            StoreError::Schema(why) => write!(f, "store-schema: {why}"),
            StoreError::Entry(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for StoreError {}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Sql(e)
    }
}

impl From<EntryError> for StoreError {
    fn from(e: EntryError) -> Self {
        StoreError::Entry(e)
    }
}

fn refuse(rule: &'static str, detail: impl Into<String>) -> StoreError {
    StoreError::Entry(EntryError {
        rule,
        detail: detail.into(),
    })
}

/// A checkpoint the log signed, as recorded when it was signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedCheckpoint {
    pub size: u64,
    pub root: Hash,
    /// The whole signed note.
    pub note: String,
}

/// One server's liveness.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Liveness {
    pub first_seen: Option<String>,
    pub last_probe: Option<String>,
    pub last_ok: Option<String>,
    pub last_error: Option<String>,
    pub last_change: Option<String>,
    /// The last good look before the last change: with `last_change`, it bounds when the change
    /// happened.
    pub look_before_change: Option<String>,
    pub last_index: Option<u64>,
}

/// A server's last entry, as the next one's `previous` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Latest {
    pub index: u64,
    pub surface: Digest,
    pub blob: Digest,
}

/// One entry as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEntry {
    pub index: u64,
    pub leaf: Hash,
    pub body: Vec<u8>,
}

pub struct Store {
    conn: Connection,
}

impl Store {
    /// Creates the store for a log named `origin`, or opens it if it exists for that origin.
    pub fn create(path: &Path, origin: &str) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| StoreError::Schema(format!("cannot create {}: {e}", dir.display())))?;
        }
        let store = Store::connect(path)?;
        let tx = store.conn.unchecked_transaction()?;
        tx.execute_batch(
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS entries (
                 idx INTEGER PRIMARY KEY,
                 server TEXT NOT NULL,
                 surface TEXT NOT NULL,
                 observed_at TEXT NOT NULL,
                 blob TEXT NOT NULL,
                 leaf BLOB NOT NULL,
                 body BLOB NOT NULL);
             CREATE INDEX IF NOT EXISTS entries_by_server ON entries (server, idx);
             CREATE TABLE IF NOT EXISTS blobs (digest TEXT PRIMARY KEY, body BLOB NOT NULL);
             CREATE TABLE IF NOT EXISTS checkpoints (
                 size INTEGER PRIMARY KEY,
                 root BLOB NOT NULL,
                 note TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS servers (
                 server TEXT PRIMARY KEY,
                 first_seen TEXT,
                 last_probe TEXT,
                 last_ok TEXT,
                 last_error TEXT,
                 last_change TEXT,
                 look_before_change TEXT,
                 last_index INTEGER);",
        )?;
        tx.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', ?1), ('origin', ?2)",
            params![SCHEMA.to_string(), origin],
        )?;
        tx.commit()?;
        store.check(Some(origin))?;
        Ok(store)
    }

    /// Opens an existing store.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if !path.is_file() {
            return Err(StoreError::Schema(format!(
                "no store at {}; create one with `pinlog log init`",
                path.display()
            )));
        }
        let store = Store::connect(path)?;
        store.check(None)?;
        Ok(store)
    }

    fn connect(path: &Path) -> Result<Store, StoreError> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        Ok(Store { conn })
    }

    fn check(&self, origin: Option<&str>) -> Result<(), StoreError> {
        let meta = |key: &str| -> Result<Option<String>, StoreError> {
            let v = self
                .conn
                .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
                .optional();
            match v {
                Ok(v) => Ok(v),
                Err(rusqlite::Error::SqliteFailure(_, Some(msg)))
                    if msg.contains("no such table") =>
                {
                    Err(StoreError::Schema(
                        "this database is not a pinlog store".into(),
                    ))
                }
                Err(e) => Err(e.into()),
            }
        };
        let schema = meta("schema")?;
        if schema.as_deref() != Some(&SCHEMA.to_string()) {
            return Err(StoreError::Schema(format!(
                "the store's schema is {}, this pinlog reads {SCHEMA}",
                schema.as_deref().unwrap_or("missing")
            )));
        }
        if let Some(want) = origin {
            let have = meta("origin")?.unwrap_or_default();
            if have != want {
                return Err(StoreError::Schema(format!(
                    "the store holds the log {have:?}, not {want:?}"
                )));
            }
        }
        Ok(())
    }

    /// Holds an exclusive lock for one publisher at a time, on a file beside the database
    /// (`<db>.publish-lock`); released when the returned file is dropped.
    pub fn publish_lock(&self) -> Result<std::fs::File, StoreError> {
        let db = self.conn.path().unwrap_or_default();
        let path = format!("{db}.publish-lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| StoreError::Schema(format!("cannot open {path}: {e}")))?;
        file.lock()
            .map_err(|e| StoreError::Schema(format!("cannot lock {path}: {e}")))?;
        Ok(file)
    }

    /// The log's origin line.
    pub fn origin(&self) -> Result<String, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'origin'", [], |r| {
                r.get(0)
            })?)
    }

    /// Number of entries.
    pub fn size(&self) -> Result<u64, StoreError> {
        next_index(&self.conn)
    }

    /// Appends one entry (and its surface blob, if not stored already) and returns its index.
    ///
    /// The entry must be canonical and follow every rule in docs/SPEC-log.md that concerns the
    /// log's tail: its `previous` names this server's last entry (or is null for a new server),
    /// its time is not before the last entry's, and its blob is given or already stored and agrees
    /// with the entry.
    pub fn append(&mut self, body: &[u8], blob: Option<&[u8]>) -> Result<u64, StoreError> {
        self.append_all([(body, blob)]).map(|(first, _)| first)
    }

    /// Appends entries in one transaction: all of them or, if any is refused, none. Returns the
    /// first index and the count.
    pub fn append_all<'b>(
        &mut self,
        items: impl IntoIterator<Item = (&'b [u8], Option<&'b [u8]>)>,
    ) -> Result<(u64, u64), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let first = next_index(&tx)?;
        let mut count = 0;
        for (body, blob) in items {
            append_in(&tx, first + count, body, blob)?;
            count += 1;
        }
        tx.commit()?;
        Ok((first, count))
    }

    /// Records a look at a server that found no change (`Ok`) or failed (`Err(reason)`).
    pub fn record_probe(
        &mut self,
        server: &ServerId,
        at: &Timestamp,
        outcome: Result<(), &str>,
    ) -> Result<(), StoreError> {
        let (ok, error) = match outcome {
            Ok(()) => (Some(at.as_str()), None),
            Err(reason) => (None, Some(reason)),
        };
        self.conn.execute(
            "INSERT INTO servers (server, first_seen, last_probe, last_ok, last_error)
             VALUES (?1, ?2, ?2, ?3, ?4)
             ON CONFLICT (server) DO UPDATE SET
                 last_probe = max(coalesce(servers.last_probe, ''), excluded.last_probe),
                 last_ok = coalesce(excluded.last_ok, servers.last_ok),
                 last_error = coalesce(excluded.last_error, servers.last_error)",
            params![server.as_str(), at.as_str(), ok, error],
        )?;
        Ok(())
    }

    pub fn liveness(&self, server: &ServerId) -> Result<Option<Liveness>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT first_seen, last_probe, last_ok, last_error, last_change,
                        look_before_change, last_index
                 FROM servers WHERE server = ?1",
                [server.as_str()],
                liveness_of,
            )
            .optional()?)
    }

    /// Every server's liveness, by server.
    pub fn all_liveness(&self) -> Result<Vec<(ServerId, Liveness)>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT first_seen, last_probe, last_ok, last_error, last_change,
                    look_before_change, last_index, server
             FROM servers ORDER BY server",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(7)?, liveness_of(r)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, live) = row?;
            let id = id
                .parse()
                .map_err(|_| StoreError::Schema(format!("the server {id:?} is not a server id")))?;
            out.push((id, live));
        }
        Ok(out)
    }

    /// The server's last entry: its index, surface digest and blob digest.
    pub fn latest(&self, server: &ServerId) -> Result<Option<Latest>, StoreError> {
        let row: Option<(i64, String, String)> = self
            .conn
            .query_row(
                "SELECT idx, surface, blob FROM entries WHERE server = ?1 ORDER BY idx DESC LIMIT 1",
                [server.as_str()],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        row.map(|(i, surface, blob)| {
            let bad = || StoreError::Schema(format!("entry {i} has a bad digest"));
            Ok(Latest {
                index: i as u64,
                surface: surface.parse().map_err(|_| bad())?,
                blob: blob.parse().map_err(|_| bad())?,
            })
        })
        .transpose()
    }

    /// The `observed_at` of the log's last entry: the earliest time the next may carry.
    pub fn last_observed_at(&self) -> Result<Option<Timestamp>, StoreError> {
        let t: Option<String> = self
            .conn
            .query_row(
                "SELECT observed_at FROM entries ORDER BY idx DESC LIMIT 1",
                [],
                |r| r.get(0),
            )
            .optional()?;
        t.map(|t| {
            Timestamp::parse(&t).ok_or_else(|| {
                StoreError::Schema(format!("the last entry's time {t:?} is malformed"))
            })
        })
        .transpose()
    }

    /// The bytes of a stored blob.
    pub fn blob(&self, digest: &Digest) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT body FROM blobs WHERE digest = ?1",
                [digest.to_string()],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// The entries from `from` on, in index order, one at a time; with `bodies` false the
    /// bodies are left empty (the leaf hashes are enough to rebuild the tree).
    pub fn for_each_entry<E: From<StoreError>>(
        &self,
        from: u64,
        bodies: bool,
        mut f: impl FnMut(StoredEntry) -> Result<(), E>,
    ) -> Result<(), E> {
        let sql = if bodies {
            "SELECT idx, leaf, body FROM entries WHERE idx >= ?1 ORDER BY idx"
        } else {
            "SELECT idx, leaf, x'' FROM entries WHERE idx >= ?1 ORDER BY idx"
        };
        let sql_err = |e: rusqlite::Error| E::from(StoreError::Sql(e));
        let mut stmt = self.conn.prepare(sql).map_err(sql_err)?;
        let mut rows = stmt.query([from as i64]).map_err(sql_err)?;
        let mut expect = from;
        while let Some(row) = rows.next().map_err(sql_err)? {
            let index = row.get::<_, i64>(0).map_err(sql_err)? as u64;
            let leaf: Vec<u8> = row.get(1).map_err(sql_err)?;
            let Some(leaf) = Hash::from_slice(&leaf) else {
                return Err(
                    StoreError::Schema(format!("entry {index} has a bad leaf hash")).into(),
                );
            };
            if index != expect {
                return Err(StoreError::Schema(format!(
                    "entry {expect} is missing from the store"
                ))
                .into());
            }
            expect += 1;
            f(StoredEntry {
                index,
                leaf,
                body: row.get(2).map_err(sql_err)?,
            })?;
        }
        Ok(())
    }

    /// The blobs named by entries from `from` on: (digest, bytes).
    pub fn for_each_blob<E: From<StoreError>>(
        &self,
        from: u64,
        mut f: impl FnMut(&str, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let sql_err = |e: rusqlite::Error| E::from(StoreError::Sql(e));
        let mut stmt = self
            .conn
            .prepare(
                "SELECT b.digest, b.body FROM blobs b
                 WHERE b.digest IN (SELECT blob FROM entries WHERE idx >= ?1)",
            )
            .map_err(sql_err)?;
        let mut rows = stmt.query([from as i64]).map_err(sql_err)?;
        while let Some(row) = rows.next().map_err(sql_err)? {
            let digest: String = row.get(0).map_err(sql_err)?;
            let body: Vec<u8> = row.get(1).map_err(sql_err)?;
            f(&digest, &body)?;
        }
        Ok(())
    }

    /// The last checkpoint this store signed.
    pub fn last_checkpoint(&self) -> Result<Option<SignedCheckpoint>, StoreError> {
        let row: Option<(i64, Vec<u8>, String)> = self
            .conn
            .query_row(
                "SELECT size, root, note FROM checkpoints ORDER BY size DESC LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        row.map(|(size, root, note)| {
            Ok(SignedCheckpoint {
                size: size as u64,
                root: Hash::from_slice(&root).ok_or_else(|| {
                    StoreError::Schema(format!("the checkpoint at size {size} has a bad root"))
                })?,
                note,
            })
        })
        .transpose()
    }

    /// The size each of the witnesses with these public keys last cosigned for this log, as far
    /// as this store knows (0 for none).
    pub fn witness_sizes(&self, keys: &[[u8; 32]]) -> Result<Vec<u64>, StoreError> {
        self.witnesses_table()?;
        let mut query = self
            .conn
            .prepare("SELECT size FROM witnesses WHERE key = ?1")?;
        keys.iter()
            .map(|k| {
                let size: Option<i64> = query.query_row([hex(k)], |r| r.get(0)).optional()?;
                Ok(size.map_or(0, |s| s as u64))
            })
            .collect()
    }

    /// Records that the witness with this public key cosigned the tree of `size`.
    pub fn record_witness(&mut self, key: &[u8; 32], size: u64) -> Result<(), StoreError> {
        self.witnesses_table()?;
        self.conn.execute(
            "INSERT INTO witnesses (key, size) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET size = excluded.size",
            params![hex(key), size as i64],
        )?;
        Ok(())
    }

    /// The witness state, a table that stores made before witnessing lack.
    fn witnesses_table(&self) -> Result<(), StoreError> {
        self.conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS witnesses (key TEXT PRIMARY KEY, size INTEGER NOT NULL)",
        )?;
        Ok(())
    }

    /// Records a checkpoint as signed. A second, different checkpoint at a size already signed
    /// is refused by the table's key.
    pub fn record_checkpoint(&mut self, c: &SignedCheckpoint) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO checkpoints (size, root, note) VALUES (?1, ?2, ?3)",
            params![c.size as i64, &c.root.0[..], c.note],
        )?;
        Ok(())
    }
}

/// The liveness in the first seven columns of a `servers` query, in table order.
fn liveness_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Liveness> {
    Ok(Liveness {
        first_seen: r.get(0)?,
        last_probe: r.get(1)?,
        last_ok: r.get(2)?,
        last_error: r.get(3)?,
        last_change: r.get(4)?,
        look_before_change: r.get(5)?,
        last_index: r.get::<_, Option<i64>>(6)?.map(|i| i as u64),
    })
}

/// The index the next entry gets.
fn next_index(conn: &Connection) -> Result<u64, StoreError> {
    let n: i64 = conn.query_row("SELECT COALESCE(MAX(idx) + 1, 0) FROM entries", [], |r| {
        r.get(0)
    })?;
    Ok(n as u64)
}

/// Checks one entry against the log's tail and writes it at `index`, inside the caller's
/// transaction.
fn append_in(
    tx: &Connection,
    index: u64,
    body: &[u8],
    blob: Option<&[u8]>,
) -> Result<(), StoreError> {
    let index = index as i64;
    let entry = Entry::read(body)?;

    if let Some(b) = blob {
        let digest = Digest::of(b);
        if digest != entry.blob {
            return Err(refuse(
                "blob-digest",
                format!(
                    "the blob given hashes to {digest}, the entry names {}",
                    entry.blob
                ),
            ));
        }
        entry.check_blob(&SurfaceSummary::read(b)?)?;
    }
    let last_time: Option<String> = tx
        .query_row(
            "SELECT observed_at FROM entries ORDER BY idx DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(t) = last_time {
        if entry.observed_at.as_str() < t.as_str() {
            return Err(refuse(
                "entry-time",
                format!(
                    "observed_at {} is before the last entry's {t}",
                    entry.observed_at
                ),
            ));
        }
    }
    let last: Option<(i64, String)> = tx
        .query_row(
            "SELECT idx, surface FROM entries WHERE server = ?1 ORDER BY idx DESC LIMIT 1",
            [entry.server.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let last = match last {
        None => None,
        Some((i, s)) => Some((
            i as u64,
            s.parse::<Digest>()
                .map_err(|_| StoreError::Schema(format!("entry {i} has a bad surface digest")))?,
        )),
    };
    entry.check_previous(last)?;
    let stored: Option<Vec<u8>> = tx
        .query_row(
            "SELECT body FROM blobs WHERE digest = ?1",
            [entry.blob.to_string()],
            |r| r.get(0),
        )
        .optional()?;
    match (blob, stored) {
        (Some(b), None) => {
            tx.execute(
                "INSERT INTO blobs (digest, body) VALUES (?1, ?2)",
                params![entry.blob.to_string(), b],
            )?;
        }
        // A blob given was checked above; one already stored is held to this entry too.
        (None, Some(b)) => entry.check_blob(&SurfaceSummary::read(&b)?)?,
        (Some(_), Some(_)) => {}
        (None, None) => {
            return Err(refuse(
                "blob-missing",
                format!(
                    "the store has no blob {}; give the surface with --blob",
                    entry.blob
                ),
            ))
        }
    }
    let leaf = Hash::leaf(body);
    tx.execute(
        "INSERT INTO entries (idx, server, surface, observed_at, blob, leaf, body)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            index,
            entry.server.as_str(),
            entry.surface.to_string(),
            entry.observed_at.as_str(),
            entry.blob.to_string(),
            &leaf.0[..],
            body
        ],
    )?;
    let at = entry.observed_at.as_str();
    tx.execute(
        "INSERT INTO servers (server, first_seen, last_probe, last_ok, last_change,
                              look_before_change, last_index)
         VALUES (?1, ?2, ?2, ?2, ?2, NULL, ?3)
         ON CONFLICT (server) DO UPDATE SET
             look_before_change = servers.last_ok,
             last_change = excluded.last_change,
             last_index = excluded.last_index,
             last_probe = max(coalesce(servers.last_probe, ''), excluded.last_probe),
             last_ok = max(coalesce(servers.last_ok, ''), excluded.last_ok)",
        params![entry.server.as_str(), at, index],
    )?;
    Ok(())
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Self {
        Failure::unreadable(e.to_string())
    }
}

/// A public key as the witness table keys it: lower-case hex.
fn hex(key: &[u8; 32]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}
