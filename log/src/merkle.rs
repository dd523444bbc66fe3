//! RFC 9162 Merkle trees: roots, and inclusion and consistency proofs, built and checked.
//!
//! Edge cases the RFC leaves to the implementation, decided here (docs/SPEC-log.md):
//! - an inclusion proof needs `index < size`; the empty tree includes nothing;
//! - a consistency proof from size 0 is refused: it would prove nothing;
//! - between equal sizes the proof must be empty and the two roots equal;
//! - a proof with a component too many or too few is refused, never truncated.

use std::fmt;

use crate::hash::Hash;

/// Why a proof does not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProofError {
    /// The index is not inside the tree.
    IndexOutOfRange { index: u64, size: u64 },
    /// The older size is larger than the newer one.
    SizesReversed { first: u64, second: u64 },
    /// A consistency proof from the empty tree was asked for.
    FromEmptyTree,
    /// The proof has the wrong number of hashes for these sizes.
    WrongLength { expected: usize, found: usize },
    /// The proof is well formed and does not lead to the given root.
    RootMismatch,
}

impl fmt::Display for ProofError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProofError::IndexOutOfRange { index, size } => {
                write!(f, "index {index} is not in a tree of size {size}")
            }
            ProofError::SizesReversed { first, second } => {
                write!(f, "size {first} is larger than size {second}")
            }
            ProofError::FromEmptyTree => f.write_str("no consistency proof starts at size 0"),
            ProofError::WrongLength { expected, found } => {
                write!(
                    f,
                    "the proof has {found} hashes where {expected} are needed"
                )
            }
            ProofError::RootMismatch => f.write_str("the proof does not lead to the root"),
        }
    }
}

impl std::error::Error for ProofError {}

/// Number of hashes in an inclusion proof for `index` in a tree of `size` (`index < size`).
fn inclusion_len(index: u64, size: u64) -> usize {
    // Levels below the point where the paths to `index` and to the last leaf part, plus one per
    // level above it where the path to `index` has a left sibling.
    let inner = (64 - (index ^ (size - 1)).leading_zeros()) as usize;
    let border = (index >> inner).count_ones() as usize;
    inner + border
}

/// Checks that `leaf` is at `index` in the tree of `size` leaves whose root is `root`.
pub fn verify_inclusion(
    index: u64,
    size: u64,
    leaf: &Hash,
    proof: &[Hash],
    root: &Hash,
) -> Result<(), ProofError> {
    if index >= size {
        return Err(ProofError::IndexOutOfRange { index, size });
    }
    let expected = inclusion_len(index, size);
    if proof.len() != expected {
        return Err(ProofError::WrongLength {
            expected,
            found: proof.len(),
        });
    }
    let computed = root_from_inclusion(index, size, *leaf, proof);
    if computed == *root {
        Ok(())
    } else {
        Err(ProofError::RootMismatch)
    }
}

/// RFC 9162 section 2.1.3.2, over a proof already known to have the right length.
fn root_from_inclusion(index: u64, size: u64, leaf: Hash, proof: &[Hash]) -> Hash {
    let mut f = index;
    let mut s = size - 1;
    let mut r = leaf;
    for p in proof {
        if f & 1 == 1 || f == s {
            r = Hash::node(p, &r);
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            r = Hash::node(&r, p);
        }
        f >>= 1;
        s >>= 1;
    }
    r
}

/// Checks that the tree of `second` leaves with root `root2` extends the tree of `first` leaves
/// with root `root1`.
pub fn verify_consistency(
    first: u64,
    second: u64,
    proof: &[Hash],
    root1: &Hash,
    root2: &Hash,
) -> Result<(), ProofError> {
    if first > second {
        return Err(ProofError::SizesReversed { first, second });
    }
    if first == 0 {
        return Err(ProofError::FromEmptyTree);
    }
    if first == second {
        if !proof.is_empty() {
            return Err(ProofError::WrongLength {
                expected: 0,
                found: proof.len(),
            });
        }
        return if root1 == root2 {
            Ok(())
        } else {
            Err(ProofError::RootMismatch)
        };
    }
    // The part of the old tree made of whole subtrees on its left edge is implied by the old root;
    // the proof starts from the highest subtree that is not.
    let shift = first.trailing_zeros();
    let (start, seed) = if first >> shift == 1 {
        (0usize, *root1)
    } else {
        (1usize, proof.first().copied().unwrap_or(*root1))
    };
    let inner = (64 - ((first - 1) ^ (second - 1)).leading_zeros()) as usize;
    let expected = inner - shift as usize + ((first - 1) >> inner).count_ones() as usize + start;
    if proof.len() != expected {
        return Err(ProofError::WrongLength {
            expected,
            found: proof.len(),
        });
    }
    let mut f = (first - 1) >> shift;
    let mut s = (second - 1) >> shift;
    let mut fr = seed;
    let mut sr = seed;
    for c in &proof[start..] {
        if f & 1 == 1 || f == s {
            fr = Hash::node(c, &fr);
            sr = Hash::node(c, &sr);
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            sr = Hash::node(&sr, c);
        }
        f >>= 1;
        s >>= 1;
    }
    if fr == *root1 && sr == *root2 {
        Ok(())
    } else {
        Err(ProofError::RootMismatch)
    }
}

/// Where the hashes of whole, aligned subtrees come from: a store, a tile directory, memory.
pub trait HashSource {
    type Error;
    /// The root of the subtree of `2^level` leaves starting at leaf `index << level`; asked only
    /// for subtrees wholly inside the tree being proved.
    fn subtree(&mut self, level: u8, index: u64) -> Result<Hash, Self::Error>;
}

/// The largest power of two strictly below `n` (`n >= 2`).
fn split(n: u64) -> u64 {
    1 << (63 - (n - 1).leading_zeros())
}

/// The root of the leaves `[lo, hi)`, where `lo` is a multiple of the largest power of two not
/// above `hi - lo`, as every range in the RFC's recursive split is.
fn range_root<S: HashSource>(src: &mut S, lo: u64, hi: u64) -> Result<Hash, S::Error> {
    let n = hi - lo;
    if n.is_power_of_two() {
        let level = n.trailing_zeros() as u8;
        return src.subtree(level, lo >> level);
    }
    let k = split(n);
    let left = range_root(src, lo, lo + k)?;
    let right = range_root(src, lo + k, hi)?;
    Ok(Hash::node(&left, &right))
}

/// The root of a tree of `size` leaves.
pub fn tree_root<S: HashSource>(src: &mut S, size: u64) -> Result<Hash, S::Error> {
    if size == 0 {
        return Ok(Hash::empty());
    }
    range_root(src, 0, size)
}

/// The inclusion proof of leaf `index` in the tree of `size` leaves (RFC 9162 section 2.1.3.1).
pub fn inclusion_proof<S: HashSource>(
    src: &mut S,
    index: u64,
    size: u64,
) -> Result<Result<Vec<Hash>, ProofError>, S::Error> {
    if index >= size {
        return Ok(Err(ProofError::IndexOutOfRange { index, size }));
    }
    let mut proof = Vec::new();
    let (mut lo, mut hi) = (0, size);
    // Walk down from the root, collecting siblings; the proof lists them bottom-up.
    while hi - lo > 1 {
        let k = split(hi - lo);
        if index < lo + k {
            proof.push(range_root(src, lo + k, hi)?);
            hi = lo + k;
        } else {
            proof.push(range_root(src, lo, lo + k)?);
            lo += k;
        }
    }
    proof.reverse();
    Ok(Ok(proof))
}

/// The consistency proof between the trees of `first` and `second` leaves (RFC 9162 section
/// 2.1.4.1), with the edge cases decided as [`verify_consistency`] checks them.
pub fn consistency_proof<S: HashSource>(
    src: &mut S,
    first: u64,
    second: u64,
) -> Result<Result<Vec<Hash>, ProofError>, S::Error> {
    if first > second {
        return Ok(Err(ProofError::SizesReversed { first, second }));
    }
    if first == 0 {
        return Ok(Err(ProofError::FromEmptyTree));
    }
    let mut proof = Vec::new();
    let (mut lo, mut hi) = (0u64, second);
    // `m` leaves of the old tree remain in `[lo, hi)`; `whole` while that range starts at leaf 0,
    // where the old root itself stands for the subtree and is left out of the proof.
    let mut m = first;
    let mut whole = true;
    loop {
        let n = hi - lo;
        if m == n {
            if !whole {
                proof.push(range_root(src, lo, hi)?);
            }
            break;
        }
        let k = split(n);
        if m <= k {
            proof.push(range_root(src, lo + k, hi)?);
            hi = lo + k;
        } else {
            proof.push(range_root(src, lo, lo + k)?);
            lo += k;
            m -= k;
            whole = false;
        }
    }
    proof.reverse();
    Ok(Ok(proof))
}

/// A streaming tree builder: leaves go in one at a time, and the root of the leaves so far is
/// available at any point. Holds one hash per set bit of the size, never the leaves.
#[derive(Debug, Clone, Default)]
pub struct CompactRange {
    size: u64,
    /// Roots of the whole subtrees covering the leaves so far, largest (leftmost) first.
    stack: Vec<Hash>,
}

impl CompactRange {
    /// The range of the first `size` leaves, taken from `src`: one subtree per set bit of `size`,
    /// so that more leaves can be pushed without the first ones (an incremental check).
    pub fn resume<S: HashSource>(src: &mut S, size: u64) -> Result<CompactRange, S::Error> {
        let mut stack = Vec::new();
        let mut lo = 0u64;
        for level in (0..64u8).rev() {
            if (size >> level) & 1 == 1 {
                stack.push(src.subtree(level, lo >> level)?);
                lo += 1 << level;
            }
        }
        Ok(CompactRange { size, stack })
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// Appends a leaf hash, and calls `merged(level, index, hash)` for every subtree this
    /// completes, from level 1 upwards (a tile writer keeps those it stores).
    pub fn push(&mut self, leaf: Hash, mut merged: impl FnMut(u8, u64, &Hash)) {
        let mut hash = leaf;
        let mut level = 0u8;
        let mut index = self.size;
        while index & 1 == 1 {
            let left = self
                .stack
                .pop()
                .expect("a set bit has a subtree on the stack");
            hash = Hash::node(&left, &hash);
            level += 1;
            index >>= 1;
            merged(level, index, &hash);
        }
        self.stack.push(hash);
        self.size += 1;
    }

    /// The root of the leaves so far.
    pub fn root(&self) -> Hash {
        let mut it = self.stack.iter().rev();
        match it.next() {
            None => Hash::empty(),
            Some(last) => it.fold(*last, |acc, left| Hash::node(left, &acc)),
        }
    }
}
