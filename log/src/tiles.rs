//! C2SP tlog-tiles: where each tile lives, what a hash tile and an entry bundle hold.
//!
//! A tile at level `L` holds up to 256 consecutive hashes of tree height `8·L`: level 0 holds leaf
//! hashes, level 1 the roots of whole level-0 tiles, and so on. A tile with fewer than 256 hashes
//! is partial and is served at `…/<N>.p/<W>`; only whole tiles are hashed into the level above.

use std::fmt;

use crate::hash::Hash;

/// Hashes (or entries) in a whole tile.
pub const WIDTH: u64 = 256;
/// Tree height covered by one tile level.
pub const HEIGHT: u8 = 8;
/// The largest entry a bundle can hold: its length is a big-endian uint16.
pub const MAX_ENTRY: usize = u16::MAX as usize;

/// One tile: hashes at `level`, or the entry bundle when `level` is `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TileId {
    pub level: Option<u8>,
    pub index: u64,
    /// 1..=256; below 256 the tile is partial.
    pub width: u16,
}

impl TileId {
    /// The path below the log's root, e.g. `tile/0/x001/x234/067.p/8` or `tile/entries/000`.
    pub fn path(&self) -> String {
        let mut p = String::from("tile/");
        match self.level {
            Some(l) => p.push_str(&l.to_string()),
            None => p.push_str("entries"),
        }
        p.push('/');
        push_index(&mut p, self.index);
        if u64::from(self.width) < WIDTH {
            p.push_str(".p/");
            p.push_str(&self.width.to_string());
        }
        p
    }

    /// The whole tile this one is (or will become) a part of.
    pub fn whole(&self) -> TileId {
        TileId {
            width: WIDTH as u16,
            ..*self
        }
    }

    /// The directory its partial versions live in, e.g. `tile/0/x001/x234/067.p`.
    pub fn partials_dir(&self) -> String {
        format!("{}.p", self.whole().path())
    }

    pub fn is_partial(&self) -> bool {
        u64::from(self.width) < WIDTH
    }

    /// Every tile a log of `size` entries has, entry bundles first, then hash tiles level by
    /// level; the partial tiles are those of this size.
    pub fn all(size: u64) -> impl Iterator<Item = TileId> {
        let bundles = tiles_of(None, size);
        // Eight levels of 2^8 cover every u64 size; the shift never reaches 64.
        let levels = (0u8..8).map_while(move |level| {
            let count = size >> (u32::from(HEIGHT) * u32::from(level));
            (count > 0).then(|| tiles_of(Some(level), count))
        });
        bundles.chain(levels.flatten())
    }
}

/// The tiles holding `count` hashes (or entries) at one level.
fn tiles_of(level: Option<u8>, count: u64) -> impl Iterator<Item = TileId> {
    let whole = count / WIDTH;
    let rest = (count % WIDTH) as u16;
    (0..whole)
        .map(move |index| TileId {
            level,
            index,
            width: WIDTH as u16,
        })
        .chain((rest > 0).then_some(TileId {
            level,
            index: whole,
            width: rest,
        }))
}

impl fmt::Display for TileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.path())
    }
}

/// `N` as three-digit groups, every group but the last prefixed with `x`: 1234067 is
/// `x001/x234/067`.
fn push_index(out: &mut String, n: u64) {
    let mut groups = vec![n % 1000];
    let mut rest = n / 1000;
    while rest > 0 {
        groups.push(rest % 1000);
        rest /= 1000;
    }
    for (i, g) in groups.iter().rev().enumerate() {
        if i + 1 < groups.len() {
            out.push_str(&format!("x{g:03}/"));
        } else {
            out.push_str(&format!("{g:03}"));
        }
    }
}

/// The bytes of a hash tile: the hashes, concatenated.
pub fn encode_hashes(hashes: &[Hash]) -> Vec<u8> {
    hashes.iter().flat_map(|h| h.0).collect()
}

/// Why a tile's bytes are not what its name promises.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TileError {
    /// A hash tile whose length is not 32 times its width.
    HashTileLength { expected: usize, found: usize },
    /// An entry bundle that ends inside an entry.
    TruncatedEntry { entry: usize, offset: usize },
    /// An entry bundle with more or fewer entries than its width.
    BundleCount { expected: usize, found: usize },
}

impl fmt::Display for TileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TileError::HashTileLength { expected, found } => {
                write!(
                    f,
                    "tile-length: {found} bytes where {expected} are expected"
                )
            }
            TileError::TruncatedEntry { entry, offset } => {
                write!(
                    f,
                    "bundle-truncated: entry {entry} runs past the end (at byte {offset})"
                )
            }
            TileError::BundleCount { expected, found } => write!(
                f,
                "bundle-count: {found} entries or more where the name says {expected}"
            ),
        }
    }
}

impl std::error::Error for TileError {}

/// The hashes of a hash tile of `width` hashes.
pub fn decode_hashes(bytes: &[u8], width: u16) -> Result<Vec<Hash>, TileError> {
    let expected = usize::from(width) * 32;
    if bytes.len() != expected {
        return Err(TileError::HashTileLength {
            expected,
            found: bytes.len(),
        });
    }
    Ok(bytes
        .chunks_exact(32)
        .map(|c| Hash(c.try_into().expect("32-byte chunk")))
        .collect())
}

/// Appends one entry to a bundle: its length as a big-endian uint16, then its bytes.
///
/// # Panics
/// If the entry is longer than [`MAX_ENTRY`]; entries are checked long before they get here.
pub fn push_entry(bundle: &mut Vec<u8>, entry: &[u8]) {
    let len = u16::try_from(entry.len()).expect("entries are at most 64 KiB - 1");
    bundle.extend_from_slice(&len.to_be_bytes());
    bundle.extend_from_slice(entry);
}

/// How many bytes the first `width` entries of a bundle take: a whole bundle read in place of a
/// partial one is cut there.
pub fn bundle_prefix(bytes: &[u8], width: u16) -> Result<usize, TileError> {
    let mut at = 0;
    for entry in 0..usize::from(width) {
        let truncated = TileError::TruncatedEntry { entry, offset: at };
        let head = bytes.get(at..at + 2).ok_or(truncated.clone())?;
        let end = at + 2 + usize::from(u16::from_be_bytes([head[0], head[1]]));
        if end > bytes.len() {
            return Err(truncated);
        }
        at = end;
    }
    Ok(at)
}

/// The entries of a bundle of `width` entries, each as a slice of `bytes`.
pub fn bundle_entries(bytes: &[u8], width: u16) -> Result<Vec<&[u8]>, TileError> {
    let mut out = Vec::with_capacity(usize::from(width));
    let mut at = 0;
    while at < bytes.len() {
        if out.len() == usize::from(width) {
            return Err(TileError::BundleCount {
                expected: usize::from(width),
                found: out.len() + 1,
            });
        }
        let truncated = TileError::TruncatedEntry {
            entry: out.len(),
            offset: at,
        };
        let Some(head) = bytes.get(at..at + 2) else {
            return Err(truncated);
        };
        let len = usize::from(u16::from_be_bytes([head[0], head[1]]));
        let Some(entry) = bytes.get(at + 2..at + 2 + len) else {
            return Err(truncated);
        };
        out.push(entry);
        at += 2 + len;
    }
    if out.len() != usize::from(width) {
        return Err(TileError::BundleCount {
            expected: usize::from(width),
            found: out.len(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(level: Option<u8>, index: u64, width: u16) -> TileId {
        TileId {
            level,
            index,
            width,
        }
    }

    #[test]
    fn paths_follow_the_spec_examples() {
        assert_eq!(id(Some(0), 1234067, 256).path(), "tile/0/x001/x234/067");
        assert_eq!(id(Some(1), 0, 256).path(), "tile/1/000");
        assert_eq!(id(Some(0), 1000, 256).path(), "tile/0/x001/000");
        assert_eq!(id(Some(2), 5, 8).path(), "tile/2/005.p/8");
        assert_eq!(id(None, 42, 1).path(), "tile/entries/042.p/1");
        assert_eq!(id(None, 999, 256).path(), "tile/entries/999");
        assert_eq!(id(None, 42, 1).partials_dir(), "tile/entries/042.p");
        assert_eq!(
            id(Some(0), 1234067, 256).partials_dir(),
            "tile/0/x001/x234/067.p"
        );
    }

    #[test]
    fn a_log_has_the_tiles_its_size_implies() {
        let paths: Vec<String> = TileId::all(70_000).map(|t| t.path()).collect();
        // 273 whole bundles and one of 112; level 0 likewise; level 1: one whole, one of 17;
        // level 2: one partial of 1.
        assert_eq!(paths.len(), 274 + 274 + 2 + 1);
        assert!(paths.contains(&"tile/entries/273.p/112".to_string()));
        assert!(paths.contains(&"tile/1/001.p/17".to_string()));
        assert_eq!(paths.last().unwrap(), "tile/2/000.p/1");
        assert_eq!(TileId::all(0).count(), 0);
        assert_eq!(
            TileId::all(256).map(|t| t.path()).collect::<Vec<_>>(),
            ["tile/entries/000", "tile/0/000", "tile/1/000.p/1"]
        );
    }

    #[test]
    fn bundles_round_trip_and_refuse_bad_lengths() {
        let mut b = Vec::new();
        push_entry(&mut b, b"{}");
        push_entry(&mut b, b"");
        push_entry(&mut b, &[7u8; 300]);
        let got = bundle_entries(&b, 3).unwrap();
        assert_eq!(got, [&b"{}"[..], b"", &[7u8; 300][..]]);
        assert_eq!(&b[..4], &[0, 2, b'{', b'}']);
        assert!(matches!(
            bundle_entries(&b, 2),
            Err(TileError::BundleCount { .. })
        ));
        assert!(matches!(
            bundle_entries(&b, 4),
            Err(TileError::BundleCount { .. })
        ));
        assert!(matches!(
            bundle_entries(&b[..b.len() - 1], 3),
            Err(TileError::TruncatedEntry { entry: 2, .. })
        ));
        assert!(matches!(
            bundle_entries(&b[..5], 3),
            Err(TileError::TruncatedEntry { entry: 1, .. })
        ));
    }

    #[test]
    fn a_bundles_prefix_is_its_first_entries() {
        let mut b = Vec::new();
        for e in [&b"ab"[..], b"", b"xyz"] {
            push_entry(&mut b, e);
        }
        assert_eq!(bundle_prefix(&b, 0), Ok(0));
        assert_eq!(bundle_prefix(&b, 1), Ok(4));
        assert_eq!(bundle_prefix(&b, 2), Ok(6));
        assert_eq!(bundle_prefix(&b, 3), Ok(b.len()));
        assert!(matches!(
            bundle_prefix(&b, 4),
            Err(TileError::TruncatedEntry { entry: 3, .. })
        ));
        assert!(matches!(
            bundle_prefix(&b[..8], 3),
            Err(TileError::TruncatedEntry {
                entry: 2,
                offset: 6
            })
        ));
    }

    #[test]
    fn hash_tiles_need_exact_lengths() {
        let h = [Hash::leaf(b"a"), Hash::leaf(b"b")];
        let bytes = encode_hashes(&h);
        assert_eq!(decode_hashes(&bytes, 2).unwrap(), h);
        assert!(decode_hashes(&bytes, 3).is_err());
        assert!(decode_hashes(&bytes[..63], 2).is_err());
    }
}
