//! Where a session's approved surface comes from: the user's pin store (first use pins), or a
//! team lockfile (the lock decides; a server it does not name falls back to the store, or is
//! refused with `--only-locked`).

use pinlog_core::lockfile::Lockfile;
use pinlog_core::render::quoted;

use crate::session::Pins;
use crate::store::{FirstUse, ServerKey, Store};

/// Pins kept in the store, under a key derived from the launch.
pub struct StorePins {
    pub store: Store,
    pub key: ServerKey,
    pub label: String,
}

impl Pins for StorePins {
    fn approved(&mut self) -> Result<Option<(Vec<u8>, String)>, String> {
        self.store
            .pinned(&self.key)
            .map(|p| p.map(|p| (p.pin, p.id)))
            .map_err(|e| e.to_string())
    }

    fn id(&self) -> String {
        self.key.to_string()
    }

    fn pin_first_use(&mut self, manifest: &[u8]) -> Result<Option<String>, String> {
        match self.store.pin_first_use(&self.key, &self.label, manifest) {
            Ok(FirstUse::Pinned { tools, prompts }) => Ok(Some(format!(
                "pinned {tools} tool(s) and {prompts} prompt(s) of {} on first use ({}); review \
                 them now with `pinlog review {}`",
                quoted(&self.label, 64),
                self.key,
                self.key
            ))),
            Ok(FirstUse::AlreadyPinned(_)) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }

    fn record_drift(&mut self, manifest: &[u8], labels: &[String]) -> Result<(), String> {
        self.store
            .record_drift(&self.key, manifest, labels)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn release(&mut self) -> Result<(), String> {
        self.store
            .release(&self.key)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn review_command(&self) -> String {
        format!("pinlog review {}", self.key)
    }

    fn record_public(&mut self, manifest: &[u8], labels: &[String]) -> Result<(), String> {
        self.store
            .record_public(&self.key, &self.label, manifest, labels)
            .map_err(|e| e.to_string())
    }
}

/// A team lockfile decides for the server it names `id`.
pub struct LockPins {
    pub lock: Vec<u8>,
    pub lock_path: String,
    pub id: String,
    /// Pins for a server the lockfile does not name; `None` refuses it (`--only-locked`).
    pub fallback: Option<StorePins>,
}

impl LockPins {
    fn names_server(&self) -> bool {
        Lockfile::read(&self.lock).is_ok_and(|l| l.server(&self.id).is_some())
    }
}

impl Pins for LockPins {
    fn approved(&mut self) -> Result<Option<(Vec<u8>, String)>, String> {
        if self.names_server() {
            return Ok(Some((self.lock.clone(), self.id.clone())));
        }
        match &mut self.fallback {
            Some(f) => f.approved(),
            None => Err(format!(
                "the lockfile {} does not name the server {} and --only-locked is set",
                quoted(&self.lock_path, 200),
                quoted(&self.id, 64)
            )),
        }
    }

    fn id(&self) -> String {
        match &self.fallback {
            Some(f) if !self.names_server() => f.id(),
            _ => self.id.clone(),
        }
    }

    fn pin_first_use(&mut self, manifest: &[u8]) -> Result<Option<String>, String> {
        match &mut self.fallback {
            Some(f) => f.pin_first_use(manifest),
            None => Err("--only-locked: nothing is pinned on first use".into()),
        }
    }

    fn record_drift(&mut self, manifest: &[u8], labels: &[String]) -> Result<(), String> {
        // A drift from the team lock is the lockfile's to resolve; the store records drifts from
        // its own pins only.
        let locked = self.names_server();
        match &mut self.fallback {
            Some(f) if !locked => f.record_drift(manifest, labels),
            _ => Ok(()),
        }
    }

    fn release(&mut self) -> Result<(), String> {
        let locked = self.names_server();
        match &mut self.fallback {
            Some(f) if !locked => f.release(),
            _ => Ok(()),
        }
    }

    fn record_public(&mut self, manifest: &[u8], labels: &[String]) -> Result<(), String> {
        match &mut self.fallback {
            Some(f) => f.record_public(manifest, labels),
            None => Ok(()),
        }
    }

    fn review_command(&self) -> String {
        match &self.fallback {
            Some(f) if !self.names_server() => f.review_command(),
            _ => format!(
                "pinlog verify -lock {} MANIFEST",
                pinlog_core::render::safe(&self.lock_path)
            ),
        }
    }
}
