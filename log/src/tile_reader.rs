//! Reading a published log's tiles for one tree size: subtree hashes for proofs, and the entries
//! out of their bundles. Every walk of the bundles (verify-log, mirror, lookup, prove) reads them
//! here, from a [`LogSource`].
//!
//! A partial tile that is not there is read from the whole tile when the log has grown past it
//! (C2SP tlog-tiles lets a log drop partial tiles once the whole one exists): its first W hashes,
//! or entries, are the partial tile's.

use std::collections::HashMap;
use std::fmt;
use std::io;

use crate::hash::Hash;
use crate::merkle::HashSource;
use crate::source::{FileError, LogSource};
use crate::tiles::{self, TileError, TileId, HEIGHT, MAX_ENTRY, WIDTH};

/// The largest entry bundle read: 256 entries of the largest size, each with its length.
const MAX_BUNDLE: u64 = WIDTH * (2 + MAX_ENTRY as u64);
/// Bundles read ahead, per reader thread, of the one being consumed.
const QUEUED: usize = 2;

/// A tile that could not be read or is not what its name promises.
#[derive(Debug)]
pub struct TileReadError {
    pub tile: String,
    pub fault: TileFault,
    pub detail: String,
}

/// What was wrong with a tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TileFault {
    /// The directory does not have it.
    Missing,
    /// It is there, and its bytes cannot be what its name says.
    Damaged,
    /// It could not be read (permissions, I/O), or is not a regular file.
    Unreadable,
}

impl fmt::Display for TileReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.tile, self.detail)
    }
}

impl std::error::Error for TileReadError {}

/// The tiles of a log, as they stand for a tree of `size` entries.
pub struct TileReader<S> {
    source: S,
    size: u64,
    cache: HashMap<(u8, u64), Vec<Hash>>,
}

impl<S: LogSource> TileReader<S> {
    pub fn new(source: S, size: u64) -> TileReader<S> {
        TileReader {
            source,
            size,
            cache: HashMap::new(),
        }
    }

    /// The tile at `level` holding hash number `n` of that level, at this tree size: whole if the
    /// tree has filled it, else the partial tile of this size.
    fn tile_for(&self, level: Option<u8>, n: u64) -> TileId {
        let shift = u32::from(HEIGHT) * u32::from(level.unwrap_or(0));
        let count = self.size >> shift;
        let index = n / WIDTH;
        let width = if index < count / WIDTH {
            WIDTH as u16
        } else {
            (count % WIDTH) as u16
        };
        TileId {
            level,
            index,
            width,
        }
    }

    fn hashes(&mut self, level: u8, n: u64) -> Result<&[Hash], TileReadError> {
        let tile = self.tile_for(Some(level), n);
        if !self.cache.contains_key(&(level, tile.index)) {
            let mut bytes = Vec::new();
            let read = read_hash_tile(&self.source, &tile, &mut bytes).map_err(|(at, e)| {
                TileReadError {
                    tile: at,
                    fault: read_fault(&e),
                    detail: e.to_string(),
                }
            })?;
            let hashes = tiles::decode_hashes(&bytes, tile.width).map_err(|e| TileReadError {
                tile: read,
                fault: TileFault::Damaged,
                detail: e.to_string(),
            })?;
            // Proofs touch a handful of tiles; a bound keeps a long walk from hoarding them.
            if self.cache.len() >= 64 {
                self.cache.clear();
            }
            self.cache.insert((level, tile.index), hashes);
        }
        Ok(&self.cache[&(level, tile.index)])
    }

    /// The hashes at `level` that come before hash number `n` of that level in its tile: what a
    /// tree of `n << (8 * level)` entries has of the tile that `n` falls in.
    pub fn hashes_before(&mut self, level: u8, n: u64) -> Result<Vec<Hash>, TileReadError> {
        let k = (n % WIDTH) as usize;
        if k == 0 {
            return Ok(Vec::new());
        }
        let tile = self.tile_for(Some(level), n - 1);
        let hashes = self.hashes(level, n - 1)?;
        hashes
            .get(..k)
            .map(<[Hash]>::to_vec)
            .ok_or_else(|| TileReadError {
                tile: tile.path(),
                fault: TileFault::Damaged,
                detail: "the tile is too short for the tree size".into(),
            })
    }

    /// The bytes of entry `index`, out of its bundle.
    pub fn entry(&self, index: u64) -> Result<Vec<u8>, TileReadError> {
        let beyond = || TileReadError {
            tile: "tile/entries".into(),
            fault: TileFault::Missing,
            detail: format!("entry {index} is not in a log of {} entries", self.size),
        };
        if index >= self.size {
            return Err(beyond());
        }
        let mut bytes = Vec::new();
        let bundle = BundleReader::new(&self.source, self.size)
            .read(index / WIDTH, &mut bytes)
            .map_err(|e| TileReadError {
                fault: match &e.fault {
                    BundleFault::Read(e) => read_fault(e),
                    BundleFault::Format(_) | BundleFault::OlderDiffers => TileFault::Damaged,
                    BundleFault::List(_) => TileFault::Unreadable,
                },
                detail: e.fault.to_string(),
                tile: e.file,
            })?;
        bundle
            .entries
            .get((index % WIDTH) as usize)
            .map(|e| e.to_vec())
            .ok_or_else(beyond)
    }
}

/// What a failure to read a tile file means for a proof.
fn read_fault(e: &FileError) -> TileFault {
    match e {
        FileError::Missing => TileFault::Missing,
        FileError::TooLarge { .. } => TileFault::Damaged,
        FileError::NotRegular { .. } | FileError::Fetch(_) | FileError::Io(_) => {
            TileFault::Unreadable
        }
    }
}

/// Reads hash tile `tile` into `buf`, or the first `tile.width` hashes of the whole tile when a
/// partial one is missing. Returns the path read; an error names the path that failed.
pub fn read_hash_tile(
    source: &impl LogSource,
    tile: &TileId,
    buf: &mut Vec<u8>,
) -> Result<String, (String, FileError)> {
    let want = u64::from(tile.width) * 32;
    let path = tile.path();
    match source.read_into(&path, want, buf) {
        Err(FileError::Missing) if tile.is_partial() => {
            let whole = tile.whole().path();
            source
                .read_into(&whole, WIDTH * 32, buf)
                .map_err(|e| (whole.clone(), e))?;
            if buf.len() as u64 >= want {
                buf.truncate(want as usize);
            }
            Ok(whole)
        }
        Err(e) => Err((path, e)),
        Ok(()) => Ok(path),
    }
}

impl<S: LogSource> HashSource for TileReader<S> {
    type Error = TileReadError;

    fn subtree(&mut self, level: u8, index: u64) -> Result<Hash, TileReadError> {
        // A subtree of height `level` is the root over 2^j consecutive hashes of the tile level
        // below it, j = level mod 8.
        let tile_level = level / HEIGHT;
        let j = level % HEIGHT;
        let first = index << j;
        let hashes = self.hashes(tile_level, first)?;
        let at = (first % WIDTH) as usize;
        let want = 1usize << j;
        let Some(span) = hashes.get(at..at + want) else {
            return Err(TileReadError {
                tile: self.tile_for(Some(tile_level), first).path(),
                fault: TileFault::Damaged,
                detail: "the tile is too short for the tree size".into(),
            });
        };
        let mut row = span.to_vec();
        while row.len() > 1 {
            row = row
                .chunks_exact(2)
                .map(|p| Hash::node(&p[0], &p[1]))
                .collect();
        }
        Ok(row[0])
    }
}

/// An entry bundle, or an older partial copy of one, that could not be read or is not what its
/// name promises.
#[derive(Debug)]
pub struct BundleError {
    /// The file at fault, by its path inside the directory: the bundle, one of its older partial
    /// copies, or the directory holding those.
    pub file: String,
    pub fault: BundleFault,
}

/// What was wrong with a bundle: each is its own rule of a log (docs/SPEC-log.md).
#[derive(Debug)]
pub enum BundleFault {
    /// The file could not be read: missing, larger than a bundle can be, not a regular file, or
    /// an I/O error.
    Read(FileError),
    /// Its bytes are not as many length-prefixed entries as its name says; a truncation names
    /// the entry it cuts.
    Format(TileError),
    /// An older partial copy `N.p/W` that is not the first W entries of the bundle.
    OlderDiffers,
    /// The directory of older partial copies could not be listed.
    List(io::Error),
}

impl fmt::Display for BundleFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BundleFault::Read(e) => e.fmt(f),
            BundleFault::Format(e) => e.fmt(f),
            BundleFault::OlderDiffers => {
                f.write_str("differs from the first entries of the bundle that holds them")
            }
            BundleFault::List(e) => e.fmt(f),
        }
    }
}

impl fmt::Display for BundleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.fault)
    }
}

impl std::error::Error for BundleError {}

/// One entry bundle as read.
pub struct Bundle<'b> {
    pub tile: TileId,
    pub bytes: &'b [u8],
    /// Its entries, slices of `bytes`; entry `i` is number `tile.index * 256 + i` of the log.
    pub entries: Vec<&'b [u8]>,
}

/// The entry bundles of a log, as they stand for a tree of `size` entries: bundle `n` is whole if
/// the tree has filled it, else the partial bundle of this size.
#[derive(Debug, Clone, Copy)]
pub struct BundleReader<S> {
    source: S,
    size: u64,
}

impl<S: LogSource> BundleReader<S> {
    pub fn new(source: S, size: u64) -> Self {
        BundleReader { source, size }
    }

    /// How many bundles the tree has.
    pub fn count(&self) -> u64 {
        self.size.div_ceil(WIDTH)
    }

    fn tile(&self, n: u64) -> TileId {
        let width = if n < self.size / WIDTH {
            WIDTH as u16
        } else {
            (self.size % WIDTH) as u16
        };
        TileId {
            level: None,
            index: n,
            width,
        }
    }

    /// Reads bundle `n` into `buf`, a buffer the caller reuses, and splits it into its entries.
    pub fn read<'b>(&self, n: u64, buf: &'b mut Vec<u8>) -> Result<Bundle<'b>, BundleError> {
        let tile = self.tile(n);
        let path = tile.path();
        let read = match self.source.read_into(&path, MAX_BUNDLE, buf) {
            Err(FileError::Missing) if tile.is_partial() => {
                let whole = tile.whole().path();
                self.source
                    .read_into(&whole, MAX_BUNDLE, buf)
                    .map_err(|e| BundleError {
                        file: whole.clone(),
                        fault: BundleFault::Read(e),
                    })?;
                let fault = |fault| BundleError {
                    file: whole.clone(),
                    fault,
                };
                let end = tiles::bundle_prefix(buf, tile.width)
                    .map_err(|e| fault(BundleFault::Format(e)))?;
                buf.truncate(end);
                whole
            }
            Err(e) => {
                return Err(BundleError {
                    file: path,
                    fault: BundleFault::Read(e),
                })
            }
            Ok(()) => path,
        };
        let entries = tiles::bundle_entries(buf, tile.width).map_err(|e| BundleError {
            file: read,
            fault: BundleFault::Format(e),
        })?;
        Ok(Bundle {
            tile,
            bytes: buf,
            entries,
        })
    }

    /// Holds the older partial copies of a bundle (`N.p/W`, W below its width) to its first W
    /// entries. Wider ones belong to no tree of this size and are not looked at.
    pub fn check_older(&self, bundle: &Bundle<'_>) -> Result<(), BundleError> {
        let older = self
            .source
            .older_partials(&bundle.tile)
            .map_err(|e| BundleError {
                file: bundle.tile.partials_dir(),
                fault: BundleFault::List(e),
            })?;
        for partial in older {
            let file = partial.path();
            let w = usize::from(partial.width);
            let end: usize = bundle.entries[..w].iter().map(|e| 2 + e.len()).sum();
            // One byte more than the prefix: a longer copy is refused, not cut to fit.
            match self.source.read(&file, end as u64 + 1) {
                Ok(got) if got == bundle.bytes[..end] => {}
                Ok(_) => {
                    return Err(BundleError {
                        file,
                        fault: BundleFault::OlderDiffers,
                    })
                }
                Err(e) => {
                    return Err(BundleError {
                        file,
                        fault: BundleFault::Read(e),
                    })
                }
            }
        }
        Ok(())
    }

    /// Reads every bundle from number `first` on, on as many threads as the source asks for,
    /// turns each into a `T` with `load` on the thread that read it, and hands them to `take` in
    /// order; the first error ends the walk. Memory holds, per thread, the bundle being read and
    /// [`QUEUED`] loaded ones. With no thread to be had, every bundle is read on the caller's.
    pub fn read_in_order<T, E>(
        &self,
        first: u64,
        load: impl Fn(Bundle<'_>) -> Result<T, E> + Sync,
        mut take: impl FnMut(T) -> Result<(), E>,
    ) -> Result<(), E>
    where
        T: Send,
        E: Send + From<BundleError>,
    {
        let count = self.count();
        let threads = self.source.readers().max(1);
        let load = &load;
        let read = move |n: u64, buf: &mut Vec<u8>| load(self.read(n, buf)?);
        std::thread::scope(|scope| {
            let mut inboxes = Vec::new();
            for t in 0..threads {
                let (tx, rx) = std::sync::mpsc::sync_channel(QUEUED);
                let spawned = std::thread::Builder::new().spawn_scoped(scope, move || {
                    let mut buf = Vec::new();
                    for n in (first + t..count).step_by(threads as usize) {
                        let loaded = read(n, &mut buf);
                        let failed = loaded.is_err();
                        if tx.send(loaded).is_err() || failed {
                            break;
                        }
                    }
                });
                match spawned {
                    Ok(_) => inboxes.push(rx),
                    Err(_) => {
                        inboxes.clear();
                        break;
                    }
                }
            }
            let mut buf = Vec::new();
            for n in first..count {
                let loaded = match inboxes.get(((n - first) % threads) as usize) {
                    Some(rx) => rx
                        .recv()
                        .expect("a reader sends every bundle until one fails")?,
                    None => read(n, &mut buf)?,
                };
                take(loaded)?;
            }
            Ok(())
        })
    }

    /// Every entry in order, with its index, one bundle read at a time; the first error ends it.
    pub fn entries(self) -> Entries<S> {
        Entries {
            reader: self,
            next_bundle: 0,
            next_index: 0,
            buf: Vec::new(),
            pending: Vec::new().into_iter(),
            failed: false,
        }
    }
}

/// The entries of a log: see [`BundleReader::entries`].
pub struct Entries<S> {
    reader: BundleReader<S>,
    next_bundle: u64,
    next_index: u64,
    buf: Vec<u8>,
    pending: std::vec::IntoIter<Vec<u8>>,
    failed: bool,
}

impl<S: LogSource> Iterator for Entries<S> {
    type Item = Result<(u64, Vec<u8>), BundleError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(entry) = self.pending.next() {
                let index = self.next_index;
                self.next_index += 1;
                return Some(Ok((index, entry)));
            }
            if self.failed || self.next_bundle == self.reader.count() {
                return None;
            }
            match self.reader.read(self.next_bundle, &mut self.buf) {
                Ok(bundle) => {
                    let entries: Vec<Vec<u8>> = bundle.entries.iter().map(|e| e.to_vec()).collect();
                    self.pending = entries.into_iter();
                    self.next_bundle += 1;
                }
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::source::Dir;

    /// A directory with the bundles of a log of `size` entries, entry `i` being `i` in decimal.
    fn log_of(size: u64) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let reader = BundleReader::new(Dir(dir.path()), size);
        for n in 0..reader.count() {
            let tile = reader.tile(n);
            let mut bytes = Vec::new();
            for i in 0..u64::from(tile.width) {
                tiles::push_entry(&mut bytes, (n * WIDTH + i).to_string().as_bytes());
            }
            put(dir.path(), &tile.path(), &bytes);
        }
        dir
    }

    fn put(dir: &Path, rel: &str, bytes: &[u8]) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn entries_come_in_order_with_their_index() {
        let dir = log_of(WIDTH + 2);
        let read: Vec<(u64, Vec<u8>)> = BundleReader::new(Dir(dir.path()), WIDTH + 2)
            .entries()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(read.len() as u64, WIDTH + 2);
        for (i, (index, bytes)) in read.iter().enumerate() {
            assert_eq!(*index, i as u64);
            assert_eq!(bytes, i.to_string().as_bytes());
        }
        assert_eq!(BundleReader::new(Dir(dir.path()), 0).entries().count(), 0);
    }

    #[test]
    fn a_damaged_bundle_is_named_with_the_entry_it_cuts() {
        let dir = log_of(3);
        put(
            dir.path(),
            "tile/entries/000.p/3",
            &[0, 1, b'0', 0, 1, b'1', 0, 5],
        );
        let mut entries = BundleReader::new(Dir(dir.path()), 3).entries();
        let e = entries.next().unwrap().unwrap_err();
        assert_eq!(e.file, "tile/entries/000.p/3");
        assert!(matches!(
            e.fault,
            BundleFault::Format(TileError::TruncatedEntry { entry: 2, .. })
        ));
        assert!(entries.next().is_none());
        let e = BundleReader::new(Dir(dir.path()), 4)
            .entries()
            .next()
            .unwrap();
        assert!(matches!(
            e.unwrap_err().fault,
            BundleFault::Read(FileError::Missing)
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_in_place_of_a_bundle_is_not_followed() {
        let dir = log_of(2);
        let other = log_of(2);
        let bundle = dir.path().join("tile/entries/000.p/2");
        std::fs::remove_file(&bundle).unwrap();
        std::os::unix::fs::symlink(other.path().join("tile/entries/000.p/2"), &bundle).unwrap();
        let e = BundleReader::new(Dir(dir.path()), 2)
            .entries()
            .next()
            .unwrap();
        assert!(matches!(
            e.unwrap_err().fault,
            BundleFault::Read(FileError::NotRegular { .. })
        ));
    }

    #[test]
    fn older_partials_must_be_prefixes() {
        let dir = log_of(5);
        let reader = BundleReader::new(Dir(dir.path()), 5);
        let mut buf = Vec::new();
        let bundle = reader.read(0, &mut buf).unwrap();
        let prefix = &bundle.bytes[..6];
        put(dir.path(), "tile/entries/000.p/2", prefix);
        // Not a canonical name, or wider than this size: not looked at.
        put(dir.path(), "tile/entries/000.p/03", b"junk");
        put(dir.path(), "tile/entries/000.p/7", b"junk");
        reader.check_older(&bundle).unwrap();
        put(dir.path(), "tile/entries/000.p/1", &prefix[..2]);
        let e = reader.check_older(&bundle).unwrap_err();
        assert_eq!(e.file, "tile/entries/000.p/1");
        assert!(matches!(e.fault, BundleFault::OlderDiffers));
        let older = Dir(dir.path()).older_partials(&bundle.tile).unwrap();
        let widths: Vec<u16> = older.iter().map(|t| t.width).collect();
        assert_eq!(widths, [1, 2]);
    }

    #[test]
    fn bundles_read_on_threads_arrive_in_order_until_one_fails() {
        let size = 5 * WIDTH + 3;
        let dir = log_of(size);
        let reader = BundleReader::new(Dir(dir.path()), size);
        let mut seen = Vec::new();
        reader
            .read_in_order(
                0,
                |b| Ok::<_, BundleError>((b.tile.index, b.entries.len())),
                |got| {
                    seen.push(got);
                    Ok(())
                },
            )
            .unwrap();
        let want: Vec<(u64, usize)> = (0..5).map(|n| (n, 256)).chain([(5, 3)]).collect();
        assert_eq!(seen, want);

        std::fs::remove_file(dir.path().join("tile/entries/003")).unwrap();
        let mut seen = Vec::new();
        let e = reader
            .read_in_order(
                0,
                |b| Ok::<_, BundleError>(b.tile.index),
                |n| {
                    seen.push(n);
                    Ok(())
                },
            )
            .unwrap_err();
        assert_eq!(e.file, "tile/entries/003");
        assert_eq!(seen, [0, 1, 2]);

        // From a later bundle on, the earlier ones are not read.
        let mut seen = Vec::new();
        reader
            .read_in_order(
                4,
                |b| Ok::<_, BundleError>(b.tile.index),
                |n| {
                    seen.push(n);
                    Ok(())
                },
            )
            .unwrap();
        assert_eq!(seen, [4, 5]);
    }

    #[test]
    fn a_missing_partial_is_read_from_the_whole_tile() {
        let dir = log_of(WIDTH);
        // The log grew from 3 entries to 256, and dropped its partial bundle and tile.
        let mut buf = Vec::new();
        let bundle = BundleReader::new(Dir(dir.path()), 3)
            .read(0, &mut buf)
            .unwrap();
        assert_eq!(bundle.entries, [&b"0"[..], b"1", b"2"]);
        let hashes: Vec<Hash> = (0..WIDTH)
            .map(|i| Hash::leaf(i.to_string().as_bytes()))
            .collect();
        put(dir.path(), "tile/0/000", &tiles::encode_hashes(&hashes));
        let mut reader = TileReader::new(Dir(dir.path()), 3);
        assert_eq!(reader.hashes_before(0, 3).unwrap(), hashes[..3]);
        // A partial that is there is read, not the whole tile.
        put(
            dir.path(),
            "tile/0/000.p/3",
            &tiles::encode_hashes(&hashes[5..8]),
        );
        let mut reader = TileReader::new(Dir(dir.path()), 3);
        assert_eq!(reader.hashes_before(0, 3).unwrap(), hashes[5..8]);
        // A whole bundle too short for the partial is named.
        put(dir.path(), "tile/entries/001", &[0, 1, b'x']);
        let e = BundleReader::new(Dir(dir.path()), WIDTH + 2)
            .read(1, &mut buf)
            .err()
            .unwrap();
        assert_eq!(e.file, "tile/entries/001");
        assert!(matches!(
            e.fault,
            BundleFault::Format(TileError::TruncatedEntry { entry: 1, .. })
        ));
    }
}
