//! The local log: every pin, drift, release, approval and forget of the pin store, appended as a
//! leaf of an RFC 9162 Merkle tree (the engine of the public log, `pinlog_log::merkle`).
//!
//! An event is one canonical JSON record (RFC 8785: members sorted, no whitespace):
//! `{"after","at","before","kind","label","labels","server","tools"}`, where `before` and `after`
//! are `sha256:<hex>` digests or null (see [`Event`]). Its leaf is `SHA-256(0x00 || record)`. After
//! every append the tree's root is stored in `heads` beside the new size, in the same
//! transaction, so that `audit` can recompute every leaf and every root and name the first event
//! that no longer agrees with what was recorded when it was appended.

use pinlog_core::json::{self, Limits, Value};
use pinlog_core::Digest;
use pinlog_log::merkle::CompactRange;
use pinlog_log::Hash;
use rusqlite::{params, Connection, OptionalExtension};

/// What happened to a server's pin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// First use: `after` is the digest of the pin's bytes.
    Pin,
    /// The server served another surface: `before` the pin, `after` the pending surface.
    Drift,
    /// The server served the approved surface again: `before` the pending surface, `after` the pin.
    Release,
    /// Pending changes taken into the pin: `before` and `after` the two pins' digests.
    Approve,
    /// The pin was deleted: `before` its digest.
    Forget,
    /// The served surface was compared with the public log: `after` its digest, `labels` the
    /// outcome (`public-matches`, `public-differs`, `public-absent`) and, for a difference, the
    /// change labels.
    Public,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::Pin,
        Kind::Drift,
        Kind::Release,
        Kind::Approve,
        Kind::Forget,
        Kind::Public,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Pin => "pin",
            Kind::Drift => "drift",
            Kind::Release => "release",
            Kind::Approve => "approve",
            Kind::Forget => "forget",
            Kind::Public => "public",
        }
    }
}

/// One record of the local log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub at: String,
    pub kind: Kind,
    /// The server's key (never its command line).
    pub server: String,
    /// The server's label when the event happened: untrusted text, shown rendered safe.
    pub label: String,
    pub before: Option<Digest>,
    pub after: Option<Digest>,
    /// The policies and change labels of a drift (fixed tokens).
    pub labels: Vec<String>,
    /// The tools an approval named; empty when it took every pending change.
    pub tools: Vec<String>,
}

fn write_digest(out: &mut Vec<u8>, d: &Option<Digest>) {
    match d {
        Some(d) => json::write_string(out, &d.to_string()),
        None => out.extend_from_slice(b"null"),
    }
}

impl Event {
    /// An event without labels or tools.
    pub fn new(
        at: &str,
        kind: Kind,
        server: &str,
        label: &str,
        before: Option<Digest>,
        after: Option<Digest>,
    ) -> Event {
        let (at, server, label) = (at.to_string(), server.to_string(), label.to_string());
        let (labels, tools) = (Vec::new(), Vec::new());
        Event {
            at,
            kind,
            server,
            label,
            before,
            after,
            labels,
            tools,
        }
    }

    /// The canonical record: member names are ASCII, so byte order is RFC 8785's UTF-16 order.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut o = Vec::new();
        o.extend_from_slice(b"{\"after\":");
        write_digest(&mut o, &self.after);
        o.extend_from_slice(b",\"at\":");
        json::write_string(&mut o, &self.at);
        o.extend_from_slice(b",\"before\":");
        write_digest(&mut o, &self.before);
        o.extend_from_slice(b",\"kind\":");
        json::write_string(&mut o, self.kind.as_str());
        o.extend_from_slice(b",\"label\":");
        json::write_string(&mut o, &self.label);
        o.extend_from_slice(b",\"labels\":");
        json::write_strings(&mut o, self.labels.iter().map(String::as_str));
        o.extend_from_slice(b",\"server\":");
        json::write_string(&mut o, &self.server);
        o.extend_from_slice(b",\"tools\":");
        json::write_strings(&mut o, self.tools.iter().map(String::as_str));
        o.push(b'}');
        o
    }

    /// Reads a record, which must be exactly what [`Event::to_bytes`] writes for it: a record
    /// written any other way was not written by pinlog.
    pub fn read(bytes: &[u8]) -> Result<Event, String> {
        let v = json::parse(bytes, Limits::default()).map_err(|e| e.to_string())?;
        let o = v.as_object().ok_or("not an object")?;
        let text = |name: &str| o.get(name).and_then(Value::as_str).map(str::to_string);
        let digest = |name: &str| match o.get(name) {
            Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => s
                .parse()
                .map(Some)
                .map_err(|_| format!("{name} is not a digest")),
            _ => Err(format!("{name} is missing")),
        };
        let strings = |name: &str| {
            o.get(name)
                .and_then(Value::as_array)
                .and_then(|a| a.iter().map(|s| s.as_str().map(str::to_string)).collect())
                .ok_or(format!("{name} is not an array of strings"))
        };
        let kind = text("kind").and_then(|k| Kind::ALL.into_iter().find(|x| x.as_str() == k));
        let event = Event {
            at: text("at").ok_or("at is missing")?,
            kind: kind.ok_or("kind is not one pinlog writes")?,
            server: text("server").ok_or("server is missing")?,
            label: text("label").ok_or("label is missing")?,
            before: digest("before")?,
            after: digest("after")?,
            labels: strings("labels")?,
            tools: strings("tools")?,
        };
        if event.to_bytes() != bytes {
            return Err("the record is not in the form pinlog writes".into());
        }
        Ok(event)
    }
}

/// The tables of the local log.
pub(crate) const SCHEMA: &str = "
    CREATE TABLE events (idx INTEGER PRIMARY KEY, record BLOB NOT NULL);
    CREATE TABLE heads (size INTEGER PRIMARY KEY, root BLOB NOT NULL);";

/// Every record, in order, after checking that the indexes run 0, 1, 2… without a gap.
fn records(conn: &Connection) -> Result<Vec<Vec<u8>>, LogError> {
    let mut stmt = conn.prepare("SELECT idx, record FROM events ORDER BY idx")?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let idx: i64 = row.get(0)?;
        if idx != out.len() as i64 {
            return Err(LogError::Bad {
                index: out.len() as u64,
                why: format!("event {} is missing (the next one is {idx})", out.len()),
            });
        }
        let record = blob(row, 1)?.ok_or_else(|| LogError::Bad {
            index: out.len() as u64,
            why: format!("event {} is not stored as bytes", out.len()),
        })?;
        out.push(record);
    }
    Ok(out)
}

/// A BLOB column; `None` when the row holds another type (it was edited: pinlog writes bytes).
fn blob(row: &rusqlite::Row<'_>, column: usize) -> rusqlite::Result<Option<Vec<u8>>> {
    Ok(match row.get_ref(column)? {
        rusqlite::types::ValueRef::Blob(b) => Some(b.to_vec()),
        _ => None,
    })
}

/// Why the log could not be appended to or does not verify.
#[derive(Debug)]
pub enum LogError {
    Sql(rusqlite::Error),
    /// The first event (or head, at `index + 1` leaves) that does not agree.
    Bad {
        index: u64,
        why: String,
    },
}

impl From<rusqlite::Error> for LogError {
    fn from(e: rusqlite::Error) -> Self {
        LogError::Sql(e)
    }
}

/// The stored root after `size` events, if one was stored (empty if it is not bytes).
fn head(conn: &Connection, size: u64) -> Result<Option<Vec<u8>>, rusqlite::Error> {
    conn.query_row(
        "SELECT root FROM heads WHERE size = ?1",
        [size as i64],
        |r| Ok(blob(r, 0)?.unwrap_or_default()),
    )
    .optional()
}

/// Appends `event` inside the caller's write transaction, and stores the new head. The log must
/// verify up to its last head first: an event is never appended after a history that was
/// edited, so the damage stays visible instead of being buried under newer heads.
pub(crate) fn append(conn: &Connection, event: &Event) -> Result<u64, LogError> {
    let records = records(conn)?;
    let mut range = CompactRange::default();
    for r in &records {
        range.push(Hash::leaf(r), |_, _, _| {});
    }
    let size = records.len() as u64;
    let top: Option<(i64, Vec<u8>)> = conn
        .query_row(
            "SELECT size, root FROM heads ORDER BY size DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, blob(r, 1)?.unwrap_or_default())),
        )
        .optional()?;
    let holds = match top {
        None => size == 0,
        Some((s, root)) => s == size as i64 && root == range.root().0,
    };
    if !holds {
        return Err(LogError::Bad {
            index: size.saturating_sub(1),
            why: "the log's last head does not match its events".into(),
        });
    }
    let record = event.to_bytes();
    range.push(Hash::leaf(&record), |_, _, _| {});
    conn.execute(
        "INSERT INTO events (idx, record) VALUES (?1, ?2)",
        params![size as i64, record],
    )?;
    conn.execute(
        "INSERT INTO heads (size, root) VALUES (?1, ?2)",
        params![(size + 1) as i64, range.root().0.to_vec()],
    )?;
    Ok(size)
}

/// What a verified log holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub events: Vec<Event>,
    pub root: Hash,
}

/// Recomputes every leaf and the root at every size, and checks each against the stored head
/// (one per size, none beyond the events), and that each record reads back canonical. Run it
/// inside a read transaction, so that the events and heads are one snapshot.
pub(crate) fn verify(conn: &Connection) -> Result<Verified, LogError> {
    let records = records(conn)?;
    let heads: i64 = conn.query_row("SELECT COUNT(*) FROM heads", [], |r| r.get(0))?;
    let mut range = CompactRange::default();
    let mut events = Vec::with_capacity(records.len());
    for (i, r) in records.iter().enumerate() {
        let index = i as u64;
        let bad = |why: String| LogError::Bad { index, why };
        events.push(Event::read(r).map_err(|e| bad(format!("event {index} cannot be read: {e}")))?);
        range.push(Hash::leaf(r), |_, _, _| {});
        match head(conn, index + 1)? {
            None => return Err(bad(format!("the head after event {index} is missing"))),
            Some(root) if root != range.root().0 => {
                return Err(bad(format!(
                    "event {index} or the head after it was changed: the root recomputed over \
                     events 0..={index} is not the one recorded when event {index} was appended"
                )))
            }
            Some(_) => {}
        }
    }
    if heads as usize != records.len() {
        let index = records.len() as u64;
        return Err(LogError::Bad {
            index,
            why: format!(
                "{heads} heads for {index} events: events were deleted after their heads were \
                 recorded, or heads were added"
            ),
        });
    }
    Ok(Verified {
        events,
        root: range.root(),
    })
}
