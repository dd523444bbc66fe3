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

use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use pinlog_core::digest::value_digest;
use pinlog_core::json::{self, Limits, Value};
use pinlog_core::lockfile::{InstructionsPin, Lockfile};
use pinlog_core::manifest::{Manifest, ManifestServer};
use pinlog_core::render::quoted;
use pinlog_core::Digest;
use pinlog_gate::lock::{approve as approve_lock, Approval};
use pinlog_log::Hash;
use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension, Transaction};
use rusqlite::{Row, TransactionBehavior};

use crate::events::{self, Event, Kind, LogError};

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

/// A server's identity in the store: 24 lowercase hex digits, the first 96 bits of a SHA-256 over
/// its launch. 96 bits make an accidental collision between one user's servers unthinkable, and
/// the id stays short enough to type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerKey(String);

impl ServerKey {
    /// The key of a server launched as `argv` (program and arguments, exactly as given): each
    /// part length-prefixed after a domain tag, so that no two argument lists share an encoding.
    pub fn from_argv(argv: &[OsString]) -> ServerKey {
        Self::derive(
            b"pinlog proxy server key v1: argv\0",
            argv.iter().map(|a| a.as_encoded_bytes()),
        )
    }

    /// The key of a server reached at `url` (Streamable HTTP); the URL is not stored either.
    pub fn from_url(url: &str) -> ServerKey {
        Self::derive(b"pinlog proxy server key v1: url\0", [url.as_bytes()])
    }

    fn derive<'p>(domain: &[u8], parts: impl IntoIterator<Item = &'p [u8]>) -> ServerKey {
        let mut buf = domain.to_vec();
        for p in parts {
            buf.extend_from_slice(&(p.len() as u64).to_be_bytes());
            buf.extend_from_slice(p);
        }
        ServerKey(Digest::of(&buf).hex()[..24].to_string())
    }

    /// A key as written by [`ServerKey::as_str`]; `None` for anything else.
    pub fn parse(text: &str) -> Option<ServerKey> {
        let ok = text.len() == 24
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        ok.then(|| ServerKey(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ServerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why the store refused or failed.
#[derive(Debug)]
pub enum StoreError {
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
    /// The local log does not verify: `index` is the first event that disagrees.
    Audit { index: u64, why: String },
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Unreadable { path, why } => write!(
                f,
                "the pin store {} cannot be read: {why}. Move it away to start over (every server \
                 is then pinned again the next time it runs); pinlog never re-trusts a store it \
                 cannot read",
                path.display()
            ),
            StoreError::Missing(path) => write!(
                f,
                "no pin store at {}: the proxy creates it the first time it pins a server \
                 (PINLOG_HOME chooses another directory)",
                path.display()
            ),
            StoreError::Io(why) => f.write_str(why),
            StoreError::Sql(e) => write!(f, "the pin store failed: {e}"),
            StoreError::Refused(why) => f.write_str(why),
            StoreError::Audit { index, why } => write!(
                f,
                "the local log does not verify at event {index}: {why}. Nothing more is written \
                 to it; keep the store for inspection and move it away to start over"
            ),
        }
    }
}

impl std::error::Error for StoreError {}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Sql(e)
    }
}

impl From<LogError> for StoreError {
    fn from(e: LogError) -> Self {
        match e {
            LogError::Sql(e) => StoreError::Sql(e),
            LogError::Bad { index, why } => StoreError::Audit { index, why },
        }
    }
}

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
    pub fn lock(&self) -> Result<Lockfile<'_>, StoreError> {
        Lockfile::read(&self.pin).map_err(|e| StoreError::Refused(e.to_string()))
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

fn io_error(what: &str, path: &Path, e: io::Error) -> StoreError {
    StoreError::Io(format!("cannot {what} {}: {e}", path.display()))
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

/// The surface of a one-server manifest, apart from when and how it was captured: the digest of
/// the lockfile it would make on its own.
fn surface_digest(m: &Manifest<'_>) -> Result<Digest, StoreError> {
    match approve_lock(m, None) {
        Ok(Approval::Moved(l)) => Ok(Digest::of(&l.to_bytes())),
        Ok(Approval::Unchanged) => unreachable!("a first approval always moves"),
        Err(e) => Err(StoreError::Refused(format!(
            "the surface cannot be pinned: {e}"
        ))),
    }
}

/// A manifest given to the store: strictly read, and of exactly one server.
fn one_server(bytes: &[u8]) -> Result<Manifest<'_>, String> {
    let m = Manifest::read(bytes).map_err(|e| e.to_string())?;
    if m.servers.len() != 1 {
        return Err(format!("it holds {} servers, not one", m.servers.len()));
    }
    Ok(m)
}

/// A row as stored, before its contents are read.
struct Raw {
    key: String,
    label: String,
    pin: Vec<u8>,
    pinned_at: String,
    pending: Option<Vec<u8>>,
    pending_at: Option<String>,
    pending_labels: Option<String>,
}

impl Raw {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Raw> {
        Ok(Raw {
            key: r.get(0)?,
            label: r.get(1)?,
            pin: r.get(2)?,
            pinned_at: r.get(3)?,
            pending: r.get(4)?,
            pending_at: r.get(5)?,
            pending_labels: r.get(6)?,
        })
    }

    /// Reads the pin and the pending surface with the strict readers.
    fn read(self) -> Result<(ServerKey, Pinned), String> {
        let key = ServerKey::parse(&self.key).ok_or("a key is not 24 hex digits")?;
        let bad = |what: &str, e: String| format!("the {what} of {key} cannot be read ({e})");
        let lock = Lockfile::read(&self.pin).map_err(|e| bad("pin", e.to_string()))?;
        let [server] = lock.servers.as_slice() else {
            return Err(bad(
                "pin",
                format!("it holds {} servers, not one", lock.servers.len()),
            ));
        };
        if lock.schema_version != 2 {
            return Err(bad("pin", "it is not a version 2 lockfile".into()));
        }
        let pending = match (self.pending, self.pending_at, self.pending_labels) {
            (None, None, None) => None,
            (Some(manifest), Some(at), Some(labels)) => {
                let m = one_server(&manifest).map_err(|e| bad("pending surface", e))?;
                if m.servers[0].id != server.id {
                    let why = "it is recorded under another id".to_string();
                    return Err(bad("pending surface", why));
                }
                let labels = labels_from_text(&labels)
                    .ok_or_else(|| bad("pending surface", "its labels".into()))?;
                Some(Pending {
                    manifest,
                    at,
                    labels,
                })
            }
            _ => return Err(bad("pending surface", "it is partly recorded".into())),
        };
        let (id, serial) = (server.id.clone(), lock.approval_serial);
        let tools = server.tools.len();
        let prompts = server.prompts.as_ref().map_or(0, Vec::len);
        let pinned = Pinned {
            label: self.label,
            pin: self.pin,
            pinned_at: self.pinned_at,
            id,
            serial,
            tools,
            prompts,
            pending,
        };
        Ok((key, pinned))
    }
}

/// The tools of `pinned`, with the named ones taken from `served` (changed, added, or removed when
/// no longer served); everything else (prompts, instructions, name, protocol) stays as pinned.
fn with_tools<'a>(
    lock: &Lockfile<'a>,
    served: &Manifest<'a>,
    names: &[String],
) -> Result<Manifest<'a>, StoreError> {
    let (pinned, now) = (&lock.servers[0], &served.servers[0]);
    let name_of = |v: &Value<'_>| {
        v.as_object()
            .and_then(|o| o.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let approved = |p: &pinlog_core::lockfile::Pin<'a>| p.approved.clone();
    let mut tools: Vec<Value<'a>> = pinned.tools.iter().filter_map(approved).collect();
    let mut names = names.to_vec();
    names.sort();
    names.dedup();
    for n in &names {
        let at = tools.iter().position(|t| name_of(t).as_ref() == Some(n));
        let offered = now.tools.iter().find(|t| name_of(t).as_ref() == Some(n));
        // Equal digests; an undecidable object is never taken to equal anything.
        let same = |a: &Value<'_>, b: &Value<'_>| match (value_digest(a), value_digest(b)) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        };
        match (at, offered) {
            (Some(i), Some(s)) if same(&tools[i], s) => {
                return Err(StoreError::Refused(format!(
                    "the tool {} has no pending change",
                    quoted(n, 64)
                )))
            }
            (Some(i), Some(s)) => tools[i] = s.clone(),
            (None, Some(s)) => tools.push(s.clone()),
            (Some(i), None) => {
                tools.remove(i);
            }
            (None, None) => {
                return Err(StoreError::Refused(format!(
                    "no tool {} is pinned or served",
                    quoted(n, 64)
                )))
            }
        }
    }
    Ok(Manifest {
        scope: Some(vec![pinned.id.clone()]),
        servers: vec![ManifestServer {
            id: pinned.id.clone(),
            reported_name: pinned.reported_name.clone(),
            protocol_version: pinned.protocol_version.clone().unwrap_or_default(),
            passes: now.passes,
            instructions: match &pinned.instructions {
                InstructionsPin::Approved(text) => text.clone(),
                InstructionsPin::Unpinned => None,
            },
            package: pinned.package.clone(),
            tools,
            prompts: pinned
                .prompts
                .iter()
                .flatten()
                .filter_map(approved)
                .collect(),
        }],
        ..served.clone()
    })
}

impl Store {
    /// Where pins live: pinlog's data directory ([`pinlog_core::data_dir`]).
    pub fn home() -> Result<PathBuf, StoreError> {
        pinlog_core::data_dir::data_dir()
            .ok_or_else(|| StoreError::Io("no data directory: set PINLOG_HOME".into()))
    }

    /// Opens the store in `home`, creating it (and `home`, mode 0700) if it does not exist.
    pub fn open(home: &Path) -> Result<Store, StoreError> {
        let path = home.join(DB_FILE);
        if !exists(&path)? {
            create(home, &path)?;
        }
        Store::connect(path)
    }

    /// Opens the store in `home`, which must exist.
    pub fn open_existing(home: &Path) -> Result<Store, StoreError> {
        let path = home.join(DB_FILE);
        if !exists(&path)? {
            return Err(StoreError::Missing(path));
        }
        Store::connect(path)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn connect(path: PathBuf) -> Result<Store, StoreError> {
        let unreadable = |why: String| StoreError::Unreadable {
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
    /// writes there (an edited row), becomes [`StoreError::Unreadable`].
    fn classify(&self, e: StoreError) -> StoreError {
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
            StoreError::Sql(e) if damaged(&e) => self.unreadable(e.to_string()),
            e => e,
        }
    }

    fn unreadable(&self, why: String) -> StoreError {
        StoreError::Unreadable {
            path: self.path.clone(),
            why,
        }
    }

    /// A write transaction: `BEGIN IMMEDIATE` takes the write lock first, so that what it reads
    /// cannot change before it writes (a deferred one could fail to upgrade instead of waiting).
    fn write(&self) -> Result<Transaction<'_>, StoreError> {
        Ok(Transaction::new_unchecked(
            &self.conn,
            TransactionBehavior::Immediate,
        )?)
    }

    fn raw(conn: &Connection, key: &ServerKey) -> Result<Option<Raw>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM servers WHERE key = ?1");
        Ok(conn
            .query_row(&sql, [key.as_str()], Raw::from_row)
            .optional()?)
    }

    fn load(&self, conn: &Connection, key: &ServerKey) -> Result<Option<Pinned>, StoreError> {
        match Self::raw(conn, key)? {
            None => Ok(None),
            Some(raw) => raw
                .read()
                .map(|(_, p)| Some(p))
                .map_err(|e| self.unreadable(e)),
        }
    }

    /// The pin of `key`, if it has one. A row that does not read back is an error, never `None`.
    pub fn pinned(&self, key: &ServerKey) -> Result<Option<Pinned>, StoreError> {
        self.load(&self.conn, key).map_err(|e| self.classify(e))
    }

    /// Every pin, by label then key.
    pub fn list(&self) -> Result<Vec<(ServerKey, Pinned)>, StoreError> {
        let run = || -> Result<_, StoreError> {
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
    pub fn keys(&self) -> Result<Vec<(ServerKey, String)>, StoreError> {
        let run = || -> Result<_, StoreError> {
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
        f: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let run = || {
            let tx = self.write()?;
            let out = f(&tx)?;
            tx.commit()?;
            Ok(out)
        };
        run().map_err(|e| self.classify(e))
    }

    fn must_load(&self, tx: &Connection, key: &ServerKey) -> Result<Pinned, StoreError> {
        self.load(tx, key)?
            .ok_or_else(|| StoreError::Refused(format!("{key} is not pinned")))
    }

    /// Pins a one-server manifest on first use, unless another proxy pinned `key` first: then
    /// that pin stands, and is returned.
    pub fn pin_first_use(
        &self,
        key: &ServerKey,
        label: &str,
        manifest: &[u8],
    ) -> Result<FirstUse, StoreError> {
        let m = one_server(manifest)
            .map_err(|e| StoreError::Refused(format!("the surface to pin cannot be read: {e}")))?;
        let pin = match approve_lock(&m, None) {
            Ok(Approval::Moved(l)) => l.to_bytes(),
            Ok(Approval::Unchanged) => unreachable!("a first approval always moves"),
            Err(e) => return Err(StoreError::Refused(format!("cannot pin: {e}"))),
        };
        self.writing(|tx| {
            if let Some(p) = self.load(tx, key)? {
                return Ok(FirstUse::AlreadyPinned(p));
            }
            let at = now();
            tx.execute(
                "INSERT INTO servers (key, label, pin, pinned_at) VALUES (?1, ?2, ?3, ?4)",
                params![key.as_str(), label, pin, at],
            )?;
            let after = Some(Digest::of(&pin));
            events::append(
                tx,
                &Event::new(&at, Kind::Pin, key.as_str(), label, None, after),
            )?;
            let s = &m.servers[0];
            let (tools, prompts) = (s.tools.len(), s.prompts.len());
            Ok(FirstUse::Pinned { tools, prompts })
        })
    }

    /// Records that `key` served `manifest` (one server, under the pin's id), which departs from
    /// its pin with `labels`. It replaces an older pending surface; the same surface with the
    /// same labels is recorded once (returns `false` then).
    pub fn record_drift(
        &self,
        key: &ServerKey,
        manifest: &[u8],
        labels: &[String],
    ) -> Result<bool, StoreError> {
        let m = one_server(manifest)
            .map_err(|e| StoreError::Refused(format!("the served surface cannot be read: {e}")))?;
        let surface = surface_digest(&m)?;
        self.writing(|tx| {
            let p = self.must_load(tx, key)?;
            if m.servers[0].id != p.id {
                return Err(StoreError::Refused(format!(
                    "the served surface is recorded under the id {}, and the pin under {}",
                    quoted(&m.servers[0].id, 64),
                    quoted(&p.id, 64)
                )));
            }
            if let Some(old) = &p.pending {
                let old_surface = one_server(&old.manifest).map_err(|e| self.unreadable(e))?;
                if surface_digest(&old_surface)? == surface && old.labels == labels {
                    return Ok(false);
                }
            }
            let at = now();
            tx.execute(
                "UPDATE servers SET pending = ?2, pending_at = ?3, pending_labels = ?4 \
                 WHERE key = ?1",
                params![key.as_str(), manifest, at, labels_to_text(labels)],
            )?;
            let before = Some(Digest::of(&p.pin));
            let mut event = Event::new(
                &at,
                Kind::Drift,
                key.as_str(),
                &p.label,
                before,
                Some(surface),
            );
            event.labels = labels.to_vec();
            events::append(tx, &event)?;
            Ok(true)
        })
    }

    /// The server serves its pin again: the pending surface is dropped. `false` when nothing was
    /// pending (no event then).
    pub fn release(&self, key: &ServerKey) -> Result<bool, StoreError> {
        self.writing(|tx| {
            let Some(p) = self.load(tx, key)? else {
                return Ok(false);
            };
            let Some(pending) = &p.pending else {
                return Ok(false);
            };
            let served = one_server(&pending.manifest).map_err(|e| self.unreadable(e))?;
            let before = Some(surface_digest(&served)?);
            tx.execute(CLEAR_PENDING, [key.as_str()])?;
            let after = Some(Digest::of(&p.pin));
            events::append(
                tx,
                &Event::new(&now(), Kind::Release, key.as_str(), &p.label, before, after),
            )?;
            Ok(true)
        })
    }

    /// Takes the pending surface into the pin: all of it when `tools` is empty, else only those
    /// tools (changed, added, or removed), and the rest stays pending.
    pub fn approve(&self, key: &ServerKey, tools: &[String]) -> Result<Approved, StoreError> {
        self.writing(|tx| {
            let p = self.must_load(tx, key)?;
            let Some(pending) = &p.pending else {
                return Err(StoreError::Refused(format!(
                    "nothing is pending for {key}: it last served what was approved"
                )));
            };
            let lock = p.lock()?;
            let served = one_server(&pending.manifest).map_err(|e| self.unreadable(e))?;
            let candidate = match tools.is_empty() {
                true => served.clone(),
                false => with_tools(&lock, &served, tools)?,
            };
            let (pin, moved) = match approve_lock(&candidate, Some(&lock)) {
                Ok(Approval::Moved(l)) => (l.to_bytes(), true),
                Ok(Approval::Unchanged) => (p.pin.clone(), false),
                Err(e) => return Err(StoreError::Refused(format!("cannot approve: {e}"))),
            };
            let new_lock = Lockfile::read(&pin)
                .map_err(|e| StoreError::Refused(format!("the new pin does not read back: {e}")))?;
            // What the server last served, against the new pin: what still departs stays pending.
            let left = crate::check::check(&served, &new_lock).map(|d| d.labels);
            let at = now();
            tx.execute(
                "UPDATE servers SET pin = ?2, pinned_at = ?3 WHERE key = ?1",
                params![key.as_str(), pin, at],
            )?;
            match &left {
                None => tx.execute(CLEAR_PENDING, [key.as_str()])?,
                Some(labels) => tx.execute(
                    "UPDATE servers SET pending_labels = ?2 WHERE key = ?1",
                    params![key.as_str(), labels_to_text(labels)],
                )?,
            };
            let (before, after) = (Some(Digest::of(&p.pin)), Some(Digest::of(&pin)));
            let mut event = Event::new(&at, Kind::Approve, key.as_str(), &p.label, before, after);
            event.tools = tools.to_vec();
            event.tools.sort();
            event.tools.dedup();
            events::append(tx, &event)?;
            let serial = new_lock.approval_serial;
            Ok(Approved {
                serial,
                moved,
                pending: left,
            })
        })
    }

    /// Deletes the pin of `key` (even one that no longer reads): the server is pinned afresh the
    /// next time it runs. Returns its label; `None` when it was not pinned.
    pub fn forget(&self, key: &ServerKey) -> Result<Option<String>, StoreError> {
        self.writing(|tx| {
            let Some(raw) = Self::raw(tx, key)? else {
                return Ok(None);
            };
            tx.execute("DELETE FROM servers WHERE key = ?1", [key.as_str()])?;
            let before = Some(Digest::of(&raw.pin));
            events::append(
                tx,
                &Event::new(&now(), Kind::Forget, key.as_str(), &raw.label, before, None),
            )?;
            Ok(Some(raw.label))
        })
    }

    /// Verifies the local log (every leaf and every stored root), then that each pin is the one
    /// the log last recorded for its server and that no pin vanished without a forget event.
    pub fn audit(&self) -> Result<AuditReport, StoreError> {
        let run = || -> Result<AuditReport, StoreError> {
            // One snapshot for the log and the pins.
            let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Deferred)?;
            let verified = events::verify(&tx)?;
            let mut last = std::collections::BTreeMap::new();
            for (i, e) in verified.events.iter().enumerate() {
                if matches!(e.kind, Kind::Pin | Kind::Approve | Kind::Forget) {
                    last.insert(e.server.as_str(), (i as u64, e));
                }
            }
            let mut stmt = tx.prepare(&format!("SELECT {COLUMNS} FROM servers ORDER BY key"))?;
            let raws = stmt
                .query_map([], Raw::from_row)?
                .collect::<Result<Vec<_>, _>>()?;
            let size = verified.events.len() as u64;
            let mut pinned = std::collections::BTreeSet::new();
            for raw in raws {
                let (key, p) = raw.read().map_err(|e| self.unreadable(e))?;
                let (index, agrees) = match last.get(key.as_str()) {
                    Some((i, e)) => (
                        *i,
                        e.kind != Kind::Forget && e.after == Some(Digest::of(&p.pin)),
                    ),
                    None => (size, false),
                };
                if !agrees {
                    let why =
                        format!("the pin of {key} is not the one the log last recorded for it");
                    return Err(StoreError::Audit { index, why });
                }
                pinned.insert(key.to_string());
            }
            for (server, (index, e)) in &last {
                if e.kind != Kind::Forget && !pinned.contains(*server) {
                    let why = format!(
                        "the pin of {server} is gone, and the log holds no forget event for it"
                    );
                    return Err(StoreError::Audit { index: *index, why });
                }
            }
            Ok(AuditReport {
                events: size,
                root: verified.root,
                pins: pinned.len(),
            })
        };
        run().map_err(|e| self.classify(e))
    }
}

fn exists(path: &Path) -> Result<bool, StoreError> {
    path.try_exists().map_err(|e| io_error("look for", path, e))
}

/// Creates the store: under a lock beside it, built complete in a temporary file and renamed into
/// place, so that no proxy ever opens a half-made store (which it would refuse).
fn create(home: &Path, path: &Path) -> Result<(), StoreError> {
    let mut dir = fs::DirBuilder::new();
    dir.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut dir, 0o700);
    dir.create(home).map_err(|e| io_error("create", home, e))?;
    let private = |o: &mut fs::OpenOptions| {
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(o, 0o600);
        let _ = o;
    };
    let lock_path = home.join("pins.lock");
    let mut o = fs::OpenOptions::new();
    o.create(true).truncate(false).write(true);
    private(&mut o);
    let lock = o
        .open(&lock_path)
        .map_err(|e| io_error("open", &lock_path, e))?;
    lock.lock().map_err(|e| io_error("lock", &lock_path, e))?;
    if exists(path)? {
        return Ok(());
    }
    // A journal left beside a store that was moved away would be replayed into the new one.
    for suffix in ["-wal", "-shm", "-journal"] {
        remove_stale(&PathBuf::from(format!("{}{suffix}", path.display())))?;
    }
    let tmp = home.join(format!("{DB_FILE}.new"));
    for suffix in ["", "-wal", "-shm", "-journal"] {
        remove_stale(&PathBuf::from(format!("{}{suffix}", tmp.display())))?;
    }
    let mut o = fs::OpenOptions::new();
    o.write(true).create_new(true);
    private(&mut o);
    o.open(&tmp).map_err(|e| io_error("create", &tmp, e))?;
    let conn = Connection::open_with_flags(&tmp, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
    conn.execute_batch(&format!(
        "BEGIN; {SERVERS} {} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;",
        events::SCHEMA
    ))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.close().map_err(|(_, e)| e)?;
    fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .map_err(|e| io_error("sync", &tmp, e))?;
    fs::rename(&tmp, path).map_err(|e| io_error("create", path, e))?;
    #[cfg(unix)]
    fs::File::open(home)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_error("sync", home, e))?;
    Ok(())
}

fn remove_stale(path: &Path) -> Result<(), StoreError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_error("remove", path, e)),
        _ => Ok(()),
    }
}
