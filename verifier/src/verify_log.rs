//! verify-log: checks a downloaded tlog-tiles directory end to end, offline.
//!
//! One pass over the entry bundles in order. Each entry is hashed into a streaming tree; every
//! whole tile and the checkpoint's partial tiles are compared with the hashes computed from the
//! entries as soon as they are complete, and the root with the signed checkpoint at the end.
//! Memory holds a few bundles in flight (one being read and two queued per reader thread), one
//! tile per level and, for the pinlog rules, one record per server and a bounded cache of blob
//! summaries: it does not grow with the number of entries.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use pinlog_core::files::{read_bounded, write_atomic};
use pinlog_core::Digest;
use pinlog_log::entry::{Entry, EntryError, SurfaceSummary, Timestamp};
use pinlog_log::in_dir::{self, InDirError};
use pinlog_log::merkle::CompactRange;
use pinlog_log::note::MAX_NOTE;
use pinlog_log::tile_reader::{older_partials, Bundle, BundleError, BundleFault, BundleReader};
use pinlog_log::tiles::{self, TileId, HEIGHT, WIDTH};
use pinlog_log::Hash;

use crate::checkpoint::{self, Opened, Policy};
use crate::outcome::{Location, VerifyError};

/// What to check beyond the signed tree.
#[derive(Debug, Clone)]
pub struct Options {
    pub policy: Policy,
    /// The file remembering the checkpoint verified last time.
    pub state: Option<PathBuf>,
    /// Check only the tlog layers, not pinlog's entry rules.
    pub generic: bool,
}

/// A log that verified.
#[derive(Debug, Clone)]
pub struct Verified {
    pub opened: Opened,
    /// The size of the checkpoint in the state file before this run, if there was one.
    pub previous_size: Option<u64>,
}

/// The largest surface blob read.
const MAX_BLOB: u64 = 64 << 20;
/// Blobs verified recently, by digest; a bounded memory of them saves re-reading a surface that
/// several entries share.
const BLOB_MEMORY: usize = 4096;

/// Verifies the log in `dir`. `progress` is called with (entries done, entries in all).
pub fn verify_log(
    dir: &Path,
    options: &Options,
    mut progress: impl FnMut(u64, u64),
) -> Result<Verified, VerifyError> {
    // No checkpoint means no log to check here, not a bad one.
    let bytes = in_dir::read(dir, "checkpoint", MAX_NOTE as u64).map_err(|e| {
        VerifyError::unreadable(
            Location::Checkpoint,
            format!("cannot read {}: {e}", dir.join("checkpoint").display()),
        )
    })?;
    let opened = checkpoint::open(&bytes, &options.policy, Location::Checkpoint)?;
    let pinned = match &options.state {
        Some(path) => load_state(path, &options.policy, &opened)?,
        None => None,
    };
    let size = opened.checkpoint.size;
    if let Some((0, root, _)) = &pinned {
        if *root != Hash::empty() {
            return Err(VerifyError::bad(
                Location::State,
                "fork",
                "the checkpoint remembered for size 0 does not have the empty tree's root",
            ));
        }
    }
    let mut tree = TreeCheck::new(dir, size, pinned.clone());
    let mut rules = (!options.generic).then(|| EntryRules::new(dir));

    let generic = options.generic;
    // Reading, hashing and parsing bundles is the bulk of the work and needs no order: reader
    // threads do it, and this one checks the results in order.
    let bundles = BundleReader::new(dir, size);
    bundles.read_in_order(
        READERS,
        |b| load_bundle(&bundles, generic, b),
        |b: Loaded| {
            for (i, leaf) in b.leaves.iter().enumerate() {
                let index = b.n * WIDTH + i as u64;
                if let (Some(rules), Some(parsed)) = (rules.as_mut(), b.entries.as_ref()) {
                    rules.check(index, &parsed[i])?;
                }
                tree.push(*leaf)?;
            }
            progress(((b.n + 1) * WIDTH).min(size), size);
            Ok(())
        },
    )?;
    tree.finish(&opened)?;
    progress(size, size);

    if let Some(path) = &options.state {
        if pinned.as_ref().map(|p| &p.2) != Some(&opened.note_text) {
            write_atomic(path, opened.note_text.as_bytes()).map_err(|e| {
                VerifyError::unreadable(
                    Location::State,
                    format!("cannot record the checkpoint in {}: {e}", path.display()),
                )
            })?;
        }
    }
    Ok(Verified {
        previous_size: pinned.map(|p| p.0),
        opened,
    })
}

/// Threads reading bundles.
const READERS: u64 = 2;

/// One entry bundle, hashed and (unless generic) parsed.
struct Loaded {
    n: u64,
    leaves: Vec<Hash>,
    entries: Option<Vec<Result<Entry, EntryError>>>,
}

/// Checks a bundle's older partial copies, then hashes and parses its entries.
fn load_bundle(
    bundles: &BundleReader<'_>,
    generic: bool,
    bundle: Bundle<'_>,
) -> Result<Loaded, VerifyError> {
    bundles.check_older(&bundle)?;
    Ok(Loaded {
        n: bundle.tile.index,
        leaves: bundle.entries.iter().map(|e| Hash::leaf(e)).collect(),
        entries: (!generic).then(|| bundle.entries.iter().map(|e| Entry::read(e)).collect()),
    })
}

fn file(path: &str) -> Location {
    Location::File(path.to_string())
}

impl From<BundleError> for VerifyError {
    fn from(e: BundleError) -> Self {
        let at = file(&e.file);
        match e.fault {
            BundleFault::Read(fault) => read_error(&e.file, at, fault),
            BundleFault::Format(fault) => VerifyError::bad(at, "bundle-format", fault.to_string()),
            fault @ BundleFault::OlderDiffers => {
                VerifyError::bad(at, "bundle-mismatch", fault.to_string())
            }
            BundleFault::List(fault) => VerifyError::unreadable(at, fault.to_string()),
        }
    }
}

/// Reads `dir/rel`, at most `max` bytes.
fn read_file(dir: &Path, rel: &str, max: u64, at: Location) -> Result<Vec<u8>, VerifyError> {
    in_dir::read(dir, rel, max).map_err(|e| read_error(rel, at, e))
}

/// A missing file is proof of a bad log at `at`, and so is one too large for its kind; any
/// other failure (a link or a FIFO in place of the file included) is an unreadable input.
fn read_error(rel: &str, at: Location, e: InDirError) -> VerifyError {
    match e {
        InDirError::Missing => {
            VerifyError::bad(at, "missing", format!("{rel} is not in the directory"))
        }
        InDirError::TooLarge { .. } => VerifyError::bad(at, "too-large", format!("{rel} is {e}")),
        InDirError::NotRegular { .. } => VerifyError::unreadable(at, e.to_string()),
        InDirError::Io(_) => VerifyError::unreadable(at, format!("cannot read {rel}: {e}")),
    }
}

/// The checkpoint verified last time: (size, root, note text). A state whose checkpoint is larger
/// than the one served is a rollback; an equal size with another root is a fork.
fn load_state(
    path: &Path,
    policy: &Policy,
    now: &Opened,
) -> Result<Option<(u64, Hash, String)>, VerifyError> {
    let bytes = match read_bounded(path, MAX_NOTE as u64) {
        Ok(b) => b,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(VerifyError::unreadable(
                Location::State,
                format!("cannot read {}: {e}", path.display()),
            ))
        }
    };
    let before = checkpoint::open(
        &bytes,
        &Policy {
            log_keys: policy.log_keys.clone(),
            witnesses: Vec::new(),
            quorum: 0,
            witness_policy: None,
        },
        Location::State,
    )
    .map_err(|e| VerifyError::unreadable(Location::State, e.to_string()))?;
    let (old, new) = (&before.checkpoint, &now.checkpoint);
    if old.origin != new.origin {
        return Err(VerifyError::unreadable(
            Location::State,
            format!(
                "{} records the log {:?}, not {:?}; use one state file per log",
                path.display(),
                old.origin,
                new.origin
            ),
        ));
    }
    if new.size < old.size {
        return Err(VerifyError::bad(
            Location::Checkpoint,
            "rollback",
            format!(
                "the log serves size {} but size {} was verified before",
                new.size, old.size
            ),
        ));
    }
    if new.size == old.size && new.root != old.root {
        return Err(VerifyError::bad(
            Location::Checkpoint,
            "fork",
            format!(
                "size {} has root {} now but had root {} when verified before",
                new.size, new.root, old.root
            ),
        ));
    }
    Ok(Some((old.size, old.root, before.note_text)))
}

/// The tree built from the entries, checked tile by tile against the directory.
struct TreeCheck<'a> {
    dir: &'a Path,
    size: u64,
    range: CompactRange,
    /// The current, incomplete tile at each level.
    levels: Vec<Vec<Hash>>,
    /// The size and root verified last time, to be met on the way.
    pinned: Option<(u64, Hash, String)>,
}

impl<'a> TreeCheck<'a> {
    fn new(dir: &'a Path, size: u64, pinned: Option<(u64, Hash, String)>) -> Self {
        TreeCheck {
            dir,
            size,
            range: CompactRange::default(),
            levels: Vec::new(),
            pinned,
        }
    }

    fn push_hash(levels: &mut Vec<Vec<Hash>>, level: usize, h: Hash) {
        if levels.len() <= level {
            levels.resize_with(level + 1, Vec::new);
        }
        levels[level].push(h);
    }

    fn push(&mut self, leaf: Hash) -> Result<(), VerifyError> {
        let levels = &mut self.levels;
        Self::push_hash(levels, 0, leaf);
        self.range.push(leaf, |level, _, h| {
            if level % HEIGHT == 0 {
                Self::push_hash(levels, usize::from(level / HEIGHT), *h);
            }
        });
        let done = self.range.size();
        for l in 0..self.levels.len() {
            if self.levels[l].len() as u64 == WIDTH {
                let shift = u32::from(HEIGHT) * l as u32;
                let tile = TileId {
                    level: Some(l as u8),
                    index: (done >> shift) / WIDTH - 1,
                    width: WIDTH as u16,
                };
                let hashes = std::mem::take(&mut self.levels[l]);
                self.compare(&tile, &hashes)?;
            }
        }
        if let Some((size, root, _)) = &self.pinned {
            if *size == done && self.range.root() != *root {
                return Err(VerifyError::bad(
                    Location::Checkpoint,
                    "fork",
                    format!(
                        "the first {size} entries have root {} but had root {root} when \
                         verified before",
                        self.range.root()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Compares a tile file (and its older partial versions) with the hashes computed for it.
    fn compare(&self, tile: &TileId, hashes: &[Hash]) -> Result<(), VerifyError> {
        let rel = tile.path();
        let got = read_file(self.dir, &rel, WIDTH * 32 + 1, file(&rel))?;
        let want = tiles::encode_hashes(hashes);
        if got != want {
            return Err(tile_mismatch(&rel, &got, &want));
        }
        // Older partial versions of the tile (`N.p/W`) must be its first W hashes.
        let older = older_partials(self.dir, tile)
            .map_err(|e| VerifyError::unreadable(file(&tile.partials_dir()), e.to_string()))?;
        for partial in older {
            let rel = partial.path();
            let w = usize::from(partial.width);
            let got = read_file(self.dir, &rel, WIDTH * 32 + 1, file(&rel))?;
            if got != want[..w * 32] {
                return Err(tile_mismatch(&rel, &got, &want[..w * 32]));
            }
        }
        Ok(())
    }

    /// The checkpoint's partial tiles, then its root.
    fn finish(&mut self, opened: &Opened) -> Result<(), VerifyError> {
        for l in 0..self.levels.len() {
            let hashes = std::mem::take(&mut self.levels[l]);
            if hashes.is_empty() {
                continue;
            }
            let count = self.size >> (u32::from(HEIGHT) * l as u32);
            let tile = TileId {
                level: Some(l as u8),
                index: count / WIDTH,
                width: hashes.len() as u16,
            };
            self.compare(&tile, &hashes)?;
        }
        let root = self.range.root();
        if root != opened.checkpoint.root {
            return Err(VerifyError::bad(
                Location::Checkpoint,
                "root-mismatch",
                format!(
                    "the entries give root {root}, the checkpoint signs {}",
                    opened.checkpoint.root
                ),
            ));
        }
        Ok(())
    }
}

fn tile_mismatch(rel: &str, got: &[u8], want: &[u8]) -> VerifyError {
    let detail = if got.len() != want.len() {
        format!("{} bytes where {} are expected", got.len(), want.len())
    } else {
        let at = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
        format!(
            "hash {} differs from the one computed from the entries",
            at / 32
        )
    };
    VerifyError::bad(file(rel), "tile-mismatch", detail)
}

/// pinlog's rules over the sequence of entries.
struct EntryRules<'a> {
    dir: &'a Path,
    /// Each server's last entry: index and surface digest.
    servers: HashMap<String, (u64, Digest)>,
    last_time: Option<Timestamp>,
    /// Surfaces read recently, by blob digest: entries that share a blob are each held to it.
    blobs_seen: HashMap<Digest, SurfaceSummary>,
}

impl<'a> EntryRules<'a> {
    fn new(dir: &'a Path) -> Self {
        EntryRules {
            dir,
            servers: HashMap::new(),
            last_time: None,
            blobs_seen: HashMap::new(),
        }
    }

    fn check(&mut self, index: u64, read: &Result<Entry, EntryError>) -> Result<(), VerifyError> {
        let at = || Location::Entry(index);
        let entry = read
            .as_ref()
            .map_err(|e| VerifyError::bad(at(), e.rule, e.detail.clone()))?;
        if let Some(last) = &self.last_time {
            if entry.observed_at < *last {
                return Err(VerifyError::bad(
                    at(),
                    "entry-time",
                    format!(
                        "observed_at {} is before the previous entry's {last}",
                        entry.observed_at
                    ),
                ));
            }
        }
        // One lookup per map and entry: this runs a million times for a million entries.
        let previous = |last| {
            entry
                .check_previous(last)
                .map_err(|e| VerifyError::bad(at(), e.rule, e.detail))
        };
        match self.servers.get_mut(entry.server.as_str()) {
            Some(slot) => {
                previous(Some(*slot))?;
                check_blob(self.dir, &mut self.blobs_seen, index, entry)?;
                *slot = (index, entry.surface);
            }
            None => {
                previous(None)?;
                check_blob(self.dir, &mut self.blobs_seen, index, entry)?;
                self.servers
                    .insert(entry.server.as_str().to_string(), (index, entry.surface));
            }
        }
        if self.last_time.as_ref() != Some(&entry.observed_at) {
            self.last_time = Some(entry.observed_at.clone());
        }
        Ok(())
    }
}

/// The entry's blob: read, hashed and summarised the first time (and again once the bounded
/// memory of summaries was emptied), and the entry held to it every time.
fn check_blob(
    dir: &Path,
    seen: &mut HashMap<Digest, SurfaceSummary>,
    index: u64,
    entry: &Entry,
) -> Result<(), VerifyError> {
    let summary = match seen.get(&entry.blob) {
        Some(summary) => summary,
        None => {
            let rel = format!("blobs/sha256/{}", entry.blob.hex());
            let bytes = read_file(dir, &rel, MAX_BLOB, file(&rel))?;
            let digest = Digest::of(&bytes);
            if digest != entry.blob {
                return Err(VerifyError::bad(
                    file(&rel),
                    "blob-digest",
                    format!("the file hashes to {digest}"),
                ));
            }
            let summary = SurfaceSummary::read(&bytes)
                .map_err(|e| VerifyError::bad(file(&rel), e.rule, e.detail))?;
            if seen.len() >= BLOB_MEMORY {
                seen.clear();
            }
            seen.entry(entry.blob).or_insert(summary)
        }
    };
    entry
        .check_blob(summary)
        .map_err(|e| VerifyError::bad(Location::Entry(index), e.rule, e.detail))
}
