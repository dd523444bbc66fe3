//! The audit of the pin store against its local log.

use pinlog_core::Digest;
use rusqlite::{Transaction, TransactionBehavior};

use super::row::Raw;
use super::{AuditReport, PinStoreError, Store, COLUMNS};
use crate::events::{self, Kind};

impl Store {
    /// Verifies the local log (every leaf and every stored root), then that each pin is the one
    /// the log last recorded for its server and that no pin vanished without a forget event.
    pub fn audit(&self) -> Result<AuditReport, PinStoreError> {
        let run = || -> Result<AuditReport, PinStoreError> {
            // One snapshot for the log and the pins.
            let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Deferred)?;
            let verified = events::verify(&tx)?;
            let mut last = std::collections::BTreeMap::new();
            for (i, e) in verified.events.iter().enumerate() {
                if matches!(e.kind, Kind::Pin | Kind::Approve | Kind::Forget) {
                    last.insert(e.server.as_str(), (i as u64, e));
                }
            }
            let mut stmt = tx.prepare(&format!("SELECT {COLUMNS} FROM servers ORDER BY key"))?;
            let raws = stmt
                .query_map([], Raw::from_row)?
                .collect::<Result<Vec<_>, _>>()?;
            let size = verified.events.len() as u64;
            let mut pinned = std::collections::BTreeSet::new();
            for raw in raws {
                let (key, p) = raw.read().map_err(|e| self.unreadable(e))?;
                let (index, agrees) = match last.get(key.as_str()) {
                    Some((i, e)) => (
                        *i,
                        e.kind != Kind::Forget && e.after == Some(Digest::of(&p.pin)),
                    ),
                    None => (size, false),
                };
                if !agrees {
                    let why =
                        format!("the pin of {key} is not the one the log last recorded for it");
                    return Err(PinStoreError::Audit { index, why });
                }
                pinned.insert(key.to_string());
            }
            for (server, (index, e)) in &last {
                if e.kind != Kind::Forget && !pinned.contains(*server) {
                    let why = format!(
                        "the pin of {server} is gone, and the log holds no forget event for it"
                    );
                    return Err(PinStoreError::Audit { index: *index, why });
                }
            }
            Ok(AuditReport {
                events: size,
                root: verified.root,
                pins: pinned.len(),
            })
        };
        run().map_err(|e| self.classify(e))
    }
}
