//! A public server's history, from the public log through its verified record alone: the log is
//! verified first under the pinned policy (its key, and the witnesses and quorum pinned with it,
//! as the proxy and `verify --log` verify it), then each server asked about has its chain of
//! entries walked back from its last, every entry proven included in the verified tree and to be
//! that server's. Nothing is read from the log but through the record.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use pinlog_core::{Digest, ServerId};
use pinlog_log::entry::{Entry, Timestamp};
use pinlog_log::fetch::LogAt;
use pinlog_log::Hash;
use pinlog_verifier::outcome::{Severity, VerifyError};
use pinlog_verifier::public_log::PublicLog;
use pinlog_verifier::record::PublicRecord;

use crate::safe::{labels, SafeStr};

/// How many of a server's latest entries a history keeps.
pub const RECENT: usize = 20;
/// How many blobs' counts are remembered.
const COUNTS_MEMORY: usize = 4096;

/// One entry, as far as answers use it.
#[derive(Debug, Clone)]
pub struct EntryInfo {
    pub index: u64,
    pub observed_at: Timestamp,
    /// The entry's labels that pinlog defines.
    pub labels: Vec<SafeStr>,
    pub surface: Digest,
    pub blob: Digest,
    /// The package version the crawler ran, as its probe recorded it (a name: shown made safe).
    pub version: Option<String>,
}

impl EntryInfo {
    fn of((index, entry): &(u64, Entry)) -> EntryInfo {
        EntryInfo {
            index: *index,
            observed_at: entry.observed_at.clone(),
            labels: labels(entry.labels.iter().map(String::as_str)),
            surface: entry.surface,
            blob: entry.blob,
            version: entry.probe.package_version.clone(),
        }
    }
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

/// A verified log, asked by server.
pub struct LogIndex {
    pub origin: String,
    pub size: u64,
    pub root: Hash,
    /// The verified log, the one thing read; its signed checkpoint, as verified, tells whether
    /// the log still serves the same and needs no second verification.
    pub record: PublicRecord<LogAt>,
    /// The servers the log holds, sorted by identity.
    servers: Vec<ServerId>,
    /// Counts already read, by blob digest.
    counted: Mutex<HashMap<Digest, Counts>>,
}

/// Why there is no index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogProblem {
    /// The copy is proven bad: `rule` is a stable rule name (docs/SPEC-log.md), `at` where.
    Bad { rule: &'static str, at: String },
    /// The log could not be read (no checkpoint, an I/O error, not in time): nothing was proven.
    /// `why` is for the operator's standard error, never for an answer.
    Unreadable { at: String, why: String },
    /// The log changed after it was verified: what was read next is not what was verified.
    Moved,
}

/// What a lookup of a server in the index found.
pub enum Found {
    One(History),
    /// The name without its kind matches servers of several kinds.
    Several(Vec<ServerId>),
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
                at: e.at.to_string(),
            },
            Severity::Unreadable => LogProblem::Unreadable {
                at: e.at.to_string(),
                why: e.detail,
            },
        }
    }
}

/// Verifies the public log under its pinned policy, within its deadline.
pub fn load(log: &PublicLog) -> Result<LogIndex, LogProblem> {
    let record = log.open()?;
    let checkpoint = record.checkpoint().clone();
    let mut servers = record.servers();
    servers.sort_unstable_by(|a, b| a.as_str().cmp(b.as_str()));
    Ok(LogIndex {
        origin: checkpoint.origin.clone(),
        size: checkpoint.size,
        root: checkpoint.root,
        record,
        servers,
        counted: Mutex::new(HashMap::new()),
    })
}

/// A failure reading what was verified: the log changed since (a copy replaced, a host that
/// serves another tree), not a verdict on it.
fn moved(_: VerifyError) -> LogProblem {
    LogProblem::Moved
}

impl LogIndex {
    /// The server `asked` names: its identity (`npm:@scope/name`), or its name without the kind
    /// when only one kind has it.
    pub fn find(&self, asked: &str) -> Result<Found, LogProblem> {
        let by_id = self.servers.iter().find(|id| id.as_str() == asked);
        let by_name: Vec<&ServerId> = match by_id {
            Some(id) => vec![id],
            None => self
                .servers
                .iter()
                .filter(|id| id.name() == asked)
                .collect(),
        };
        match by_name.as_slice() {
            [] => Ok(Found::None),
            [one] => self.history(one).map(Found::One),
            several => Ok(Found::Several(
                several.iter().map(|&id| id.clone()).collect(),
            )),
        }
    }

    fn history(&self, id: &ServerId) -> Result<History, LogProblem> {
        let walked = self
            .record
            .history(id, RECENT)
            .map_err(moved)?
            .ok_or(LogProblem::Moved)?;
        Ok(History {
            id: id.clone(),
            entries: walked.entries,
            first: EntryInfo::of(&walked.first),
            recent: walked.newest.iter().rev().map(EntryInfo::of).collect(),
        })
    }

    pub fn server_count(&self) -> usize {
        self.servers.len()
    }

    /// The servers whose identity holds `fragment`, ignoring ASCII case, best first: those whose
    /// name's last part is the fragment, then those where it is a whole word of that part
    /// (`git` in `mcp-server-git`), then the rest; shorter identities first within each.
    pub fn search(&self, fragment: &str) -> Vec<&ServerId> {
        let q = fragment.trim().to_ascii_lowercase();
        if q.is_empty() {
            return Vec::new();
        }
        let mut found: Vec<(u8, &ServerId)> = self
            .servers
            .iter()
            .filter_map(|id| relevance(id, &q).map(|r| (r, id)))
            .collect();
        found.sort_by(|(ra, a), (rb, b)| {
            ra.cmp(rb)
                .then(a.as_str().len().cmp(&b.as_str().len()))
                .then(a.as_str().cmp(b.as_str()))
        });
        found.into_iter().map(|(_, id)| id).collect()
    }

    /// What a name the log does not hold may have meant: the servers holding it (without a kind
    /// prefix it may carry), else its last part (`@scope/name` without the scope).
    pub fn did_you_mean(&self, asked: &str) -> Vec<&ServerId> {
        let name = asked
            .split_once(':')
            .filter(|(kind, _)| ["npm", "pypi", "oci", "remote", "registry"].contains(kind))
            .map_or(asked, |(_, name)| name);
        let found = self.search(name);
        if !found.is_empty() {
            return found;
        }
        match name.trim_end_matches('/').rsplit_once('/') {
            Some((_, last)) => self.search(last),
            None => found,
        }
    }

    /// Whether no other server in the log has the short slug of `id`: then the site gives it
    /// that slug (a long one only goes to a server whose short slug another holds).
    pub fn slug_is_short(&self, id: &ServerId) -> bool {
        let short = pinlog_core::slug::slug(id);
        !self
            .servers
            .iter()
            .any(|other| other != id && pinlog_core::slug::slug(other) == short)
    }

    /// How many tools and prompts the surface of `entry` has, counted from its blob (read through
    /// the record, held to the entry's `blob` digest); `None` when the blob cannot be read.
    /// Nothing of the blob's text leaves this function.
    pub fn counts(&self, entry: &EntryInfo) -> Option<Counts> {
        let memory = || self.counted.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = memory().get(&entry.blob) {
            return Some(*c);
        }
        let parts = self.record.blob(&entry.blob).ok()?.parts();
        let counts = Counts {
            tools: parts.tools.len() as u64,
            prompts: parts.prompts.len() as u64,
            instructions: parts.instructions.is_some(),
        };
        let mut m = memory();
        if m.len() >= COUNTS_MEMORY {
            m.clear();
        }
        m.insert(entry.blob, counts);
        Some(counts)
    }
}

/// How well `id` matches the lowercase fragment `q`: 0 its name's last part is `q`, 1 `q` is a
/// whole word of that part, 2 anywhere in the identity; `None` when it does not hold it.
fn relevance(id: &ServerId, q: &str) -> Option<u8> {
    let whole = id.as_str().to_ascii_lowercase();
    if !whole.contains(q) {
        return None;
    }
    let name = id.name().to_ascii_lowercase();
    let last = name.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    if last == q {
        return Some(0);
    }
    if last.split(['-', '_', '.']).any(|word| word == q) {
        return Some(1);
    }
    Some(2)
}
