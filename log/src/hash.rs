//! RFC 9162 hashing: SHA-256 with a one-byte domain separator for leaves and interior nodes.

use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use sha2::{Digest as _, Sha256};

/// A Merkle tree hash: of a leaf, an interior node, or a whole tree.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Hash(pub [u8; 32]);

impl Hash {
    /// The root of the empty tree: SHA-256 of no bytes.
    pub fn empty() -> Hash {
        Hash(Sha256::digest(b"").into())
    }

    /// The hash of a leaf holding `data`: SHA-256(0x00 || data).
    pub fn leaf(data: &[u8]) -> Hash {
        let mut h = Sha256::new();
        h.update([0u8]);
        h.update(data);
        Hash(h.finalize().into())
    }

    /// The hash of an interior node: SHA-256(0x01 || left || right).
    pub fn node(left: &Hash, right: &Hash) -> Hash {
        let mut buf = [0u8; 65];
        buf[0] = 1;
        buf[1..33].copy_from_slice(&left.0);
        buf[33..].copy_from_slice(&right.0);
        Hash(Sha256::digest(buf).into())
    }

    /// Exactly 32 bytes, or nothing.
    pub fn from_slice(bytes: &[u8]) -> Option<Hash> {
        bytes.try_into().ok().map(Hash)
    }

    /// Standard base64 with padding, as checkpoints and proofs write it.
    pub fn to_base64(&self) -> String {
        STANDARD.encode(self.0)
    }

    /// Standard padded base64 of exactly 32 bytes, as checkpoints and proofs write it.
    pub fn from_base64(text: &str) -> Option<Hash> {
        // 32 bytes are always 44 characters; checking first keeps the decoder's work bounded.
        if text.len() != 44 {
            return None;
        }
        STANDARD
            .decode(text)
            .ok()
            .and_then(|b| Hash::from_slice(&b))
    }
}

impl fmt::Display for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_base64())
    }
}

impl fmt::Debug for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hash({})", self.to_base64())
    }
}
