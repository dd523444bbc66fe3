//! A public server's history, from a local copy of the published log: verified first against
//! the pinned key (every rule of `verify-log`, as the proxy's public record verifies it), then
//! read once more into a small index, whose root must be the verified checkpoint's: what is
//! indexed is what was verified, even if the directory changed in between. The verified record
//! is kept beside the index, to compare a pin with as the proxy compares what it is served.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use pinlog_core::json::{self, Limits, Value};
use pinlog_core::{Digest, ServerId};
use pinlog_log::entry::{Entry, Timestamp};
use pinlog_log::in_dir;
use pinlog_log::merkle::CompactRange;
use pinlog_log::note::{VerifierKey, MAX_NOTE};
use pinlog_log::source::{Dir, FileError, LogSource};
use pinlog_log::tile_reader::BundleReader;
use pinlog_log::tiles::TileId;
use pinlog_log::Hash;
use pinlog_verifier::checkpoint::Policy;
use pinlog_verifier::outcome::{Location, Severity, VerifyError};
use pinlog_verifier::record::PublicRecord;
use pinlog_verifier::verify_log::Options;

use crate::safe::{labels, SafeStr};

/// How many of a server's latest entries the index keeps.
pub const RECENT: usize = 20;
/// The largest surface blob read.
const MAX_BLOB: u64 = 64 << 20;
/// How many blobs' counts are remembered.
const COUNTS_MEMORY: usize = 4096;

/// Where the log is and the key it must be signed with.
#[derive(Debug, Clone)]
pub struct LogConfig {
    pub dir: PathBuf,
    /// The log's key (or keys, during a rotation), pinned by whoever started lookup.
    pub keys: Vec<VerifierKey>,
}

/// One entry, as far as answers use it.
#[derive(Debug, Clone)]
pub struct EntryInfo {
    pub index: u64,
    pub observed_at: Timestamp,
    /// The entry's labels that pinlog defines.
    pub labels: Vec<SafeStr>,
    pub surface: Digest,
    pub blob: Digest,
}

/// One server's entries: how many, the first, and the latest [`RECENT`].
#[derive(Debug, Clone)]
pub struct History {
    pub id: ServerId,
    pub entries: u64,
    pub first: EntryInfo,
    /// Oldest first; the last is the server's current surface.
    pub recent: VecDeque<EntryInfo>,
}

/// The log's directory, owned: the record reads it for as long as the index is kept.
pub struct LogDir(PathBuf);

impl LogSource for LogDir {
    fn read_into(&self, rel: &str, max: u64, buf: &mut Vec<u8>) -> Result<(), FileError> {
        Dir(&self.0).read_into(rel, max, buf)
    }

    fn older_partials(&self, tile: &TileId) -> std::io::Result<Vec<TileId>> {
        Dir(&self.0).older_partials(tile)
    }

    fn readers(&self) -> u64 {
        Dir(&self.0).readers()
    }

    fn locate(&self, rel: &str) -> String {
        Dir(&self.0).locate(rel)
    }
}

/// A verified log, indexed by server.
pub struct LogIndex {
    pub origin: String,
    pub size: u64,
    pub root: Hash,
    /// The verified log, to compare a surface with; its signed checkpoint, as verified, tells
    /// whether a copy still reads the same and needs no second verification.
    pub record: PublicRecord<LogDir>,
    servers: BTreeMap<String, History>,
    /// Counts already read, by blob digest.
    counted: Mutex<HashMap<Digest, Counts>>,
}

/// Why there is no index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogProblem {
    /// The copy is proven bad: `rule` is a stable rule name (docs/SPEC-log.md), `at` where.
    Bad { rule: &'static str, at: String },
    /// The copy could not be read (no checkpoint, an I/O error): nothing was proven.
    Unreadable { at: String },
    /// The directory changed while it was read: what was read is not what was verified.
    Moved,
}

/// What a lookup of a server in the index found.
pub enum Found<'a> {
    One(&'a History),
    /// The name without its kind matches servers of several kinds.
    Several(Vec<&'a ServerId>),
    None,
}

/// What a surface blob counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub tools: u64,
    pub prompts: u64,
    pub instructions: bool,
}

impl From<VerifyError> for LogProblem {
    fn from(e: VerifyError) -> LogProblem {
        match e.severity {
            Severity::Bad => LogProblem::Bad {
                rule: e.rule,
                at: at_text(&e.at),
            },
            Severity::Unreadable => LogProblem::Unreadable { at: at_text(&e.at) },
        }
    }
}

fn at_text(at: &Location) -> String {
    match at {
        Location::Checkpoint => "checkpoint".into(),
        Location::Entry(n) => format!("entry {n}"),
        Location::File(path) => path.clone(),
        Location::State => "state file".into(),
        Location::Proof => "proof file".into(),
    }
}

/// Verifies the log in `config.dir` against its pinned key, then indexes it.
pub fn load(config: &LogConfig) -> Result<LogIndex, LogProblem> {
    let options = Options {
        policy: Policy {
            log_keys: config.keys.clone(),
            witnesses: Vec::new(),
            quorum: 0,
            witness_policy: None,
        },
        state: None,
        generic: false,
    };
    let record = PublicRecord::open(LogDir(config.dir.clone()), &options)?;
    let checkpoint = record.checkpoint().clone();
    let size = checkpoint.size;
    let mut range = CompactRange::default();
    let mut servers: BTreeMap<String, History> = BTreeMap::new();
    for read in BundleReader::new(Dir(&config.dir), size).entries() {
        let (index, body) = read.map_err(|_| LogProblem::Moved)?;
        range.push(Hash::leaf(&body), |_, _, _| {});
        let entry = Entry::read(&body).map_err(|_| LogProblem::Moved)?;
        let info = EntryInfo {
            index,
            observed_at: entry.observed_at.clone(),
            labels: labels(entry.labels.iter().map(String::as_str)),
            surface: entry.surface,
            blob: entry.blob,
        };
        match servers.get_mut(entry.server.as_str()) {
            Some(h) => {
                h.entries += 1;
                if h.recent.len() == RECENT {
                    h.recent.pop_front();
                }
                h.recent.push_back(info);
            }
            None => {
                let h = History {
                    id: entry.server.clone(),
                    entries: 1,
                    first: info.clone(),
                    recent: VecDeque::from([info]),
                };
                servers.insert(entry.server.as_str().to_string(), h);
            }
        }
    }
    if range.size() != size || range.root() != checkpoint.root {
        return Err(LogProblem::Moved);
    }
    Ok(LogIndex {
        origin: checkpoint.origin.clone(),
        size,
        root: checkpoint.root,
        record,
        servers,
        counted: Mutex::new(HashMap::new()),
    })
}

/// The checkpoint now in `dir`, as text, to compare with [`LogIndex::note`].
pub fn current_note(dir: &Path) -> Option<String> {
    in_dir::read(dir, "checkpoint", MAX_NOTE as u64)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

impl LogIndex {
    /// The server `asked` names: its identity (`npm:@scope/name`), or its name without the kind
    /// when only one kind has it.
    pub fn find(&self, asked: &str) -> Found<'_> {
        if let Some(h) = self.servers.get(asked) {
            return Found::One(h);
        }
        let by_name: Vec<&History> = self
            .servers
            .values()
            .filter(|h| h.id.name() == asked)
            .collect();
        match by_name.as_slice() {
            [] => Found::None,
            [one] => Found::One(one),
            several => Found::Several(several.iter().map(|h| &h.id).collect()),
        }
    }

    pub fn server_count(&self) -> usize {
        self.servers.len()
    }

    /// How many tools and prompts the surface of `entry` has, counted from its blob (whose bytes
    /// must hash to the entry's `blob`); `None` when the blob cannot be read. Nothing of the
    /// blob's text leaves this function.
    pub fn counts(&self, dir: &Path, entry: &EntryInfo) -> Option<Counts> {
        let memory = || self.counted.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = memory().get(&entry.blob) {
            return Some(*c);
        }
        let counts = Self::count(dir, entry)?;
        let mut m = memory();
        if m.len() >= COUNTS_MEMORY {
            m.clear();
        }
        m.insert(entry.blob, counts);
        Some(counts)
    }

    fn count(dir: &Path, entry: &EntryInfo) -> Option<Counts> {
        let rel = format!("blobs/sha256/{}", entry.blob.hex());
        let bytes = in_dir::read(dir, &rel, MAX_BLOB).ok()?;
        if Digest::of(&bytes) != entry.blob {
            return None;
        }
        let value = json::parse(&bytes, Limits::default()).ok()?;
        let o = value.as_object()?;
        let len = |name: &str| {
            o.get(name)
                .and_then(Value::as_array)
                .map(|a| a.len() as u64)
        };
        Some(Counts {
            tools: len("tools")?,
            prompts: len("prompts")?,
            instructions: matches!(o.get("instructions"), Some(Value::String(_))),
        })
    }
}
