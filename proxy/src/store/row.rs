//! A row of the pin store as stored, and its reading with the strict readers.

use pinlog_core::lockfile::Lockfile;
use rusqlite::Row;

use super::{labels_from_text, one_server, Pending, Pinned, ServerKey};

/// A row as stored, before its contents are read.
pub(super) struct Raw {
    key: String,
    pub(super) label: String,
    pub(super) pin: Vec<u8>,
    pinned_at: String,
    pending: Option<Vec<u8>>,
    pending_at: Option<String>,
    pending_labels: Option<String>,
}

impl Raw {
    pub(super) fn from_row(r: &Row<'_>) -> rusqlite::Result<Raw> {
        Ok(Raw {
            key: r.get(0)?,
            label: r.get(1)?,
            pin: r.get(2)?,
            pinned_at: r.get(3)?,
            pending: r.get(4)?,
            pending_at: r.get(5)?,
            pending_labels: r.get(6)?,
        })
    }

    /// Reads the pin and the pending surface with the strict readers.
    pub(super) fn read(self) -> Result<(ServerKey, Pinned), String> {
        let key = ServerKey::parse(&self.key).ok_or("a key is not 24 hex digits")?;
        let bad = |what: &str, e: String| format!("the {what} of {key} cannot be read ({e})");
        let lock = Lockfile::read(&self.pin).map_err(|e| bad("pin", e.to_string()))?;
        let [server] = lock.servers.as_slice() else {
            return Err(bad(
                "pin",
                format!("it holds {} servers, not one", lock.servers.len()),
            ));
        };
        if lock.schema_version != 2 {
            return Err(bad("pin", "it is not a version 2 lockfile".into()));
        }
        let pending = match (self.pending, self.pending_at, self.pending_labels) {
            (None, None, None) => None,
            (Some(manifest), Some(at), Some(labels)) => {
                let m = one_server(&manifest).map_err(|e| bad("pending surface", e))?;
                if m.servers[0].id != server.id {
                    let why = "it is recorded under another id".to_string();
                    return Err(bad("pending surface", why));
                }
                let labels = labels_from_text(&labels)
                    .ok_or_else(|| bad("pending surface", "its labels".into()))?;
                Some(Pending {
                    manifest,
                    at,
                    labels,
                })
            }
            _ => return Err(bad("pending surface", "it is partly recorded".into())),
        };
        let (id, serial) = (server.id.clone(), lock.approval_serial);
        let tools = server.tools.len();
        let prompts = server.prompts.as_ref().map_or(0, Vec::len);
        let pinned = Pinned {
            label: self.label,
            pin: self.pin,
            pinned_at: self.pinned_at,
            id,
            serial,
            tools,
            prompts,
            pending,
        };
        Ok((key, pinned))
    }
}
