//! pinlog-log: the transparency log. RFC 9162 Merkle trees, C2SP signed notes, checkpoints,
//! cosignatures, witness policies and the witness protocol, tlog-tiles, the pinlog entry format
//! and its builder, the SQLite store, and publishing; with `http`, the client that reaches witnesses.

pub mod checkpoint;
pub mod cosignature;
pub mod entry;
pub mod entry_builder;
#[cfg(feature = "http")]
pub mod fetch;
pub mod hash;
#[cfg(feature = "http")]
pub mod http;
pub mod in_dir;
pub mod keyfile;
pub mod merkle;
pub mod note;
pub mod proof;
#[cfg(feature = "store")]
pub mod publish;
pub mod source;
#[cfg(feature = "store")]
pub mod store;
pub mod surface_blob;
pub mod tile_reader;
pub mod tiles;
pub mod witness;
pub mod witness_policy;

pub use hash::Hash;
