//! The public record: a log verified before use, asked what it saw of one server. The proxy,
//! `verify` and `lookup` compare what this machine is served with it.
//!
//! Opening verifies the log as `verify-log` does (incrementally, with a state); what the entry
//! rules carry at the end (each server's last entry) is the index. Every entry and blob read
//! afterwards is held to the verified root: an entry by its inclusion proof from the tiles, a
//! blob by its digest. A source that changes after the check cannot change the answers.

use std::collections::HashMap;
use std::time::SystemTime;

use pinlog_core::identity::PublicIdentity;
use pinlog_core::manifest::Manifest;
use pinlog_core::{Digest, ServerId};
use pinlog_log::checkpoint::Checkpoint;
use pinlog_log::entry::{Entry, Timestamp};
use pinlog_log::merkle;
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
    servers: HashMap<String, (u64, Digest)>,
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
        let servers = carried.map(|c| c.servers).unwrap_or_default();
        Ok(PublicRecord {
            source,
            checkpoint: verified.opened.checkpoint,
            note: verified.opened.note_text,
            servers,
        })
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
        let Some((last, _)) = self.servers.get(server.as_str()) else {
            return Ok(Compared::Absent);
        };
        let mut tiles = TileReader::new(&self.source, self.checkpoint.size);
        let latest = self.entry(&mut tiles, *last)?;
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
                    Some(p) => Some(self.entry(&mut tiles, p.index)?),
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
        let rel = format!("blobs/sha256/{}", entry.blob.hex());
        let at = || Location::File(rel.clone());
        let bytes = self
            .source
            .read(&rel, MAX_BLOB)
            .map_err(|e| VerifyError::unreadable(at(), format!("cannot read {rel}: {e}")))?;
        if Digest::of(&bytes) != entry.blob {
            return Err(VerifyError::bad(
                at(),
                "blob-digest",
                "the file changed since",
            ));
        }
        let blob =
            SurfaceBlob::read(bytes).map_err(|e| VerifyError::bad(at(), e.rule, e.detail))?;
        Ok(Compared::Differs(observed, blob))
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
