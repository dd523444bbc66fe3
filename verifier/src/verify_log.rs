//! verify-log: checks a published tlog-tiles log end to end, from a directory or wherever a
//! [`LogSource`] reads it from.
//!
//! One pass over the entry bundles in order. Each entry is hashed into a streaming tree; every
//! whole tile and the checkpoint's partial tiles are compared with the hashes computed from the
//! entries as soon as they are complete, and the root with the signed checkpoint at the end.
//! Memory holds a few bundles in flight (one being read and two queued per reader thread), one
//! tile per level and, for the pinlog rules, one record per server and a bounded cache of blob
//! summaries: it does not grow with the number of entries.
//!
//! With a state remembered from an earlier run, the check is incremental, as Go's sumdb client
//! is: the tree is resumed at the remembered size from the hash tiles, whose root must be the
//! remembered one (that proves the log served now extends it), and only the entries added since
//! are read and checked.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use pinlog_core::files::{read_bounded, write_public};
use pinlog_core::Digest;
use pinlog_log::entry::{Entry, EntryError, SurfaceSummary, Timestamp};
use pinlog_log::merkle::CompactRange;
use pinlog_log::note::MAX_NOTE;
use pinlog_log::source::{Dir, FileError, LogSource};
use pinlog_log::tile_reader::TileReader;
use pinlog_log::tile_reader::{read_hash_tile, Bundle, BundleError, BundleFault, BundleReader};
use pinlog_log::tiles::{self, TileId, HEIGHT, WIDTH};
use pinlog_log::Hash;

use crate::carried::Carried;
use crate::checkpoint::{self, Opened, Policy};
use crate::outcome::{Location, Severity, VerifyError};

/// What to check beyond the signed tree.
#[derive(Debug, Clone)]
pub struct Options {
    pub policy: Policy,
    /// What to remember between runs, if anything.
    pub state: Option<State>,
    /// Check only the tlog layers, not pinlog's entry rules.
    pub generic: bool,
}

/// The files a run remembers the verified log in.
#[derive(Debug, Clone)]
pub struct State {
    /// The checkpoint verified last: the note exactly as it was served.
    pub checkpoint: PathBuf,
    /// What pinlog's entry rules carry over (crate::carried); without it a run reads every entry.
    pub rules: PathBuf,
}

impl State {
    /// `--state FILE`: the checkpoint in FILE, the rules' memory beside it in `FILE.rules`.
    pub fn at(path: &Path) -> State {
        let mut rules = path.as_os_str().to_owned();
        rules.push(".rules");
        State {
            checkpoint: path.to_path_buf(),
            rules: rules.into(),
        }
    }
}

/// A log that verified.
#[derive(Debug, Clone)]
pub struct Verified {
    pub opened: Opened,
    /// The size of the checkpoint in the state file before this run, if there was one.
    pub previous_size: Option<u64>,
    /// The checkpoint in the state file before this run, as it was read.
    pub previous_note: Option<String>,
    /// The first entry this run read: the remembered size when it resumed from the state, else 0.
    pub checked_from: u64,
}

/// The largest surface blob read.
const MAX_BLOB: u64 = 64 << 20;
/// Blobs verified recently, by digest; a bounded memory of them saves re-reading a surface that
/// several entries share.
const BLOB_MEMORY: usize = 4096;

/// Verifies the log in the directory `dir`. `progress` is called with (entries done, entries to
/// check).
pub fn verify_log(
    dir: &Path,
    options: &Options,
    progress: impl FnMut(u64, u64),
) -> Result<Verified, VerifyError> {
    verify_source(&Dir(dir), options, progress)
}

/// Verifies the log `source` reads, and records it in the state if there is one. `progress` is
/// called with (entries done, entries to check).
pub fn verify_source<S: LogSource>(
    source: &S,
    options: &Options,
    progress: impl FnMut(u64, u64),
) -> Result<Verified, VerifyError> {
    let (verified, carried) = check(source, options, progress)?;
    if let Some(state) = &options.state {
        record(state, &verified, carried.as_ref())?;
    }
    Ok(verified)
}

/// Writes what a run verified into `state`: the checkpoint (when it moved), then what the entry
/// rules carry. Both are readable by anyone, as the log they come from is: a mirror serves its
/// copy's checkpoint.
pub(crate) fn record(
    state: &State,
    verified: &Verified,
    carried: Option<&Carried>,
) -> Result<(), VerifyError> {
    let written = |e: std::io::Error, path: &Path| {
        VerifyError::unreadable(
            Location::State,
            format!("cannot record the checkpoint in {}: {e}", path.display()),
        )
    };
    if verified.previous_note.as_ref() != Some(&verified.opened.note_text) {
        write_public(&state.checkpoint, verified.opened.note_text.as_bytes())
            .map_err(|e| written(e, &state.checkpoint))?;
    }
    if let Some(carried) = carried {
        carried
            .save(&state.rules)
            .map_err(|e| written(e, &state.rules))?;
    }
    Ok(())
}

/// Verifies the log `source` reads, without writing anything: what verified, and what the entry
/// rules carry to the next run.
pub(crate) fn check<S: LogSource>(
    source: &S,
    options: &Options,
    mut progress: impl FnMut(u64, u64),
) -> Result<(Verified, Option<Carried>), VerifyError> {
    // No checkpoint means no log to check here, not a bad one.
    let bytes = source.read("checkpoint", MAX_NOTE as u64).map_err(|e| {
        let detail = match e {
            // A failed fetch names its URL already.
            FileError::Fetch(_) => format!("cannot read the checkpoint: {e}"),
            _ => format!("cannot read {}: {e}", source.locate("checkpoint")),
        };
        VerifyError::unreadable(Location::Checkpoint, detail)
    })?;
    let opened = checkpoint::open(&bytes, &options.policy, Location::Checkpoint)?;
    let pinned = match &options.state {
        Some(state) => load_state(&state.checkpoint, &options.policy, &opened)?,
        None => None,
    };
    let size = opened.checkpoint.size;
    if let Some(p) = &pinned {
        if p.size == 0 && p.root != Hash::empty() {
            return Err(VerifyError::bad(
                Location::State,
                "fork",
                "the checkpoint remembered for size 0 does not have the empty tree's root",
            )
            .with_checkpoints(&p.note, &opened.note_text));
        }
    }
    // Resume where the state left off when everything the checks need was remembered.
    let mut carried = match (&pinned, &options.state) {
        (Some(p), Some(state)) if !options.generic => Carried::load(&state.rules, p.size, &p.root),
        _ => None,
    };
    let mut start = match &pinned {
        Some(p) if options.generic || carried.is_some() => p.size,
        _ => 0,
    };
    let mut tree = TreeCheck::new(source, size, pinned.clone(), &opened.note_text);
    match tree.resume(start) {
        Ok(()) => {}
        // Tiles that do not give the remembered root prove nothing yet: the server may have sent
        // a wrong tile, or the log may have forked. Reading every entry tells which.
        Err(e) if e.severity == Severity::Bad => {
            start = 0;
            carried = None;
            tree = TreeCheck::new(source, size, pinned.clone(), &opened.note_text);
        }
        Err(e) => return Err(e),
    }
    let mut rules = (!options.generic).then(|| EntryRules::new(carried));
    let blobs = (!options.generic).then(|| Blobs::new(source));

    // Reading, hashing and parsing bundles (and their blobs) is the bulk of the work and needs
    // no order: reader threads do it, and this one checks the results in order.
    let bundles = BundleReader::new(source, size);
    // The bundle holding the first new entry; none when nothing was added.
    let first = if start < size {
        start / WIDTH
    } else {
        bundles.count()
    };
    bundles.read_in_order(
        first,
        |b| load_bundle(&bundles, blobs.as_ref(), start, b),
        |b: Loaded| {
            for (i, leaf) in b.leaves.iter().enumerate() {
                let index = b.n * WIDTH + i as u64;
                if index < start {
                    tree.known(index, leaf)?;
                    continue;
                }
                if let (Some(rules), Some(Some(checked))) =
                    (rules.as_mut(), b.entries.as_ref().map(|e| &e[i]))
                {
                    rules.check(index, checked)?;
                }
                tree.push(*leaf)?;
            }
            progress(((b.n + 1) * WIDTH).min(size) - start, size - start);
            Ok(())
        },
    )?;
    tree.finish(&opened)?;
    progress(size - start, size - start);

    let carried = rules.map(|rules| Carried {
        size,
        root: opened.checkpoint.root,
        last_time: rules.last_time,
        servers: rules.servers,
    });
    let verified = Verified {
        previous_size: pinned.as_ref().map(|p| p.size),
        previous_note: pinned.map(|p| p.note),
        checked_from: start,
        opened,
    };
    Ok((verified, carried))
}

/// One entry bundle, hashed and (unless generic) parsed, with the blobs of its entries.
struct Loaded {
    n: u64,
    leaves: Vec<Hash>,
    /// `None` for the entries before the start.
    entries: Option<Vec<Option<Checked>>>,
}

/// An entry as read, and its blob's summary (`None` for an entry that did not parse).
type Checked = (
    Result<Entry, EntryError>,
    Option<Result<SurfaceSummary, VerifyError>>,
);

/// Checks a bundle's older partial copies, then hashes and parses its entries and reads their
/// blobs. Entries before `start` were verified before: only their hashes are needed.
fn load_bundle<S: LogSource>(
    bundles: &BundleReader<&S>,
    blobs: Option<&Blobs<'_, S>>,
    start: u64,
    bundle: Bundle<'_>,
) -> Result<Loaded, VerifyError> {
    bundles.check_older(&bundle)?;
    let first = bundle.tile.index * WIDTH;
    let entries = blobs.map(|blobs| {
        bundle
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                if first + (i as u64) < start {
                    return None;
                }
                let entry = Entry::read(e);
                let blob = entry.as_ref().ok().map(|e| blobs.summary(&e.blob));
                Some((entry, blob))
            })
            .collect()
    });
    Ok(Loaded {
        n: bundle.tile.index,
        leaves: bundle.entries.iter().map(|e| Hash::leaf(e)).collect(),
        entries,
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

/// Reads `rel` from `source`, at most `max` bytes.
fn read_file(
    source: &impl LogSource,
    rel: &str,
    max: u64,
    at: Location,
) -> Result<Vec<u8>, VerifyError> {
    source.read(rel, max).map_err(|e| read_error(rel, at, e))
}

/// A missing file is proof of a bad log at `at`, and so is one too large for its kind; any
/// other failure (a link or a FIFO in place of the file, a server that does not answer) is an
/// unreadable input.
fn read_error(rel: &str, at: Location, e: FileError) -> VerifyError {
    match e {
        FileError::Missing => VerifyError::bad(at, "missing", format!("{rel} is not in the log")),
        FileError::TooLarge { .. } => VerifyError::bad(at, "too-large", format!("{rel} is {e}")),
        FileError::NotRegular { .. } => VerifyError::unreadable(at, e.to_string()),
        FileError::Fetch(_) | FileError::Io(_) => {
            VerifyError::unreadable(at, format!("cannot read {rel}: {e}"))
        }
    }
}

/// The checkpoint verified last time.
#[derive(Debug, Clone)]
struct Pinned {
    size: u64,
    root: Hash,
    /// The note as it was read then.
    note: String,
}

/// The checkpoint verified last time, if `path` holds one. A state whose checkpoint is larger
/// than the one served is a rollback; an equal size with another root is a fork.
fn load_state(path: &Path, policy: &Policy, now: &Opened) -> Result<Option<Pinned>, VerifyError> {
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
        )
        .with_checkpoints(&before.note_text, &now.note_text));
    }
    if new.size == old.size && new.root != old.root {
        return Err(VerifyError::bad(
            Location::Checkpoint,
            "fork",
            format!(
                "size {} has root {} now but had root {} when verified before",
                new.size, new.root, old.root
            ),
        )
        .with_checkpoints(&before.note_text, &now.note_text));
    }
    Ok(Some(Pinned {
        size: old.size,
        root: old.root,
        note: before.note_text,
    }))
}

/// The tree built from the entries, checked tile by tile against the source.
struct TreeCheck<'a, S> {
    source: &'a S,
    size: u64,
    range: CompactRange,
    /// The current, incomplete tile at each level.
    levels: Vec<Vec<Hash>>,
    /// The checkpoint verified last time, whose root must be met on the way.
    pinned: Option<Pinned>,
    /// The checkpoint served now, as read: with `pinned`, the evidence of a fork.
    served: &'a str,
}

impl<'a, S: LogSource> TreeCheck<'a, S> {
    fn new(source: &'a S, size: u64, pinned: Option<Pinned>, served: &'a str) -> Self {
        TreeCheck {
            source,
            size,
            range: CompactRange::default(),
            levels: Vec::new(),
            pinned,
            served,
        }
    }

    /// Starts the tree at `start` entries from the hash tiles of this size: the subtrees covering
    /// the first `start` entries, and what each level's current tile holds before them. Their
    /// root must be the remembered one, which binds every hash taken here.
    fn resume(&mut self, start: u64) -> Result<(), VerifyError> {
        if start == 0 {
            return Ok(());
        }
        let mut tiles = TileReader::new(self.source, self.size);
        self.range = CompactRange::resume(&mut tiles, start)?;
        self.check_pinned()?;
        let mut level = 0u8;
        while start >> (u32::from(HEIGHT) * u32::from(level)) > 0 {
            let n = start >> (u32::from(HEIGHT) * u32::from(level));
            let before = tiles.hashes_before(level, n)?;
            self.levels.push(before);
            level += 1;
        }
        Ok(())
    }

    /// Holds entry `index`, one verified before, to the hash the resumed tile has for it.
    fn known(&self, index: u64, leaf: &Hash) -> Result<(), VerifyError> {
        let at = (index % WIDTH) as usize;
        if self.levels.first().and_then(|l| l.get(at)) == Some(leaf) {
            return Ok(());
        }
        let tile = TileId {
            level: Some(0),
            index: index / WIDTH,
            width: WIDTH as u16,
        };
        Err(VerifyError::bad(
            file(&tile.path()),
            "tile-mismatch",
            format!("hash {at} differs from the one computed from the entries"),
        ))
    }

    fn push_hash(levels: &mut Vec<Vec<Hash>>, level: usize, h: Hash) {
        if levels.len() <= level {
            levels.resize_with(level + 1, Vec::new);
        }
        levels[level].push(h);
    }

    /// The root of the entries so far, where the remembered checkpoint's size is reached.
    fn check_pinned(&self) -> Result<(), VerifyError> {
        let Some(p) = &self.pinned else {
            return Ok(());
        };
        if p.size != self.range.size() || self.range.root() == p.root {
            return Ok(());
        }
        Err(VerifyError::bad(
            Location::Checkpoint,
            "fork",
            format!(
                "the first {} entries have root {} but had root {} when verified before",
                p.size,
                self.range.root(),
                p.root
            ),
        )
        .with_checkpoints(&p.note, self.served))
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
        self.check_pinned()
    }

    /// Compares a tile (and its older partial versions) with the hashes computed for it.
    fn compare(&self, tile: &TileId, hashes: &[Hash]) -> Result<(), VerifyError> {
        let mut got = Vec::new();
        let rel = read_hash_tile(self.source, tile, &mut got)
            .map_err(|(rel, e)| read_error(&rel, file(&rel), e))?;
        let want = tiles::encode_hashes(hashes);
        if got != want {
            return Err(tile_mismatch(&rel, &got, &want));
        }
        // Older partial versions of the tile (`N.p/W`) must be its first W hashes.
        let older = self
            .source
            .older_partials(tile)
            .map_err(|e| VerifyError::unreadable(file(&tile.partials_dir()), e.to_string()))?;
        for partial in older {
            let rel = partial.path();
            let w = usize::from(partial.width);
            let got = read_file(self.source, &rel, WIDTH * 32 + 1, file(&rel))?;
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
struct EntryRules {
    /// Each server's last entry: index and surface digest.
    servers: HashMap<String, (u64, Digest)>,
    last_time: Option<Timestamp>,
}

impl EntryRules {
    /// The rules from the start of the log, or from where a remembered run left them.
    fn new(carried: Option<Carried>) -> Self {
        match carried {
            Some(c) => EntryRules {
                servers: c.servers,
                last_time: c.last_time,
            },
            None => EntryRules {
                servers: HashMap::new(),
                last_time: None,
            },
        }
    }

    fn check(&mut self, index: u64, (read, blob): &Checked) -> Result<(), VerifyError> {
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
        // The blob must hold the surface the entry describes; it was read on a reader thread.
        let held = || match blob {
            Some(Ok(summary)) => entry
                .check_blob(summary)
                .map_err(|e| VerifyError::bad(at(), e.rule, e.detail)),
            Some(Err(e)) => Err(e.clone()),
            None => unreachable!("a parsed entry has its blob read"),
        };
        // One lookup per map and entry: this runs a million times for a million entries.
        let previous = |last| {
            entry
                .check_previous(last)
                .map_err(|e| VerifyError::bad(at(), e.rule, e.detail))
        };
        match self.servers.get_mut(entry.server.as_str()) {
            Some(slot) => {
                previous(Some(*slot))?;
                held()?;
                *slot = (index, entry.surface);
            }
            None => {
                previous(None)?;
                held()?;
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

/// The surface blobs, read, hashed and summarised on the reader threads: each the first time it
/// is named (and again once the bounded memory of summaries was emptied).
struct Blobs<'a, S> {
    source: &'a S,
    seen: Mutex<HashMap<Digest, SurfaceSummary>>,
}

impl<'a, S: LogSource> Blobs<'a, S> {
    fn new(source: &'a S) -> Self {
        Blobs {
            source,
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// A reader thread that panicked left the map as it was: usable.
    fn seen(&self) -> std::sync::MutexGuard<'_, HashMap<Digest, SurfaceSummary>> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn summary(&self, blob: &Digest) -> Result<SurfaceSummary, VerifyError> {
        if let Some(summary) = self.seen().get(blob) {
            return Ok(summary.clone());
        }
        let rel = format!("blobs/sha256/{}", blob.hex());
        let bytes = read_file(self.source, &rel, MAX_BLOB, file(&rel))?;
        let digest = Digest::of(&bytes);
        if digest != *blob {
            return Err(VerifyError::bad(
                file(&rel),
                "blob-digest",
                format!("the file hashes to {digest}"),
            ));
        }
        let summary = SurfaceSummary::read(&bytes)
            .map_err(|e| VerifyError::bad(file(&rel), e.rule, e.detail))?;
        let mut seen = self.seen();
        if seen.len() >= BLOB_MEMORY {
            seen.clear();
        }
        seen.insert(*blob, summary.clone());
        Ok(summary)
    }
}
