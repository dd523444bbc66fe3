//! The store's changes, each one transaction with its event in the local log: a first-use pin, a
//! drift recorded and released, an approval, a forget.

use pinlog_core::digest::value_digest;
use pinlog_core::json::Value;
use pinlog_core::lockfile::{InstructionsPin, Lockfile};
use pinlog_core::manifest::{Manifest, ManifestServer};
use pinlog_core::render::quoted;
use pinlog_core::Digest;
use pinlog_gate::lock::{approve as approve_lock, Approval};
use rusqlite::params;

use super::{
    labels_to_text, now, one_server, Approved, FirstUse, PinStoreError, ServerKey, Store,
    CLEAR_PENDING,
};
use crate::confirm::ChangeId;
use crate::events::{self, Event, Kind};

/// The surface of a one-server manifest, apart from when and how it was captured: the digest of
/// the lockfile it would make on its own.
fn surface_digest(m: &Manifest<'_>) -> Result<Digest, PinStoreError> {
    match approve_lock(m, None) {
        Ok(Approval::Moved(l)) => Ok(Digest::of(&l.to_bytes())),
        Ok(Approval::Unchanged) => unreachable!("a first approval always moves"),
        Err(e) => Err(PinStoreError::Refused(format!(
            "the surface cannot be pinned: {e}"
        ))),
    }
}

/// The tools of `pinned`, with the named ones taken from `served` (changed, added, or removed when
/// no longer served); everything else (prompts, instructions, name, protocol) stays as pinned.
fn with_tools<'a>(
    lock: &Lockfile<'a>,
    served: &Manifest<'a>,
    names: &[String],
) -> Result<Manifest<'a>, PinStoreError> {
    let (pinned, now) = (&lock.servers[0], &served.servers[0]);
    let name_of = |v: &Value<'_>| {
        v.as_object()
            .and_then(|o| o.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let approved = |p: &pinlog_core::lockfile::Pin<'a>| p.approved.clone();
    let mut tools: Vec<Value<'a>> = pinned.tools.iter().filter_map(approved).collect();
    let mut names = names.to_vec();
    names.sort();
    names.dedup();
    for n in &names {
        let at = tools.iter().position(|t| name_of(t).as_ref() == Some(n));
        let offered = now.tools.iter().find(|t| name_of(t).as_ref() == Some(n));
        // Equal digests; an undecidable object is never taken to equal anything.
        let same = |a: &Value<'_>, b: &Value<'_>| match (value_digest(a), value_digest(b)) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        };
        match (at, offered) {
            (Some(i), Some(s)) if same(&tools[i], s) => {
                return Err(PinStoreError::Refused(format!(
                    "the tool {} has no pending change",
                    quoted(n, 64)
                )))
            }
            (Some(i), Some(s)) => tools[i] = s.clone(),
            (None, Some(s)) => tools.push(s.clone()),
            (Some(i), None) => {
                tools.remove(i);
            }
            (None, None) => {
                return Err(PinStoreError::Refused(format!(
                    "no tool {} is pinned or served",
                    quoted(n, 64)
                )))
            }
        }
    }
    Ok(Manifest {
        scope: Some(vec![pinned.id.clone()]),
        servers: vec![ManifestServer {
            id: pinned.id.clone(),
            reported_name: pinned.reported_name.clone(),
            protocol_version: pinned.protocol_version.clone().unwrap_or_default(),
            passes: now.passes,
            instructions: match &pinned.instructions {
                InstructionsPin::Approved(text) => text.clone(),
                InstructionsPin::Unpinned => None,
            },
            package: pinned.package.clone(),
            tools,
            prompts: pinned
                .prompts
                .iter()
                .flatten()
                .filter_map(approved)
                .collect(),
        }],
        ..served.clone()
    })
}

impl Store {
    /// Pins a one-server manifest on first use, unless another proxy pinned `key` first: then
    /// that pin stands, and is returned.
    pub fn pin_first_use(
        &self,
        key: &ServerKey,
        label: &str,
        manifest: &[u8],
    ) -> Result<FirstUse, PinStoreError> {
        let m = one_server(manifest).map_err(|e| {
            PinStoreError::Refused(format!("the surface to pin cannot be read: {e}"))
        })?;
        let pin = match approve_lock(&m, None) {
            Ok(Approval::Moved(l)) => l.to_bytes(),
            Ok(Approval::Unchanged) => unreachable!("a first approval always moves"),
            Err(e) => return Err(PinStoreError::Refused(format!("cannot pin: {e}"))),
        };
        self.writing(|tx| {
            if let Some(p) = self.load(tx, key)? {
                return Ok(FirstUse::AlreadyPinned(p));
            }
            let at = now();
            tx.execute(
                "INSERT INTO servers (key, label, pin, pinned_at) VALUES (?1, ?2, ?3, ?4)",
                params![key.as_str(), label, pin, at],
            )?;
            let after = Some(Digest::of(&pin));
            events::append(
                tx,
                &Event::new(&at, Kind::Pin, key.as_str(), label, None, after),
            )?;
            let s = &m.servers[0];
            let (tools, prompts) = (s.tools.len(), s.prompts.len());
            Ok(FirstUse::Pinned { tools, prompts })
        })
    }

    /// Records that `key` served `manifest` (one server, under the pin's id), which departs from
    /// its pin with `labels`. It replaces an older pending surface; the same surface with the
    /// same labels is recorded once (returns `false` then).
    pub fn record_drift(
        &self,
        key: &ServerKey,
        manifest: &[u8],
        labels: &[String],
    ) -> Result<bool, PinStoreError> {
        let m = one_server(manifest).map_err(|e| {
            PinStoreError::Refused(format!("the served surface cannot be read: {e}"))
        })?;
        let surface = surface_digest(&m)?;
        self.writing(|tx| {
            let p = self.must_load(tx, key)?;
            if m.servers[0].id != p.id {
                return Err(PinStoreError::Refused(format!(
                    "the served surface is recorded under the id {}, and the pin under {}",
                    quoted(&m.servers[0].id, 64),
                    quoted(&p.id, 64)
                )));
            }
            if let Some(old) = &p.pending {
                let old_surface = one_server(&old.manifest).map_err(|e| self.unreadable(e))?;
                if surface_digest(&old_surface)? == surface && old.labels == labels {
                    return Ok(false);
                }
            }
            let at = now();
            tx.execute(
                "UPDATE servers SET pending = ?2, pending_at = ?3, pending_labels = ?4 \
                 WHERE key = ?1",
                params![key.as_str(), manifest, at, labels_to_text(labels)],
            )?;
            let before = Some(Digest::of(&p.pin));
            let mut event = Event::new(
                &at,
                Kind::Drift,
                key.as_str(),
                &p.label,
                before,
                Some(surface),
            );
            event.labels = labels.to_vec();
            events::append(tx, &event)?;
            Ok(true)
        })
    }

    /// Records what the public log said of a served one-server manifest: the outcome and change
    /// labels in `labels`. The pin is not touched; a server not pinned yet is recorded too.
    pub fn record_public(
        &self,
        key: &ServerKey,
        label: &str,
        manifest: &[u8],
        labels: &[String],
    ) -> Result<(), PinStoreError> {
        let m = one_server(manifest).map_err(|e| {
            PinStoreError::Refused(format!("the served surface cannot be read: {e}"))
        })?;
        let surface = surface_digest(&m)?;
        self.writing(|tx| {
            let mut event = Event::new(
                &now(),
                Kind::Public,
                key.as_str(),
                label,
                None,
                Some(surface),
            );
            event.labels = labels.to_vec();
            events::append(tx, &event)?;
            Ok(())
        })
    }

    /// The server serves its pin again: the pending surface is dropped. `false` when nothing was
    /// pending (no event then).
    pub fn release(&self, key: &ServerKey) -> Result<bool, PinStoreError> {
        self.writing(|tx| {
            let Some(p) = self.load(tx, key)? else {
                return Ok(false);
            };
            let Some(pending) = &p.pending else {
                return Ok(false);
            };
            let served = one_server(&pending.manifest).map_err(|e| self.unreadable(e))?;
            let before = Some(surface_digest(&served)?);
            tx.execute(CLEAR_PENDING, [key.as_str()])?;
            let after = Some(Digest::of(&p.pin));
            events::append(
                tx,
                &Event::new(&now(), Kind::Release, key.as_str(), &p.label, before, after),
            )?;
            Ok(true)
        })
    }

    /// Takes the pending surface into the pin: all of it when `tools` is empty, else only those
    /// tools (changed, added, or removed), and the rest stays pending.
    pub fn approve(&self, key: &ServerKey, tools: &[String]) -> Result<Approved, PinStoreError> {
        self.approving(key, tools, None)
    }

    /// As [`Store::approve`], only if what is pending is still the change `shown` (the one a
    /// person was shown and confirmed), checked in the approving transaction; else
    /// [`PinStoreError::Replaced`], and nothing is written.
    pub fn approve_shown(
        &self,
        key: &ServerKey,
        tools: &[String],
        shown: &ChangeId,
    ) -> Result<Approved, PinStoreError> {
        self.approving(key, tools, Some(shown))
    }

    fn approving(
        &self,
        key: &ServerKey,
        tools: &[String],
        shown: Option<&ChangeId>,
    ) -> Result<Approved, PinStoreError> {
        self.writing(|tx| {
            let p = self.must_load(tx, key)?;
            if shown.is_some_and(|s| ChangeId::of(key, &p, tools).as_ref() != Some(s)) {
                return Err(PinStoreError::Replaced(key.clone()));
            }
            let Some(pending) = &p.pending else {
                return Err(PinStoreError::Refused(format!(
                    "nothing is pending for {key}: it last served what was approved"
                )));
            };
            let lock = p.lock()?;
            let served = one_server(&pending.manifest).map_err(|e| self.unreadable(e))?;
            let candidate = match tools.is_empty() {
                true => served.clone(),
                false => with_tools(&lock, &served, tools)?,
            };
            let (pin, moved) = match approve_lock(&candidate, Some(&lock)) {
                Ok(Approval::Moved(l)) => (l.to_bytes(), true),
                Ok(Approval::Unchanged) => (p.pin.clone(), false),
                Err(e) => return Err(PinStoreError::Refused(format!("cannot approve: {e}"))),
            };
            let new_lock = Lockfile::read(&pin).map_err(|e| {
                PinStoreError::Refused(format!("the new pin does not read back: {e}"))
            })?;
            // What the server last served, against the new pin: what still departs stays pending.
            let left = crate::check::check(&served, &new_lock).map(|d| d.labels);
            let at = now();
            tx.execute(
                "UPDATE servers SET pin = ?2, pinned_at = ?3 WHERE key = ?1",
                params![key.as_str(), pin, at],
            )?;
            match &left {
                None => tx.execute(CLEAR_PENDING, [key.as_str()])?,
                Some(labels) => tx.execute(
                    "UPDATE servers SET pending_labels = ?2 WHERE key = ?1",
                    params![key.as_str(), labels_to_text(labels)],
                )?,
            };
            let (before, after) = (Some(Digest::of(&p.pin)), Some(Digest::of(&pin)));
            let mut event = Event::new(&at, Kind::Approve, key.as_str(), &p.label, before, after);
            event.tools = tools.to_vec();
            event.tools.sort();
            event.tools.dedup();
            events::append(tx, &event)?;
            let serial = new_lock.approval_serial;
            Ok(Approved {
                serial,
                moved,
                pending: left,
            })
        })
    }

    /// Deletes the pin of `key` (even one that no longer reads): the server is pinned afresh the
    /// next time it runs. Returns its label; `None` when it was not pinned.
    pub fn forget(
        &self,
        key: &ServerKey,
        shown: Option<&ChangeId>,
    ) -> Result<Option<String>, PinStoreError> {
        self.writing(|tx| {
            let Some(raw) = Self::raw(tx, key)? else {
                return Ok(None);
            };
            // What was shown must still be the pin: a pin approved or moved meanwhile is not
            // forgotten on a code given for another.
            if let Some(shown) = shown {
                let p = self.must_load(tx, key)?;
                if ChangeId::forgetting(key, &p) != *shown {
                    return Err(PinStoreError::Replaced(key.clone()));
                }
            }
            tx.execute("DELETE FROM servers WHERE key = ?1", [key.as_str()])?;
            let before = Some(Digest::of(&raw.pin));
            events::append(
                tx,
                &Event::new(&now(), Kind::Forget, key.as_str(), &raw.label, before, None),
            )?;
            Ok(Some(raw.label))
        })
    }
}
