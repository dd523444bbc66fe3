//! The public record: a log verified before use, asked what it saw of one server. The proxy,
//! `verify` and `lookup` compare what this machine is served with it.
//!
//! Opening verifies the log as `verify-log` does (incrementally, with a state); what the entry
//! rules carry at the end (each server's last entry) is the index. Every entry and blob read
//! afterwards is held to the verified root: an entry by its inclusion proof from the tiles, a
//! blob by its digest. A source that changes after the check cannot change the answers.

use std::collections::HashMap;

use pinlog_core::{Digest, ServerId};
use pinlog_log::checkpoint::Checkpoint;
use pinlog_log::entry::{Entry, Timestamp};
use pinlog_log::merkle;
use pinlog_log::source::LogSource;
use pinlog_log::surface_blob::SurfaceBlob;
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
            servers,
        })
    }

    /// The checkpoint the record was verified at.
    pub fn checkpoint(&self) -> &Checkpoint {
        &self.checkpoint
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
