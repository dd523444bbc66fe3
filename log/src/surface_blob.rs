//! A surface as the log commits to it: the canonical blob `{"instructions","prompts","tools"}`
//! (docs/SPEC-log.md 4.4) and the digests an entry carries. The blob is written here and read back
//! by [`crate::entry::SurfaceSummary::read`].
//!
//! A [`SurfaceBlob`] is made only from its bytes or its surface, so its digests are those of its
//! bytes; [`crate::entry_builder`] takes every digest of an entry from one.

use std::fmt;

use pinlog_core::digest::{instructions_digest, ListingError};
use pinlog_core::json::{self, Limits, Value};
use pinlog_core::{Digest, Listing};

use crate::entry::{surface_digest, EntryError, SurfaceSummary};

/// Why a surface cannot be committed to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlobError {
    /// A listing's items are not what a listing holds (no string name, a repeated name).
    Malformed(String),
    /// A number with no canonical form: the surface has no digest.
    Undecidable(String),
    /// The blob passes [`MAX_BLOB`].
    TooLarge(String),
}

impl fmt::Display for BlobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlobError::Malformed(m) | BlobError::Undecidable(m) | BlobError::TooLarge(m) => {
                f.write_str(m)
            }
        }
    }
}

impl std::error::Error for BlobError {}

/// A surface blob and the digests of its parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SurfaceBlob {
    bytes: Vec<u8>,
    pub(crate) tools: Digest,
    pub(crate) prompts: Digest,
    pub(crate) instructions: Option<Digest>,
    pub(crate) surface: Digest,
}

impl SurfaceBlob {
    /// A blob written elsewhere, held to the rules the log's readers hold blobs to. Not to
    /// [`MAX_BLOB`], which bounds what [`build`] commits to: readers take larger blobs.
    pub fn read(bytes: Vec<u8>) -> Result<SurfaceBlob, EntryError> {
        let s = SurfaceSummary::read(&bytes)?;
        Ok(SurfaceBlob {
            surface: surface_digest(&s.tools, &s.prompts, s.instructions.as_ref()),
            bytes,
            tools: s.tools,
            prompts: s.prompts,
            instructions: s.instructions,
        })
    }

    /// The canonical bytes, as served at `blobs/sha256/<hex>`.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The surface digest an entry carries: see [`surface_digest`].
    pub fn surface(&self) -> Digest {
        self.surface
    }

    /// The digest of the bytes, which names the blob.
    pub fn digest(&self) -> Digest {
        Digest::of(&self.bytes)
    }

    /// What the blob holds, as values: the instructions, the prompts and the tools, for a
    /// comparison with a surface served elsewhere. A blob is read (and built) canonical under the
    /// default limits, so it reads back; one that did not would give an empty surface.
    pub fn parts(&self) -> SurfaceParts {
        let tree = json::parse(&self.bytes, Limits::default()).ok();
        let member = |name: &str| tree.as_ref().and_then(|t| t.as_object()?.get(name));
        let items = |name: &str| -> Vec<Value<'static>> {
            member(name)
                .and_then(Value::as_array)
                .map(|a| a.iter().cloned().map(Value::into_owned).collect())
                .unwrap_or_default()
        };
        SurfaceParts {
            instructions: member("instructions")
                .and_then(Value::as_str)
                .map(str::to_string),
            prompts: items("prompts"),
            tools: items("tools"),
        }
    }
}

/// A surface blob's members, as values.
#[derive(Debug, Clone, Default)]
pub struct SurfaceParts {
    pub instructions: Option<String>,
    pub prompts: Vec<Value<'static>>,
    pub tools: Vec<Value<'static>>,
}

/// The largest surface the public log takes: one change of a hostile server should not add
/// tens of megabytes to every mirror of the log.
pub const MAX_BLOB: usize = 4 << 20;

/// The blob and digests of a surface; a surface with a number that has no canonical form
/// cannot be committed to, and is reported as undecidable.
pub fn build(
    instructions: Option<&str>,
    prompts: &[Value<'_>],
    tools: &[Value<'_>],
) -> Result<SurfaceBlob, BlobError> {
    let set = |items: &[Value<'_>], what: &str| -> Result<Digest, BlobError> {
        Listing::from_items(items.iter().cloned().map(Ok::<_, ListingError>))
            .map_err(|e: ListingError| BlobError::Malformed(format!("{what}: {e}")))?
            .set_hash()
            .ok_or_else(|| {
                BlobError::Undecidable(format!(
                    "a {what} item holds a number with no canonical form"
                ))
            })
    };
    let tools_digest = set(tools, "tools")?;
    let prompts_digest = set(prompts, "prompts")?;
    let mut bytes = Vec::new();
    bytes.extend_from_slice(b"{\"instructions\":");
    match instructions {
        Some(s) => json::write_string(&mut bytes, s),
        None => bytes.extend_from_slice(b"null"),
    }
    for (name, items) in [("prompts", prompts), ("tools", tools)] {
        bytes.extend_from_slice(format!(",\"{name}\":[").as_bytes());
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                bytes.push(b',');
            }
            json::write_canonical(item, &mut bytes).map_err(|_| {
                BlobError::Undecidable(format!(
                    "a {name} item holds a number with no canonical form"
                ))
            })?;
        }
        bytes.push(b']');
    }
    bytes.push(b'}');
    if bytes.len() > MAX_BLOB {
        return Err(BlobError::TooLarge(format!(
            "the surface is {} bytes; the log takes at most {MAX_BLOB}",
            bytes.len()
        )));
    }
    let instructions = instructions_digest(instructions);
    Ok(SurfaceBlob {
        surface: surface_digest(&tools_digest, &prompts_digest, instructions.as_ref()),
        bytes,
        tools: tools_digest,
        prompts: prompts_digest,
        instructions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pinlog_core::json::{parse, Limits};

    #[test]
    fn the_blob_is_what_the_log_reader_accepts_and_agrees_with_its_digests() {
        let tools = parse(br#"[{"name":"b","inputSchema":{"type":"object"},"description":"x"},{"name":"a","z":1.0}]"#, Limits::default()).unwrap();
        let prompts = parse(br#"[{"name":"p"}]"#, Limits::default()).unwrap();
        let b = build(
            Some("Use me\u{7}"),
            prompts.as_array().unwrap(),
            tools.as_array().unwrap(),
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(b.bytes.clone()).unwrap(),
            r#"{"instructions":"Use me\u0007","prompts":[{"name":"p"}],"tools":[{"description":"x","inputSchema":{"type":"object"},"name":"b"},{"name":"a","z":1}]}"#
        );
        // The log's own reader of blobs recomputes the same digests.
        let summary = SurfaceSummary::read(&b.bytes).unwrap();
        assert_eq!(summary.tools, b.tools);
        assert_eq!(summary.prompts, b.prompts);
        assert_eq!(summary.instructions, b.instructions);
        assert_eq!(SurfaceBlob::read(b.bytes.clone()).unwrap(), b);
    }

    #[test]
    fn an_undecidable_number_is_reported_not_committed() {
        let tools = parse(
            br#"[{"name":"a","default":9007199254740993}]"#,
            Limits::default(),
        )
        .unwrap();
        let e = build(None, &[], tools.as_array().unwrap()).unwrap_err();
        assert!(matches!(e, BlobError::Undecidable(_)), "{e:?}");
    }
}
