//! A new entry made from what the one appending it knows: the server, the time, the surface blob,
//! the server's previous entry, the labels and the probe. Every digest the entry carries comes
//! from the blob, so none can disagree with another or with the blob.

use pinlog_core::ServerId;

use crate::entry::{Entry, EntryError, Previous, Probe, Timestamp};
use crate::surface_blob::SurfaceBlob;

/// The parts of a new entry that do not follow from its surface.
#[derive(Debug, Clone)]
pub struct EntryBuilder<'a> {
    pub observed_at: Timestamp,
    pub server: ServerId,
    pub surface: &'a SurfaceBlob,
    /// This server's last entry in the log, if it has one.
    pub previous: Option<Previous>,
    /// Change labels, sorted and unique.
    pub labels: Vec<String>,
    pub probe: Probe,
}

impl EntryBuilder<'_> {
    /// The entry's canonical bytes, refused as [`Entry::to_bytes`] refuses what breaks a rule
    /// (labels out of order, a previous entry with the same surface, a probe field of the wrong
    /// shape).
    pub fn to_bytes(self) -> Result<Vec<u8>, EntryError> {
        let s = self.surface;
        Entry {
            observed_at: self.observed_at,
            server: self.server,
            surface: s.surface,
            tools: s.tools,
            prompts: s.prompts,
            instructions: s.instructions,
            previous: self.previous,
            labels: self.labels,
            probe: self.probe,
            blob: s.digest(),
        }
        .to_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pinlog_core::json::{parse, Limits};

    use crate::surface_blob;

    fn probe() -> Probe {
        Probe {
            crawler: "pinlog/0.1.0".into(),
            package_version: None,
            protocol_asked: "auto".into(),
            protocol_negotiated: "2025-11-25".into(),
            transport: "streamable-http".into(),
            sandbox: "ssrf-guard".into(),
            env_supplied: vec![],
            env_placeholders: vec![],
            arg_placeholders: vec![],
        }
    }

    #[test]
    fn the_entry_carries_the_blobs_digests_and_reads_back() {
        let tools = parse(br#"[{"name":"a"}]"#, Limits::default()).unwrap();
        let blob = surface_blob::build(Some("Hi"), &[], tools.as_array().unwrap()).unwrap();
        let bytes = EntryBuilder {
            server: "remote:https://mcp.example/mcp".parse().unwrap(),
            observed_at: Timestamp::parse("2026-01-01T00:00:00Z").unwrap(),
            surface: &blob,
            previous: None,
            labels: vec!["new-server".into()],
            probe: probe(),
        }
        .to_bytes()
        .unwrap();
        let e = Entry::read(&bytes).unwrap();
        assert_eq!(e.blob, blob.digest());
        assert_eq!(e.surface, blob.surface());
        e.check_blob(&crate::entry::SurfaceSummary::read(blob.bytes()).unwrap())
            .unwrap();
    }

    #[test]
    fn a_previous_entry_with_the_same_surface_is_refused() {
        let blob = surface_blob::build(None, &[], &[]).unwrap();
        let e = EntryBuilder {
            server: "npm:a".parse().unwrap(),
            observed_at: Timestamp::parse("2026-01-01T00:00:00Z").unwrap(),
            surface: &blob,
            previous: Some(Previous {
                index: 0,
                surface: blob.surface(),
            }),
            labels: vec![],
            probe: probe(),
        }
        .to_bytes()
        .unwrap_err();
        assert_eq!(e.rule, "entry-unchanged");
    }
}
