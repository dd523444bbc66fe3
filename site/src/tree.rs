//! The whole Merkle tree of the published log in memory (every level), so that the inclusion
//! proof of each of its entries costs a few lookups rather than a tile walk.

use std::convert::Infallible;

use pinlog_log::hash::Hash;
use pinlog_log::merkle::{self, HashSource};

pub struct Tree {
    levels: Vec<Vec<Hash>>,
}

impl Tree {
    pub fn new(leaves: Vec<Hash>) -> Tree {
        let mut levels = vec![leaves];
        while levels.last().is_some_and(|l| l.len() > 1) {
            let below = levels.last().expect("one level at least");
            let up = below
                .chunks_exact(2)
                .map(|p| Hash::node(&p[0], &p[1]))
                .collect();
            levels.push(up);
        }
        Tree { levels }
    }

    pub fn size(&self) -> u64 {
        self.levels[0].len() as u64
    }

    pub fn root(&self) -> Hash {
        merkle::tree_root(&mut &*self, self.size()).unwrap_or_else(|e: Infallible| match e {})
    }

    /// The inclusion proof of `index` in the whole tree.
    pub fn inclusion(&self, index: u64) -> Option<Vec<Hash>> {
        merkle::inclusion_proof(&mut &*self, index, self.size())
            .unwrap_or_else(|e: Infallible| match e {})
            .ok()
    }
}

impl HashSource for &Tree {
    type Error = Infallible;

    fn subtree(&mut self, level: u8, index: u64) -> Result<Hash, Infallible> {
        // Only whole subtrees inside the tree are asked for: each is stored.
        Ok(self.levels[usize::from(level)][index as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proofs_from_memory_verify_for_every_size_and_index() {
        for n in 1..=33u64 {
            let leaves: Vec<Hash> = (0..n).map(|i| Hash::leaf(&i.to_be_bytes())).collect();
            let t = Tree::new(leaves.clone());
            let root = t.root();
            for i in 0..n {
                let p = t.inclusion(i).unwrap();
                merkle::verify_inclusion(i, n, &leaves[i as usize], &p, &root).unwrap();
            }
        }
    }
}
