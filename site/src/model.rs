//! What the site is made from: the entries of the published log (up to its checkpoint, read from
//! the store and checked against the checkpoint's root), their surface blobs, and each server's
//! liveness from the store.

use std::collections::BTreeMap;
use std::path::Path;

use pinlog_core::json::{self, Limits, Value};
use pinlog_core::ServerId;
use pinlog_log::checkpoint::Checkpoint;
use pinlog_log::entry::Entry;
use pinlog_log::hash::Hash;
use pinlog_log::note::{Note, VerifierKey};
use pinlog_log::publish::CHECKPOINT;
use pinlog_log::store::{Liveness, Store, StoreError};

use crate::coverage::{self, Coverage};
use crate::tree::Tree;
use pinlog_core::slug::{long_slug, slug};

/// One published entry.
pub struct Record {
    pub index: u64,
    pub entry: Entry,
    /// The entry's bytes, as bundled.
    pub body: Vec<u8>,
}

/// One server as the site shows it.
pub struct Server {
    pub id: ServerId,
    pub slug: String,
    pub live: Liveness,
    /// Indexes into [`Model::records`], oldest first.
    pub records: Vec<usize>,
}

pub struct Model {
    pub origin: String,
    pub checkpoint: Checkpoint,
    /// The signed checkpoint, verbatim.
    pub checkpoint_note: String,
    pub vkey: Option<String>,
    pub records: Vec<Record>,
    pub servers: Vec<Server>,
    pub tree: Tree,
    /// When the crawler's runs finished, oldest first, where the store has them.
    pub runs: Vec<String>,
    /// How many servers looked at each month were read, and why the others were not.
    pub coverage: BTreeMap<String, Coverage>,
}

#[derive(Debug)]
pub enum ModelError {
    Store(StoreError),
    Log(String),
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelError::Store(e) => e.fmt(f),
            ModelError::Log(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ModelError {}

impl From<StoreError> for ModelError {
    fn from(e: StoreError) -> Self {
        ModelError::Store(e)
    }
}

impl Model {
    /// Reads the published checkpoint in `log` (checked against `vkey` when given) and the
    /// store's entries up to it, which must hash to its root.
    pub fn load(db: &Path, log: &Path, vkey: Option<&str>) -> Result<Model, ModelError> {
        let store = Store::open(db)?;
        let origin = store.origin()?;
        let path = log.join(CHECKPOINT);
        let bytes = pinlog_log::in_dir::read(log, CHECKPOINT, pinlog_log::note::MAX_NOTE as u64)
            .map_err(|e| {
                ModelError::Log(format!(
                    "cannot read {}: {e}; publish the log first",
                    path.display()
                ))
            })?;
        let note =
            Note::parse(&bytes).map_err(|e| ModelError::Log(format!("{}: {e}", path.display())))?;
        if let Some(v) = vkey {
            let key =
                VerifierKey::parse(v).map_err(|e| ModelError::Log(format!("the vkey: {e}")))?;
            note.verify(&[key]).map_err(|e| {
                ModelError::Log(format!(
                    "{} is not signed by the vkey given: {e}",
                    path.display()
                ))
            })?;
        }
        let checkpoint = Checkpoint::parse(&note.text)
            .map_err(|e| ModelError::Log(format!("{}: {e}", path.display())))?;
        if checkpoint.origin != origin {
            return Err(ModelError::Log(format!(
                "{} is the checkpoint of {:?}, the store holds {origin:?}",
                path.display(),
                checkpoint.origin
            )));
        }
        let mut records = Vec::new();
        let mut leaves = Vec::new();
        // The first entry of each server that the checkpoint does not cover yet.
        let mut unpublished: BTreeMap<ServerId, String> = BTreeMap::new();
        store.for_each_entry::<ModelError>(0, true, |e| {
            let entry = Entry::read(&e.body)
                .map_err(|err| ModelError::Log(format!("entry {}: {err}", e.index)))?;
            if e.index >= checkpoint.size {
                unpublished
                    .entry(entry.server.clone())
                    .or_insert_with(|| entry.observed_at.to_string());
                return Ok(());
            }
            // The tree is made from the bytes shown, not from the store's word for their hash.
            let leaf = Hash::leaf(&e.body);
            if leaf != e.leaf {
                return Err(ModelError::Log(format!(
                    "entry {}: its bytes do not hash to the leaf the store records",
                    e.index
                )));
            }
            leaves.push(leaf);
            records.push(Record {
                index: e.index,
                entry,
                body: e.body,
            });
            Ok(())
        })?;
        if (records.len() as u64) < checkpoint.size {
            return Err(ModelError::Log(format!(
                "the checkpoint covers {} entries, the store has {}",
                checkpoint.size,
                records.len()
            )));
        }
        let tree = Tree::new(leaves);
        if tree.root() != checkpoint.root {
            return Err(ModelError::Log(format!(
                "the store's first {} entries do not hash to the published root {}: this store did \
                 not publish {}",
                checkpoint.size,
                checkpoint.root.to_base64(),
                log.display()
            )));
        }
        let mut by_server: BTreeMap<ServerId, Vec<usize>> = BTreeMap::new();
        for (i, r) in records.iter().enumerate() {
            by_server.entry(r.entry.server.clone()).or_default().push(i);
        }
        let mut servers = Vec::new();
        for (id, mut live) in store.all_liveness()? {
            let mine = by_server.remove(&id).unwrap_or_default();
            if unpublished.contains_key(&id) {
                let last = mine
                    .last()
                    .map(|&i| records[i].entry.observed_at.to_string());
                published_liveness(&mut live, last);
            }
            servers.push(Server {
                slug: String::new(),
                id,
                live,
                records: mine,
            });
        }
        // An entry whose server has no liveness row (a log appended by hand) still has a page.
        for (id, records) in by_server {
            servers.push(Server {
                slug: String::new(),
                id,
                live: Liveness::default(),
                records,
            });
        }
        issue_slugs(&mut servers, &records)?;
        servers.sort_by(|a, b| a.id.cmp(&b.id));
        let runs = crawl_runs(db);
        let coverage = coverage::by_month(db);
        Ok(Model {
            origin,
            checkpoint_note: String::from_utf8_lossy(&bytes).into_owned(),
            checkpoint,
            vkey: vkey.map(str::to_string),
            records,
            servers,
            tree,
            runs,
            coverage,
        })
    }

    /// The surface blob of a record, parsed; a blob whose bytes do not hash to the entry's
    /// `blob` is refused, never shown.
    pub fn blob(
        &self,
        store: &Store,
        record: &Record,
    ) -> Result<Option<Value<'static>>, ModelError> {
        let Some(bytes) = store.blob(&record.entry.blob)? else {
            return Ok(None);
        };
        if pinlog_core::Digest::of(&bytes) != record.entry.blob {
            return Err(ModelError::Log(format!(
                "the store's blob {} does not hash to that digest",
                record.entry.blob
            )));
        }
        Ok(json::parse(&bytes, Limits::default())
            .ok()
            .map(Value::into_owned))
    }
}

/// The liveness of a server with entries the checkpoint does not cover yet, as far as the
/// published log backs it: a good look later than its last published entry may have seen the
/// unpublished surface, so the last good look shown is that entry's own time, and the window of a
/// change not yet published is not shown.
fn published_liveness(live: &mut Liveness, last_published: Option<String>) {
    live.last_ok = last_published.clone();
    live.last_change = last_published;
    live.look_before_change = None;
    live.last_index = None;
}

/// When the crawler's runs finished, if the store holds its table.
fn crawl_runs(db: &Path) -> Vec<String> {
    let Ok(conn) =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return Vec::new();
    };
    let Ok(mut stmt) = conn
        .prepare("SELECT finished FROM crawl_runs WHERE finished IS NOT NULL ORDER BY finished")
    else {
        return Vec::new();
    };
    stmt.query_map([], |r| r.get(0))
        .map(|rows| rows.filter_map(Result::ok).collect())
        .unwrap_or_default()
}

/// Gives each server its slug. Servers are taken in the order they were first seen (the store's
/// `first_seen`, else the time of the server's first entry; then by identity): each gets its short
/// slug unless a server taken before holds it, and then its long one. A server seen later can
/// never take a slug from one seen before, so a published slug never changes; should even the
/// long one be held, nothing is built rather than one server's files written over another's.
fn issue_slugs(servers: &mut [Server], records: &[Record]) -> Result<(), ModelError> {
    let first_seen = |s: &Server| -> String {
        s.live.first_seen.clone().unwrap_or_else(|| {
            s.records
                .first()
                .map(|&i| records[i].entry.observed_at.to_string())
                .unwrap_or_default()
        })
    };
    let mut order: Vec<(String, usize)> = servers
        .iter()
        .enumerate()
        .map(|(i, s)| (first_seen(s), i))
        .collect();
    order.sort_by(|(ta, a), (tb, b)| ta.cmp(tb).then_with(|| servers[*a].id.cmp(&servers[*b].id)));
    let mut issued: BTreeMap<String, usize> = BTreeMap::new();
    for (_, i) in order {
        let id = &servers[i].id;
        let Some(free) = [slug(id), long_slug(id)]
            .into_iter()
            .find(|s| !issued.contains_key(s))
        else {
            let other = issued[&long_slug(id)];
            return Err(ModelError::Log(format!(
                "{} and {} would share the slug {}; refusing to write one's pages over the \
                 other's",
                pinlog_core::render::quoted(servers[other].id.as_str(), 128),
                pinlog_core::render::quoted(id.as_str(), 128),
                long_slug(id)
            )));
        };
        issued.insert(free.clone(), i);
        servers[i].slug = free;
    }
    Ok(())
}
