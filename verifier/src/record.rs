//! The public record: a log verified before use, asked what it saw of one server. The proxy,
//! `verify` and `lookup` compare what this machine is served with it.
//!
//! Opening verifies the log as `verify-log` does (incrementally, with a state); what the entry
//! rules carry at the end (each server's last entry) is the index. Every entry and blob read
//! afterwards is held to the verified root: an entry by its inclusion proof from the tiles, a
//! blob by its digest. A source that changes after the check cannot change the answers.
//!
//! The index itself may come from the state's rules file (`FILE.rules`), which is the user's own
//! but lies on disk where anything can write it. So every entry an answer rests on is read and
//! held to the server asked about and the digest the index gave: a file that points a server at
//! another's entry is refused, and the whole log is read again to rebuild the index.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::SystemTime;

use pinlog_core::identity::PublicIdentity;
use pinlog_core::manifest::Manifest;
use pinlog_core::{Digest, ServerId};
use pinlog_log::checkpoint::Checkpoint;
use pinlog_log::entry::{Entry, Timestamp};
use pinlog_log::merkle;
use pinlog_log::note::MAX_NOTE;
use pinlog_log::source::LogSource;
use pinlog_log::surface_blob::{self, SurfaceBlob};
use pinlog_log::tile_reader::TileReader;
use pinlog_log::Hash;

use crate::outcome::{Location, VerifyError};
use crate::verify_log::{check, record, Options};

/// How far back a server's chain of entries is walked for the version asked about.
const VERSIONS_BACK: usize = 64;
/// The largest surface blob read.
const MAX_BLOB: u64 = 64 << 20;

/// A verified log and each server's last entry in it.
pub struct PublicRecord<S> {
    source: S,
    checkpoint: Checkpoint,
    /// The signed checkpoint as verified: a holder that finds the same text in the source knows
    /// the record is still current.
    note: String,
    /// Each server's last entry and its surface, and whether the index was built by reading
    /// every entry (rather than taken from a remembered rules file).
    index: Mutex<Index>,
    /// How the log was verified, to read it whole again.
    options: Options,
}

struct Index {
    servers: HashMap<String, (u64, Digest)>,
    whole: bool,
}

/// A server's entries, as [`PublicRecord::history`] walks them.
#[derive(Debug, Clone)]
pub struct ServerHistory {
    /// How many entries the server has.
    pub entries: u64,
    /// Its first entry.
    pub first: (u64, Entry),
    /// Its newest entries, newest first.
    pub newest: Vec<(u64, Entry)>,
}

/// The entry a comparison was made with.
#[derive(Debug, Clone)]
pub struct Observed {
    pub index: u64,
    /// When the log first saw this surface of the server.
    pub since: Timestamp,
    /// The package version the crawler ran, if any.
    pub version: Option<String>,
    pub surface: Digest,
}

impl Observed {
    /// Whole days from when the log first saw the surface to `now`; 0 for a log whose clock ran
    /// ahead of this one's.
    pub fn days(&self, now: SystemTime) -> u64 {
        now.duration_since(self.since.at())
            .map_or(0, |d| d.as_secs() / 86_400)
    }
}

/// What the public record says of a surface served here.
#[derive(Debug)]
pub enum Compared {
    /// The log's entry for the server (and version) has the same surface.
    Matches(Observed),
    /// It has another: the log's surface, to show the difference.
    Differs(Observed, SurfaceBlob),
    /// The log has no entry for the server.
    Absent,
}

/// Where one server of a manifest stands in the public record.
#[derive(Debug)]
pub struct Standing {
    /// The server's id in the manifest.
    pub server: String,
    /// Who the server is in the log, from the package the manifest records.
    pub identity: Option<PublicIdentity>,
    pub outcome: Outcome,
}

/// What the public record says of one server a manifest captured.
#[derive(Debug)]
pub enum Outcome {
    /// The server has no public identity: why not.
    NoIdentity(&'static str),
    /// The captured surface has no digest the log could hold: why not.
    NoDigest(String),
    /// The log's entry has the captured surface, unchanged for `days` whole days since it first
    /// saw it.
    Matches { observed: Observed, days: u64 },
    /// The log's entry has another surface: the log's, to show the difference.
    Differs {
        observed: Observed,
        public: SurfaceBlob,
    },
    /// The log has no entry for the server's identity.
    Absent,
}

/// The three outcomes in the words every command that compares with the log uses.
pub const MATCHES: &str = "matches the public record";
pub const DIFFERS: &str = "differs from the public record";
pub const ABSENT: &str = "not in the public record";

impl Compared {
    /// The outcome in the words every command that compares with the log uses.
    pub fn words(&self) -> &'static str {
        match self {
            Compared::Matches(_) => MATCHES,
            Compared::Differs(..) => DIFFERS,
            Compared::Absent => ABSENT,
        }
    }
}

impl Outcome {
    /// The outcome in the words every command that compares with the log uses.
    pub fn words(&self) -> &'static str {
        match self {
            Outcome::NoIdentity(_) => "no public identity",
            Outcome::NoDigest(_) => "cannot be compared with the public record",
            Outcome::Matches { .. } => MATCHES,
            Outcome::Differs { .. } => DIFFERS,
            Outcome::Absent => ABSENT,
        }
    }
}

impl<S: LogSource> PublicRecord<S> {
    /// Verifies the log `source` serves (recording it in `options.state` if given) and indexes it.
    /// pinlog's entry rules are always checked: the index is what they carry.
    pub fn open(source: S, options: &Options) -> Result<PublicRecord<S>, VerifyError> {
        let options = Options {
            generic: false,
            ..options.clone()
        };
        let (verified, carried) = check(&source, &options, |_, _| {})?;
        if let Some(state) = &options.state {
            record(state, &verified, carried.as_ref())?;
        }
        let index = Index {
            servers: carried.map(|c| c.servers).unwrap_or_default(),
            whole: verified.checked_from == 0,
        };
        Ok(PublicRecord {
            source,
            checkpoint: verified.opened.checkpoint,
            note: verified.opened.note_text,
            index: Mutex::new(index),
            options,
        })
    }

    /// Reads every entry again to rebuild the index, and replaces the remembered rules with what
    /// this reading carries. The tree must still be the one verified: the answers are held to it.
    fn reindex(&self, index: &mut Index) -> Result<(), VerifyError> {
        let whole = Options {
            state: None,
            ..self.options.clone()
        };
        let (verified, carried) = check(&self.source, &whole, |_, _| {})?;
        let opened = &verified.opened.checkpoint;
        if opened.size != self.checkpoint.size || opened.root != self.checkpoint.root {
            return Err(VerifyError::unreadable(
                Location::Checkpoint,
                "the log moved on while it was being read again; open it anew",
            ));
        }
        if let Some(state) = &self.options.state {
            record(state, &verified, carried.as_ref())?;
        }
        index.servers = carried.map(|c| c.servers).unwrap_or_default();
        index.whole = true;
        Ok(())
    }

    /// The servers the log holds an entry for, by identity, in no particular order.
    pub fn servers(&self) -> Vec<ServerId> {
        let index = self.index.lock().unwrap_or_else(|e| e.into_inner());
        index
            .servers
            .keys()
            .filter_map(|k| k.parse().ok())
            .collect()
    }

    /// The last entry of `server`, proven included and proven to be that server's with the surface
    /// the index gave; a rules file that says otherwise is refused and the log read whole.
    fn last(
        &self,
        tiles: &mut TileReader<&S>,
        server: &ServerId,
    ) -> Result<Option<(u64, Entry)>, VerifyError> {
        let mut index = self.index.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let Some(&(at, surface)) = index.servers.get(server.as_str()) else {
                return Ok(None);
            };
            let (n, entry) = self.entry(tiles, at)?;
            if entry.server == *server && entry.surface == surface {
                return Ok(Some((n, entry)));
            }
            if index.whole {
                return Err(VerifyError::bad(
                    Location::Entry(at),
                    "record-index",
                    format!(
                        "the index names entry {at} as the last of {server}, but it is not: \
                         the log verified, yet its index does not match it"
                    ),
                ));
            }
            // Only the remembered rules file can be wrong here: the log read whole says.
            self.reindex(&mut index)?;
        }
    }

    /// The checkpoint the record was verified at.
    pub fn checkpoint(&self) -> &Checkpoint {
        &self.checkpoint
    }

    /// The signed checkpoint as it was verified, in full.
    pub fn note(&self) -> &str {
        &self.note
    }

    /// Compares `served`, the surface digest of what this machine is served by `server` at
    /// `version`, with the log: its latest entry for the server with that version, else its latest
    /// entry for the server.
    pub fn compare(
        &self,
        server: &ServerId,
        version: Option<&str>,
        served: &Digest,
    ) -> Result<Compared, VerifyError> {
        let mut tiles = TileReader::new(&self.source, self.checkpoint.size);
        let Some(latest) = self.last(&mut tiles, server)? else {
            return Ok(Compared::Absent);
        };
        let mut chosen = latest.clone();
        if let Some(v) = version {
            let mut at = Some(latest.clone());
            for _ in 0..VERSIONS_BACK {
                let Some((_, e)) = &at else { break };
                if e.probe.package_version.as_deref() == Some(v) {
                    chosen = at.clone().expect("just matched");
                    break;
                }
                at = match &e.previous {
                    Some(p) => Some(self.previous(&mut tiles, server, p.index)?),
                    None => None,
                };
            }
        }
        let (index, entry) = chosen;
        let observed = Observed {
            index,
            since: entry.observed_at.clone(),
            version: entry.probe.package_version.clone(),
            surface: entry.surface,
        };
        if entry.surface == *served {
            return Ok(Compared::Matches(observed));
        }
        Ok(Compared::Differs(observed, self.blob(&entry.blob)?))
    }

    /// Where each server of `manifest` stands in the record, in the manifest's order; `now` counts
    /// the days a match has been unchanged. The log names a server by its package, so a server
    /// whose manifest entry records none has no identity to look up.
    pub fn standings(
        &self,
        manifest: &Manifest<'_>,
        now: SystemTime,
    ) -> Result<Vec<Standing>, VerifyError> {
        let mut out = Vec::with_capacity(manifest.servers.len());
        for s in &manifest.servers {
            let identity = s.package.as_ref().and_then(PublicIdentity::of_package);
            let outcome = match (&s.package, &identity) {
                (None, _) => Outcome::NoIdentity("the manifest records no package for it"),
                (Some(_), None) => {
                    Outcome::NoIdentity("its package name is not one the log can hold")
                }
                (Some(_), Some(id)) => {
                    match surface_blob::build(s.instructions.as_deref(), &s.prompts, &s.tools) {
                        Err(e) => Outcome::NoDigest(e.to_string()),
                        Ok(served) => {
                            match self.compare(&id.id, id.version.as_deref(), &served.surface())? {
                                Compared::Matches(observed) => Outcome::Matches {
                                    days: observed.days(now),
                                    observed,
                                },
                                Compared::Differs(observed, public) => {
                                    Outcome::Differs { observed, public }
                                }
                                Compared::Absent => Outcome::Absent,
                            }
                        }
                    }
                }
            };
            out.push(Standing {
                server: s.id.clone(),
                identity,
                outcome,
            });
        }
        Ok(out)
    }

    /// `server`'s entries, newest first, as far back as its chain goes: each one proven
    /// included and to be that server's, each link to an earlier entry than the last. `keep`
    /// is how many of the newest are returned with the first; `None` for a server the log does
    /// not hold.
    pub fn history(
        &self,
        server: &ServerId,
        keep: usize,
    ) -> Result<Option<ServerHistory>, VerifyError> {
        let mut tiles = TileReader::new(&self.source, self.checkpoint.size);
        let Some(last) = self.last(&mut tiles, server)? else {
            return Ok(None);
        };
        let mut newest = vec![last.clone()];
        let (mut count, mut at) = (1u64, last);
        while let Some(p) = at.1.previous.as_ref().map(|p| p.index) {
            if p >= at.0 {
                return Err(VerifyError::bad(
                    Location::Entry(at.0),
                    "entry-previous",
                    format!(
                        "entry {} names entry {p}, not an earlier one, as its previous",
                        at.0
                    ),
                ));
            }
            at = self.previous(&mut tiles, server, p)?;
            count += 1;
            if newest.len() < keep {
                newest.push(at.clone());
            }
        }
        Ok(Some(ServerHistory {
            entries: count,
            first: at,
            newest,
        }))
    }

    /// The surface blob `digest` names, its bytes held to the digest.
    pub fn blob(&self, digest: &Digest) -> Result<SurfaceBlob, VerifyError> {
        let rel = format!("blobs/sha256/{}", digest.hex());
        let at = || Location::File(rel.clone());
        let bytes = self
            .source
            .read(&rel, MAX_BLOB)
            .map_err(|e| VerifyError::unreadable(at(), format!("cannot read {rel}: {e}")))?;
        if Digest::of(&bytes) != *digest {
            return Err(VerifyError::bad(
                at(),
                "blob-digest",
                "the file changed since",
            ));
        }
        SurfaceBlob::read(bytes).map_err(|e| VerifyError::bad(at(), e.rule, e.detail))
    }

    /// The checkpoint the source serves now, as text: the same as [`PublicRecord::note`] while
    /// the record is current.
    pub fn served_note(&self) -> Option<String> {
        self.source
            .read("checkpoint", MAX_NOTE as u64)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// Entry `index`, an earlier entry of `server` its chain names: the entry rules proved the
    /// chain when the log was verified, and this holds each link to it again.
    fn previous(
        &self,
        tiles: &mut TileReader<&S>,
        server: &ServerId,
        index: u64,
    ) -> Result<(u64, Entry), VerifyError> {
        let (n, entry) = self.entry(tiles, index)?;
        if entry.server != *server {
            return Err(VerifyError::bad(
                Location::Entry(index),
                "entry-previous",
                format!(
                    "an entry of {server} names entry {index}, of another server, as its previous"
                ),
            ));
        }
        Ok((n, entry))
    }

    /// Entry `index`, proven included in the verified tree.
    fn entry(&self, tiles: &mut TileReader<&S>, index: u64) -> Result<(u64, Entry), VerifyError> {
        let bytes = tiles.entry(index)?;
        let proof = match merkle::inclusion_proof(tiles, index, self.checkpoint.size)? {
            Ok(p) => p,
            Err(e) => {
                return Err(VerifyError::bad(
                    Location::Entry(index),
                    "inclusion",
                    e.to_string(),
                ))
            }
        };
        let size = self.checkpoint.size;
        merkle::verify_inclusion(
            index,
            size,
            &Hash::leaf(&bytes),
            &proof,
            &self.checkpoint.root,
        )
        .map_err(|e| {
            VerifyError::bad(
                Location::Entry(index),
                "inclusion",
                format!("not in the verified tree any more: {e}"),
            )
        })?;
        let entry = Entry::read(&bytes)
            .map_err(|e| VerifyError::bad(Location::Entry(index), e.rule, e.detail))?;
        Ok((index, entry))
    }
}
