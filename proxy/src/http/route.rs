//! The session's actions carried out: each message to the upstream or to the client stream it
//! belongs on, and the timer on a check under way.

use std::sync::Arc;
use std::time::Instant;

use hyper::header::{self, HeaderMap, HeaderValue};
use pinlog_mcp::message::{self, Message};

use super::stream::Stream;
use super::{lock, Conn, Delivery, Outgoing, State, METHOD, SESSION, VERSION};
use crate::queue;
use crate::session::{Action, Pins};
use crate::stdio::MAX_MESSAGE;

/// Carries out the session's actions: messages to the upstream, to the client, and notes.
/// `origin` is the client stream of the request whose upstream answer is being read.
pub(super) fn route<P: Pins + Send + 'static>(
    conn: &Arc<Conn<P>>,
    st: &mut State<P>,
    actions: Vec<Action>,
    origin: Option<&Stream>,
) {
    for action in actions {
        match action {
            Action::Note(text) => eprintln!("pinlog: {text}"),
            Action::ToServer(bytes) => to_upstream(conn, st, bytes),
            Action::ToClient(bytes) => to_client(st, bytes, origin),
        }
    }
    arm(conn, st);
}

fn to_upstream<P: Pins>(conn: &Conn<P>, st: &mut State<P>, bytes: Vec<u8>) {
    let (id, method) = match message::read(&bytes, MAX_MESSAGE) {
        Ok(Message::Request { id, method, .. }) => (Some(id), Some(method)),
        Ok(Message::Notification { method, .. }) => (None, Some(method)),
        _ => (None, None),
    };
    if id.is_some() && method.as_deref() == Some("initialize") {
        st.init_wire = id.clone();
    }
    // The session sends the client's request under an id of its own, and knows whose it is.
    let client_id = id.as_ref().and_then(|w| st.session.client_id(w)).cloned();
    let client = client_id.as_ref().and_then(|c| st.waiting.get(c));
    // The client's own request goes with the headers it came with; anything else (the proxy's
    // own requests, answers, notifications) with the session's.
    let mut headers = match client {
        Some(w) => w.headers.clone(),
        None => {
            let mut h = HeaderMap::new();
            if let Some(a) = &st.auth {
                h.insert(header::AUTHORIZATION, a.clone());
            }
            if let (true, Some(m)) = (st.stateless, method) {
                if let Ok(m) = HeaderValue::from_str(&m) {
                    h.insert(METHOD, m);
                }
            }
            h
        }
    };
    if let (false, Some(v)) = (headers.contains_key(VERSION), &st.version) {
        headers.insert(VERSION, v.clone());
    }
    if let (false, Some(sid)) = (st.stateless, &st.upstream_id) {
        headers.insert(SESSION, sid.clone());
    }
    let origin = client.map(|w| w.tx.clone());
    conn.sending.add(bytes.len());
    let _ = conn.upstream.send(Outgoing {
        body: bytes,
        headers,
        expects: id,
        client: client_id,
        origin,
    });
}

/// An answer goes to the request waiting for it; anything else on the stream of the request
/// it came with, else on the client's GET stream, else nowhere.
fn to_client<P: Pins>(st: &mut State<P>, bytes: Vec<u8>, origin: Option<&Stream>) {
    let answers = match message::read(&bytes, MAX_MESSAGE) {
        Ok(Message::Response { id, .. }) => Some(id),
        _ => None,
    };
    if let Some((id, w)) = answers.and_then(|id| st.waiting.remove_entry(&id)) {
        let how = st.answers.remove(&id);
        let _ = w.tx.send(Delivery {
            bytes,
            last: true,
            how,
        });
        return;
    }
    let mut d = Delivery {
        bytes,
        last: false,
        how: None,
    };
    // The stream whose upstream answer is being read has room: that reader waits for it.
    if let Some(tx) = origin {
        match tx.send(d) {
            Ok(()) => return,
            Err(back) => d = back,
        }
    }
    let Some(get) = &st.get else { return };
    // Nothing else waits for the GET stream: one its client does not read is cut off, not grown.
    if !get.budget.has_room() {
        eprintln!(
            "pinlog: the client's GET stream holds {} it has not read; it is closed",
            queue::bounds()
        );
        st.get = None;
    } else if get.send(d).is_err() {
        st.get = None;
    }
}

/// A check under way has a deadline: once it passes with the check still going, the session
/// hears so (and answers everything with an error), so an upstream that never answers holds no
/// client for ever.
fn arm<P: Pins + Send + 'static>(conn: &Arc<Conn<P>>, st: &mut State<P>) {
    let Some(deadline) = st.session.deadline() else {
        return;
    };
    if st.armed == Some(deadline) {
        return;
    }
    st.armed = Some(deadline);
    let conn = Arc::downgrade(conn);
    tokio::spawn(async move {
        tokio::time::sleep_until(deadline.into()).await;
        let Some(conn) = conn.upgrade() else { return };
        let mut st = lock(&conn.state);
        if st.session.deadline().is_some_and(|d| d <= Instant::now()) {
            let actions = st.session.timed_out();
            route(&conn, &mut st, actions, None);
        }
    });
}
