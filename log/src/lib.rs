//! pinlog-log: the transparency log. RFC 9162 Merkle trees, C2SP signed notes, checkpoints,
//! cosignatures and tlog-tiles, the pinlog entry format, the SQLite store, and publishing.

pub mod hash;
pub mod merkle;

pub use hash::Hash;
