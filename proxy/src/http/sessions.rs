//! The sessions the proxy knows, by the session id it gave the client, and the pins they share.

use std::sync::{Arc, Mutex};

use hyper::header::HeaderValue;

use super::{lock, Conn, Proxy};
use crate::session::{Pins, Public, PublicVerdict};

/// Sessions kept at once; past it the one idle longest is forgotten (its client gets 404 and
/// initializes again, which checks the surface again).
const MAX_SESSIONS: usize = 256;

/// One set of pins for every session: each call takes the lock for itself only, and the store
/// itself keeps concurrent writers apart.
pub(super) struct SharedPins<P>(pub(super) Arc<Mutex<P>>);

impl<P: Pins> Pins for SharedPins<P> {
    fn approved(&mut self) -> Result<Option<(Vec<u8>, String)>, String> {
        lock(&self.0).approved()
    }
    fn id(&self) -> String {
        lock(&self.0).id()
    }
    fn pin_first_use(&mut self, manifest: &[u8]) -> Result<Option<String>, String> {
        lock(&self.0).pin_first_use(manifest)
    }
    fn record_drift(&mut self, manifest: &[u8], labels: &[String]) -> Result<(), String> {
        lock(&self.0).record_drift(manifest, labels)
    }
    fn release(&mut self) -> Result<(), String> {
        lock(&self.0).release()
    }
    fn review_command(&self) -> String {
        lock(&self.0).review_command()
    }
    fn record_public(&mut self, manifest: &[u8], labels: &[String]) -> Result<(), String> {
        lock(&self.0).record_public(manifest, labels)
    }
}

/// The proxy's one public log.
pub(super) type SharedLog = Arc<Mutex<Box<dyn Public + Send>>>;

/// The proxy's one public log, as each of its sessions asks it.
pub(super) struct SharedPublic(pub(super) SharedLog);

impl Public for SharedPublic {
    fn compare(
        &mut self,
        served: &crate::check::Served,
        id: &str,
    ) -> (Vec<String>, Option<PublicVerdict>) {
        lock(&self.0).compare(served, id)
    }
}

/// A new session id for a client: 128 bits from the system's random source, so that no client
/// can name another's session and read its answers. `None` when there is no random source.
pub(super) fn mint() -> Option<HeaderValue> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    HeaderValue::from_str(&hex).ok()
}

pub(super) fn lookup<P: Pins>(proxy: &Proxy<P>, sid: &HeaderValue) -> Option<Arc<Conn<P>>> {
    let key = sid.to_str().ok()?;
    lock(&proxy.sessions).get(key).cloned()
}

/// A new session is known by the id the proxy gave it.
pub(super) fn register<P: Pins>(proxy: &Proxy<P>, conn: &Arc<Conn<P>>) {
    let Some(key) = conn.sid.as_ref().and_then(|s| s.to_str().ok()) else {
        return;
    };
    let mut sessions = lock(&proxy.sessions);
    if sessions.len() >= MAX_SESSIONS {
        let idle = sessions
            .iter()
            .min_by_key(|(_, c)| lock(&c.state).used)
            .map(|(k, _)| k.clone());
        if let Some(k) = idle {
            sessions.remove(&k);
        }
    }
    sessions.insert(key.to_string(), conn.clone());
}

/// The upstream gave the session its id: the proxy's requests of this session carry it from now
/// on. The client never sees it.
pub(super) fn adopt<P: Pins>(conn: &Conn<P>, sid: &HeaderValue) {
    let mut st = lock(&conn.state);
    if st.upstream_id.is_none() && !st.stateless {
        st.upstream_id = Some(sid.clone());
    }
}

pub(super) fn forget<P: Pins>(proxy: &Proxy<P>, conn: &Arc<Conn<P>>) {
    let Some(key) = conn.sid.as_ref().and_then(|s| s.to_str().ok()) else {
        return;
    };
    let mut sessions = lock(&proxy.sessions);
    if sessions.get(key).is_some_and(|c| Arc::ptr_eq(c, conn)) {
        sessions.remove(key);
    }
}
