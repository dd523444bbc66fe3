//! Reading a published log directory's tiles for one tree size: subtree hashes for proofs, and
//! entries out of their bundles.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::hash::Hash;
use crate::in_dir::{self, InDirError};
use crate::merkle::HashSource;
use crate::tiles::{self, TileId, HEIGHT, MAX_ENTRY, WIDTH};

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

/// The tiles of a log directory, as they stand for a tree of `size` entries.
pub struct TileReader {
    dir: PathBuf,
    size: u64,
    cache: HashMap<(u8, u64), Vec<Hash>>,
}

impl TileReader {
    pub fn new(dir: &Path, size: u64) -> TileReader {
        TileReader {
            dir: dir.to_path_buf(),
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

    fn read(&self, tile: &TileId, max: u64) -> Result<Vec<u8>, TileReadError> {
        in_dir::read(&self.dir, &tile.path(), max).map_err(|e| TileReadError {
            tile: tile.path(),
            fault: match e {
                InDirError::Missing => TileFault::Missing,
                InDirError::TooLarge { .. } => TileFault::Damaged,
                InDirError::NotRegular { .. } | InDirError::Io(_) => TileFault::Unreadable,
            },
            detail: e.to_string(),
        })
    }

    fn hashes(&mut self, level: u8, n: u64) -> Result<&[Hash], TileReadError> {
        let tile = self.tile_for(Some(level), n);
        if !self.cache.contains_key(&(level, tile.index)) {
            let bytes = self.read(&tile, WIDTH * 32)?;
            let hashes = tiles::decode_hashes(&bytes, tile.width).map_err(|e| TileReadError {
                tile: tile.path(),
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

    /// The bytes of entry `index`, out of its bundle.
    pub fn entry(&self, index: u64) -> Result<Vec<u8>, TileReadError> {
        if index >= self.size {
            return Err(TileReadError {
                tile: "tile/entries".into(),
                fault: TileFault::Missing,
                detail: format!("entry {index} is not in a log of {} entries", self.size),
            });
        }
        let tile = self.tile_for(None, index);
        let bytes = self.read(&tile, WIDTH * (2 + MAX_ENTRY as u64))?;
        let entries = tiles::bundle_entries(&bytes, tile.width).map_err(|e| TileReadError {
            tile: tile.path(),
            fault: TileFault::Damaged,
            detail: e.to_string(),
        })?;
        entries
            .get((index % WIDTH) as usize)
            .map(|e| e.to_vec())
            .ok_or_else(|| TileReadError {
                tile: tile.path(),
                fault: TileFault::Missing,
                detail: format!("entry {index} is not in a log of {} entries", self.size),
            })
    }
}

impl HashSource for TileReader {
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
