//! pinlog-core: the canonical engine every other part of pinlog stands on.
//!
//! One strict reader ([`json::parse`]) and one canonical writer ([`json::to_canonical`], RFC 8785)
//! so that a digest computed by the crawler, the verifier and the proxy is the same digest. The
//! rules are written down, with vectors, in `docs/SPEC-digest.md`.

pub mod address;
pub mod clock;
pub mod data_dir;
pub mod diff;
pub mod digest;
mod emoji;
pub mod exit;
pub mod files;
pub mod format;
pub mod identity;
pub mod json;
pub mod labels;
pub mod lockfile;
pub mod manifest;
pub mod package;
pub mod pointer;
pub mod render;
pub mod resolution;
pub mod server;
pub mod slug;
pub mod unicode;

pub use digest::{Digest, Listing};
pub use json::Value;
pub use pointer::JsonPointer;
pub use server::{ServerId, ServerKind};
