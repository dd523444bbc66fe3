//! Publishing the store as a C2SP tlog-tiles directory, and proving an entry from one.
//!
//! Entry bundles, hash tiles and blobs are written first, the checkpoint last, each through a
//! temporary file and a rename: a crash at any point leaves the previous checkpoint with every
//! tile it needs. Before signing, the new tree is checked to extend both the last checkpoint the
//! store signed and the one the directory serves, so the log never signs a fork of itself.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pinlog_core::exit::Failure;

use crate::checkpoint::Checkpoint;
use crate::cosignature::cosigned_by;
use crate::hash::Hash;
use crate::in_dir;
use crate::merkle::{self, CompactRange};
use crate::note::{Note, SignerKey};
use crate::proof::Receipt;
use crate::source::{Dir, FileError};
use crate::store::{SignedCheckpoint, Store, StoreError};
use crate::tile_reader::{TileReadError, TileReader};
use crate::tiles::{self, TileId, HEIGHT, WIDTH};
use crate::witness::{self, Asked, Refusal, Transport};
use crate::witness_policy::WitnessPolicy;
use pinlog_core::files::{
    create_public_dir_all, sync_dir, sync_filesystem, write_public, write_public_unsynced,
};

/// Why publishing or proving stopped.
#[derive(Debug)]
pub enum PublishError {
    Store(StoreError),
    /// A file could not be read or written.
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A file of the log directory could not be read, or is not a regular file in it.
    Read {
        path: PathBuf,
        error: FileError,
    },
    /// The directory or the store holds something this log must not overwrite or sign over.
    Refused(String),
    /// A tile the proof needs is missing or damaged.
    Tile(TileReadError),
    /// No receipt can be made: the index is outside the log, or the directory is not a log.
    CannotProve(String),
    /// The witnesses' quorum was not met: nothing new was served.
    Unwitnessed(Unwitnessed),
}

/// What the witnesses did with a checkpoint whose quorum was not met.
#[derive(Debug)]
pub struct Unwitnessed {
    pub size: u64,
    /// The quorum, in words.
    pub quorum: String,
    /// Each witness's name, and what it did.
    pub witnesses: Vec<(String, Result<(), Refusal>)>,
}

impl Unwitnessed {
    /// True when a witness said this checkpoint is inconsistent with one it cosigned: a fork.
    pub fn fork_seen(&self) -> bool {
        self.witnesses.iter().any(|(_, r)| {
            matches!(
                r,
                Err(Refusal::Inconsistent(_) | Refusal::Conflict { .. } | Refusal::Ahead { .. })
            )
        })
    }
}

impl fmt::Display for Unwitnessed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "witness-quorum: the checkpoint of size {} was not cosigned by the quorum {}; \
             the directory keeps serving the checkpoint it had. The witnesses:",
            self.size, self.quorum
        )?;
        for (name, r) in &self.witnesses {
            match r {
                Ok(()) => write!(f, " [{name}: cosigned]")?,
                Err(e) => write!(f, " [{name}: {e}]")?,
            }
        }
        Ok(())
    }
}

impl From<PublishError> for Failure {
    fn from(e: PublishError) -> Self {
        match e {
            // The store and the directory disagree about what was signed: proven, not unreadable.
            PublishError::Refused(m) => Failure::bad(m),
            // A witness holds a checkpoint this one does not extend: a fork, proven.
            PublishError::Unwitnessed(u) if u.fork_seen() => Failure::bad(u.to_string()),
            other => Failure::unreadable(other.to_string()),
        }
    }
}

impl fmt::Display for PublishError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PublishError::Store(e) => e.fmt(f),
            PublishError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            PublishError::Read { path, error } => write!(f, "{}: {error}", path.display()),
            PublishError::Refused(why) => f.write_str(why),
            PublishError::Tile(e) => write!(f, "tile: {e}"),
            PublishError::CannotProve(why) => f.write_str(why),
            PublishError::Unwitnessed(u) => u.fmt(f),
        }
    }
}

impl std::error::Error for PublishError {}

impl From<StoreError> for PublishError {
    fn from(e: StoreError) -> Self {
        PublishError::Store(e)
    }
}

impl From<TileReadError> for PublishError {
    fn from(e: TileReadError) -> Self {
        PublishError::Tile(e)
    }
}

/// What a publish did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    pub size: u64,
    pub root: Hash,
    /// A checkpoint was signed by this run (false when nothing was appended since the last).
    pub signed: bool,
    /// Files written, the checkpoint included.
    pub written: u64,
    /// The witnesses whose cosignatures the served checkpoint carries, when a policy was given.
    pub cosigned_by: Vec<String>,
}

/// The witnesses to ask before a checkpoint is served (`--witness-policy`).
pub struct Witnessing<'a> {
    pub policy: &'a WitnessPolicy,
    pub transport: &'a dyn Transport,
    /// How long all the witnesses together may take.
    pub timeout: Duration,
}

/// The checkpoint file of a log directory.
pub const CHECKPOINT: &str = "checkpoint";

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> PublishError + '_ {
    move |error| PublishError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// The directory's current checkpoint, if it has one, opened with this log's key.
fn served_checkpoint(
    out: &Path,
    key: &SignerKey,
) -> Result<Option<(Checkpoint, String)>, PublishError> {
    let path = out.join(CHECKPOINT);
    let bytes = match in_dir::read(out, CHECKPOINT, crate::note::MAX_NOTE as u64) {
        Ok(b) => b,
        Err(FileError::Missing) => return Ok(None),
        Err(error) => return Err(PublishError::Read { path, error }),
    };
    let refuse = |why: String| {
        PublishError::Refused(format!(
            "{} {why}; publish to an empty directory or to this log's own",
            path.display()
        ))
    };
    let note = Note::parse(&bytes).map_err(|e| refuse(format!("is not a signed note ({e})")))?;
    note.verify(&[key.verifier()])
        .map_err(|e| refuse(format!("is not signed by this log's key ({e})")))?;
    let c = Checkpoint::parse(&note.text).map_err(|e| refuse(e.to_string()))?;
    if c.origin != key.name() {
        return Err(refuse(format!("belongs to the log {:?}", c.origin)));
    }
    Ok(Some((c, String::from_utf8_lossy(&bytes).into_owned())))
}

/// Writes the log in `store` to `out` and signs a checkpoint for it with `key`. `progress` is
/// called with (entries done, entries in all).
pub fn publish(
    store: &mut Store,
    key: &SignerKey,
    out: &Path,
    progress: impl FnMut(u64, u64),
) -> Result<Published, PublishError> {
    publish_witnessed(store, key, out, None, progress)
}

/// [`publish`], and with `witnessing`, the checkpoint is served only once the policy's quorum of
/// witnesses cosigned it, with their cosignatures.
pub fn publish_witnessed(
    store: &mut Store,
    key: &SignerKey,
    out: &Path,
    witnessing: Option<&Witnessing<'_>>,
    mut progress: impl FnMut(u64, u64),
) -> Result<Published, PublishError> {
    let origin = store.origin()?;
    if key.name() != origin {
        return Err(PublishError::Refused(format!(
            "the key is named {:?} but the log's origin is {origin:?}; sign with the log's own key",
            key.name()
        )));
    }
    if let Some(w) = witnessing {
        let logs = &w.policy.logs;
        if !logs.is_empty() && !logs.iter().any(|l| l.key.is(&key.verifier())) {
            return Err(PublishError::Refused(
                "the witness policy names other logs, not this one; give this log's key on its \
                 `log` line"
                    .into(),
            ));
        }
    }
    create_public_dir_all(out).map_err(io_err(out))?;
    // One publisher at a time per store: a second one waits here.
    let _lock = store.publish_lock()?;
    let size = store.size()?;
    let last = store.last_checkpoint()?;
    let served = served_checkpoint(out, key)?;
    let served_size = served.as_ref().map_or(0, |(c, _)| c.size);

    // Every earlier checkpoint must be a prefix of this tree, before anything is written.
    let mut earlier: Vec<(u64, Hash, &str)> = Vec::new();
    if let Some(l) = &last {
        earlier.push((l.size, l.root, "the last checkpoint this store signed"));
    }
    if let Some((c, _)) = &served {
        earlier.push((c.size, c.root, "the checkpoint the directory serves"));
    }
    let check_to = earlier.iter().map(|e| e.0).max().unwrap_or(0);
    if check_to > size {
        return Err(PublishError::Refused(format!(
            "a checkpoint of size {check_to} exists but the store holds {size} entries; \
             the store has lost entries and must not be published"
        )));
    }
    let mut range = CompactRange::default();
    let check = |range: &CompactRange| -> Result<(), PublishError> {
        for (s, root, what) in &earlier {
            if *s == range.size() && range.root() != *root {
                return Err(PublishError::Refused(format!(
                    "the store's tree at size {s} does not match {what}; refusing to sign a fork"
                )));
            }
        }
        Ok(())
    };
    check(&range)?;
    if check_to > 0 {
        store.for_each_entry(0, false, |e| {
            if e.index < check_to {
                range.push(e.leaf, |_, _, _| {});
                check(&range)?;
            }
            Ok::<_, PublishError>(())
        })?;
    }

    // Bodies are needed from the first bundle the directory does not hold whole.
    let bodies_from = served_size / WIDTH * WIDTH;
    let mut writer = TileWriter {
        out,
        published: served_size,
        written: 0,
        levels: Vec::new(),
        bundle: Vec::new(),
        bundle_len: 0,
    };
    let mut range = CompactRange::default();
    store.for_each_entry(0, true, |e| {
        if e.index >= bodies_from {
            if Hash::leaf(&e.body) != e.leaf {
                return Err(PublishError::Refused(format!(
                    "entry {} in the store does not hash to its recorded leaf hash; \
                     the store is damaged",
                    e.index
                )));
            }
            writer.push_entry(e.index, &e.body)?;
        }
        let mut merged = Vec::new();
        range.push(e.leaf, |level, _, h| {
            if level % HEIGHT == 0 {
                merged.push((level / HEIGHT, *h));
            }
        });
        writer.push_hash(0, e.leaf);
        for (level, h) in merged {
            writer.push_hash(level, h);
        }
        writer.flush_full(range.size())?;
        if e.index % 4096 == 4095 {
            progress(e.index + 1, size);
        }
        Ok::<_, PublishError>(())
    })?;
    if range.size() != size {
        return Err(PublishError::Refused(format!(
            "the store changed while publishing ({} entries read, {size} counted); publish again",
            range.size()
        )));
    }
    writer.flush_partial(size)?;
    progress(size, size);

    let blobs_dir = out.join("blobs").join("sha256");
    store.for_each_blob(served_size, |digest, body| {
        let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
        let path = blobs_dir.join(hex);
        if !path.exists() {
            write_public_unsynced(&path, body).map_err(io_err(&path))?;
            writer.written += 1;
        }
        Ok::<_, PublishError>(())
    })?;

    // Everything the checkpoint will refer to reaches the disk before the checkpoint does,
    // including files an interrupted earlier run left unsynced.
    sync_filesystem(out).map_err(io_err(out))?;

    let root = range.root();
    let (note, signed) = match last {
        Some(l) if l.size == size => (l.note, false),
        _ => {
            let body = Checkpoint {
                origin: origin.clone(),
                size,
                root,
                extensions: Vec::new(),
            };
            let note = key
                .sign(&body.to_text())
                .map_err(|e| PublishError::Refused(e.to_string()))?;
            // Recorded before it is served: the store must know every checkpoint it signed.
            store.record_checkpoint(&SignedCheckpoint {
                size,
                root,
                note: note.clone(),
            })?;
            (note, true)
        }
    };
    // Another publisher (of another store) may have served a checkpoint meanwhile: it is never
    // replaced by one it was not checked against. Checked again after the witnesses answered.
    let was_served = served.as_ref().map(|(c, _)| c.clone());
    let unchanged = || -> Result<(), PublishError> {
        if served_checkpoint(out, key)?.map(|(c, _)| c) != was_served {
            return Err(PublishError::Refused(format!(
                "{} changed while publishing; publish again",
                out.join(CHECKPOINT).display()
            )));
        }
        Ok(())
    };
    unchanged()?;
    // A served checkpoint for this very tree stays: it may carry witness cosignatures since.
    let served_note = served.map(|(c, text)| (c.to_text(), text));
    let body = Checkpoint {
        origin,
        size,
        root,
        extensions: Vec::new(),
    };
    let same_tree = served_note
        .as_ref()
        .filter(|(text, _)| *text == body.to_text())
        .map(|(_, note)| note.as_str());
    let (to_serve, cosigned) = match witnessing {
        None => (same_tree.is_none().then_some(note), Vec::new()),
        Some(w) => match same_tree.map(|served| quorum_in(w.policy, served)) {
            Some(Some(names)) => (None, names),
            _ => {
                let (asked, signed) = ask_witnesses(store, w, &note, &body, out)?;
                let names = cosigners(w.policy, &asked);
                if !asked.quorum_met() {
                    return Err(PublishError::Unwitnessed(Unwitnessed {
                        size,
                        quorum: w.policy.describe(),
                        witnesses: w
                            .policy
                            .witnesses
                            .iter()
                            .zip(asked.results)
                            .map(|(w, r)| (w.name.clone(), r.map(|_| ())))
                            .collect(),
                    }));
                }
                (Some(asked.cosigned(&signed).to_text()), names)
            }
        },
    };
    if let Some(note) = to_serve {
        if witnessing.is_some() {
            unchanged()?;
        }
        let path = out.join(CHECKPOINT);
        write_public(&path, note.as_bytes()).map_err(io_err(&path))?;
        sync_dir(out).map_err(io_err(out))?;
        writer.written += 1;
    }
    Ok(Published {
        size,
        root,
        signed,
        written: writer.written,
        cosigned_by: cosigned,
    })
}

/// The names of the policy's witnesses that cosigned `served` (a signed note), if they meet
/// its quorum.
fn quorum_in(policy: &WitnessPolicy, served: &str) -> Option<Vec<String>> {
    let note = Note::parse(served.as_bytes()).ok()?;
    let keys: Vec<_> = policy.witnesses.iter().map(|w| w.key.clone()).collect();
    let by: Vec<bool> = cosigned_by(&note, &keys)
        .ok()?
        .iter()
        .map(Option::is_some)
        .collect();
    policy.is_met(&by).then(|| {
        policy
            .witnesses
            .iter()
            .zip(&by)
            .filter(|(_, &b)| b)
            .map(|(w, _)| w.name.clone())
            .collect()
    })
}

fn cosigners(policy: &WitnessPolicy, asked: &Asked) -> Vec<String> {
    policy
        .witnesses
        .iter()
        .zip(&asked.results)
        .filter(|(_, r)| r.is_ok())
        .map(|(w, _)| w.name.clone())
        .collect()
}

/// Asks the policy's witnesses to cosign `note`, proving consistency from the tiles just written
/// to `out`, and records the size each one cosigned. Returns what they did and the signed note.
fn ask_witnesses(
    store: &mut Store,
    w: &Witnessing<'_>,
    note: &str,
    body: &Checkpoint,
    out: &Path,
) -> Result<(Asked, Note), PublishError> {
    let keys: Vec<[u8; 32]> = w.policy.witnesses.iter().map(|w| *w.key.public()).collect();
    let known = store.witness_sizes(&keys)?;
    let signed = Note::parse(note.as_bytes())
        .map_err(|e| PublishError::Refused(format!("the log's own checkpoint: {e}")))?;
    let size = body.size;
    let proof = |old: u64| -> Result<Vec<Hash>, String> {
        let mut reader = TileReader::new(Dir(out), size);
        match merkle::consistency_proof(&mut reader, old, size) {
            Ok(Ok(p)) => Ok(p),
            Ok(Err(e)) => Err(e.to_string()),
            Err(e) => Err(e.to_string()),
        }
    };
    let deadline = Instant::now() + w.timeout;
    let asked = witness::ask_all(
        w.policy,
        w.transport,
        &signed,
        body,
        &known,
        &proof,
        deadline,
    );
    for (key, r) in keys.iter().zip(&asked.results) {
        if r.is_ok() {
            store.record_witness(key, size)?;
        }
    }
    Ok((asked, signed))
}

/// Collects hashes into tiles level by level and writes each tile when it is complete.
struct TileWriter<'a> {
    out: &'a Path,
    /// The size the directory already serves: whole tiles below it exist and are not rewritten.
    published: u64,
    written: u64,
    /// The hashes of the current, incomplete tile at each level.
    levels: Vec<Vec<Hash>>,
    bundle: Vec<u8>,
    bundle_len: u64,
}

impl TileWriter<'_> {
    fn push_entry(&mut self, index: u64, body: &[u8]) -> Result<(), PublishError> {
        tiles::push_entry(&mut self.bundle, body);
        self.bundle_len += 1;
        if self.bundle_len == WIDTH {
            self.flush_bundle(index / WIDTH, WIDTH as u16)?;
        }
        Ok(())
    }

    fn push_hash(&mut self, level: u8, h: Hash) {
        let l = usize::from(level);
        if self.levels.len() <= l {
            self.levels.resize_with(l + 1, Vec::new);
        }
        self.levels[l].push(h);
    }

    /// Writes every tile that the tree of `size` leaves has just filled.
    fn flush_full(&mut self, size: u64) -> Result<(), PublishError> {
        for l in 0..self.levels.len() {
            if self.levels[l].len() as u64 == WIDTH {
                let hashes = std::mem::take(&mut self.levels[l]);
                let shift = u32::from(HEIGHT) * l as u32;
                let index = (size >> shift) / WIDTH - 1;
                let tile = TileId {
                    level: Some(l as u8),
                    index,
                    width: WIDTH as u16,
                };
                let end = leaves_below(index + 1, shift + u32::from(HEIGHT));
                self.write(&tile, end, &tiles::encode_hashes(&hashes))?;
            }
        }
        Ok(())
    }

    fn flush_bundle(&mut self, index: u64, width: u16) -> Result<(), PublishError> {
        let tile = TileId {
            level: None,
            index,
            width,
        };
        let end = index * WIDTH + u64::from(width);
        let bytes = std::mem::take(&mut self.bundle);
        self.bundle_len = 0;
        self.write(&tile, end, &bytes)
    }

    /// Writes a tile. Files a served checkpoint names are never touched; any other file by this
    /// name, or an older partial of this tile beyond the served size, may be left by an
    /// interrupted run of another tree and is made to hold these bytes (or its prefix).
    fn write(&mut self, tile: &TileId, end: u64, bytes: &[u8]) -> Result<(), PublishError> {
        let rel = tile.path();
        if end <= self.published && self.out.join(&rel).exists() {
            return Ok(());
        }
        self.put(&rel, bytes)?;
        for (w, stale) in partials_beside(self.out, tile)? {
            if w >= tile.width || partial_end(tile, w) <= self.published {
                continue;
            }
            let prefix = match tile.level {
                Some(_) => &bytes[..usize::from(w) * 32],
                None => {
                    let entries = tiles::bundle_entries(bytes, tile.width)
                        .expect("bundles written here are well formed");
                    let len: usize = entries[..usize::from(w)].iter().map(|e| 2 + e.len()).sum();
                    &bytes[..len]
                }
            };
            self.put(&stale, prefix)?;
        }
        Ok(())
    }

    /// Writes `bytes` at `rel` unless it already holds exactly them. What is there is read as any
    /// file of a log directory: a link or a FIFO on the way is refused, never written through.
    fn put(&mut self, rel: &str, bytes: &[u8]) -> Result<(), PublishError> {
        let path = self.out.join(rel);
        match in_dir::read(self.out, rel, bytes.len() as u64) {
            Ok(have) if have == bytes => return Ok(()),
            Err(error @ FileError::NotRegular { .. }) => {
                return Err(PublishError::Read { path, error })
            }
            _ => {}
        }
        write_public_unsynced(&path, bytes).map_err(io_err(&path))?;
        self.written += 1;
        Ok(())
    }

    /// Writes the partial bundle and the partial tile of each level for a tree of `size`.
    fn flush_partial(&mut self, size: u64) -> Result<(), PublishError> {
        if self.bundle_len > 0 {
            self.flush_bundle(size / WIDTH, self.bundle_len as u16)?;
        }
        for l in 0..self.levels.len() {
            let hashes = std::mem::take(&mut self.levels[l]);
            if hashes.is_empty() {
                continue;
            }
            let count = size >> (u32::from(HEIGHT) * l as u32);
            let tile = TileId {
                level: Some(l as u8),
                index: count / WIDTH,
                width: hashes.len() as u16,
            };
            self.write(&tile, size, &tiles::encode_hashes(&hashes))?;
        }
        Ok(())
    }
}

/// The partial versions `N.p/W` present beside a tile: (W, path inside `out`).
fn partials_beside(out: &Path, tile: &TileId) -> Result<Vec<(u16, String)>, PublishError> {
    let whole = TileId {
        width: WIDTH as u16,
        ..*tile
    };
    let rel = format!("{}.p", whole.path());
    let dir = out.join(&rel);
    let read = match std::fs::read_dir(&dir) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(&dir)(e)),
    };
    let mut found = Vec::new();
    for item in read {
        let item = item.map_err(io_err(&dir))?;
        let name = item.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with('0') || !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(w) = name.parse::<u16>() {
            if (1..WIDTH as u16).contains(&w) {
                found.push((w, format!("{rel}/{name}")));
            }
        }
    }
    Ok(found)
}

/// The number of entries a partial of `tile` of width `w` covers up to.
fn partial_end(tile: &TileId, w: u16) -> u64 {
    let shift = u32::from(HEIGHT) * u32::from(tile.level.unwrap_or(0));
    leaves_below(tile.index * WIDTH + u64::from(w), shift)
}

/// `n << shift`: the leaves below `n` nodes of height `shift`, saturating past `u64`.
fn leaves_below(n: u64, shift: u32) -> u64 {
    if shift >= 64 {
        return u64::MAX;
    }
    n.saturating_mul(1 << shift)
}

/// The inclusion receipt for entry `index` of the log in `dir`, as its checkpoint stands.
/// The entry itself goes in the receipt's `extra` line, so the receipt stands alone.
pub fn prove(dir: &Path, index: u64) -> Result<Receipt, PublishError> {
    let path = dir.join(CHECKPOINT);
    let bytes = in_dir::read(dir, CHECKPOINT, crate::note::MAX_NOTE as u64).map_err(|error| {
        PublishError::Read {
            path: path.clone(),
            error,
        }
    })?;
    let note = Note::parse(&bytes)
        .map_err(|e| PublishError::CannotProve(format!("{}: {e}", path.display())))?;
    let c = Checkpoint::parse(&note.text)
        .map_err(|e| PublishError::CannotProve(format!("{}: {e}", path.display())))?;
    let mut reader = TileReader::new(Dir(dir), c.size);
    let proof = match merkle::inclusion_proof(&mut reader, index, c.size)? {
        Ok(p) => p,
        Err(e) => return Err(PublishError::CannotProve(e.to_string())),
    };
    let entry = reader.entry(index)?;
    // A receipt that does not verify against its own directory is never handed out.
    merkle::verify_inclusion(index, c.size, &Hash::leaf(&entry), &proof, &c.root).map_err(|e| {
        PublishError::CannotProve(format!(
            "the directory's tiles do not prove entry {index} ({e}); run verify-log on it"
        ))
    })?;
    Ok(Receipt {
        extra: Some(entry),
        index,
        proof,
        checkpoint: String::from_utf8_lossy(&bytes).into_owned(),
    })
}
