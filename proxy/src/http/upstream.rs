//! The way to the upstream: the session's messages POSTed in order, and each answer, JSON or
//! events, read back into the session.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use hyper::header::{self, HeaderValue};
use hyper::StatusCode;
use pinlog_core::render::{quoted, safe};
use pinlog_core::Value;
use pinlog_mcp::http::EventParser;
use pinlog_mcp::message::{self, Id, Message};
use tokio::sync::mpsc;

use super::route::route;
use super::sessions::SharedPublic;
use super::sessions::{adopt, forget, register, SharedPins};
use super::stream::Stream;
use super::{lock, Conn, How, Outgoing, Proxy, State, CLIENT_TIME, IDLE_TIME, SESSION};
use crate::queue::Budget;
use crate::session::{Pins, Session};
use crate::stdio::MAX_MESSAGE;

/// A new session's connection, with the task that carries its messages upstream: a handshake
/// session known by `sid`, the id the proxy gave its client, or without one a 2026-07-28
/// request's.
pub(super) fn new_conn<P: Pins + Send + 'static>(
    proxy: &Arc<Proxy<P>>,
    sid: Option<HeaderValue>,
) -> Arc<Conn<P>> {
    let (tx, rx) = mpsc::unbounded_channel();
    let mut session = Session::new(
        SharedPins(proxy.pins.clone()),
        &proxy.label,
        proxy.on_drift,
        MAX_MESSAGE,
    )
    .with_wire_ids(proxy.wire.clone());
    if let Some((public, on)) = &proxy.public {
        session = session.with_public(Box::new(SharedPublic(public.clone())), *on);
    }
    let stateless = sid.is_none();
    let conn = Arc::new(Conn {
        sid,
        state: Mutex::new(State {
            session,
            upstream_id: None,
            version: None,
            auth: None,
            stateless,
            init_wire: None,
            waiting: HashMap::new(),
            answers: HashMap::new(),
            get: None,
            used: Instant::now(),
            armed: None,
        }),
        upstream: tx,
        sending: Budget::default(),
    });
    // Weak: the sender ends once the session is forgotten and nothing else holds it.
    tokio::spawn(sender(proxy.clone(), Arc::downgrade(&conn), rx));
    register(proxy, &conn);
    conn
}

/// Carries the session's messages upstream in order. A request's exchange runs on its own (its
/// answer may take long, and may need the client's answer to a request of the server's first);
/// a notification or an answer is sent before what follows it.
async fn sender<P: Pins + Send + 'static>(
    proxy: Arc<Proxy<P>>,
    conn: Weak<Conn<P>>,
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
) {
    while let Some(out) = rx.recv().await {
        let Some(conn) = conn.upgrade() else { return };
        let bytes = out.body.len();
        if out.expects.is_some() {
            conn.sending.remove(bytes);
            tokio::spawn(exchange(proxy.clone(), conn, out));
        } else {
            let sent = exchange(proxy.clone(), conn.clone(), out);
            let _ = tokio::time::timeout(CLIENT_TIME, sent).await;
            conn.sending.remove(bytes);
        }
    }
}

/// POSTs one message upstream and feeds its answer to the session.
async fn exchange<P: Pins + Send + 'static>(
    proxy: Arc<Proxy<P>>,
    conn: Arc<Conn<P>>,
    out: Outgoing,
) {
    let mut headers = out.headers;
    if !headers.contains_key(header::ACCEPT) {
        let both = HeaderValue::from_static("application/json, text/event-stream");
        headers.insert(header::ACCEPT, both);
    }
    let sent = proxy
        .client
        .post(proxy.url.clone())
        .headers(headers)
        .header(header::CONTENT_TYPE, "application/json")
        .body(out.body)
        .send()
        .await;
    let resp = match sent {
        Ok(r) => r,
        Err(e) => {
            unreachable_note(&proxy, e);
            return answer_failed(&conn, out.expects, out.origin.as_ref(), None);
        }
    };
    let status = resp.status();
    if let Some(sid) = resp.headers().get(SESSION) {
        adopt(&conn, sid);
    }
    if status == StatusCode::NOT_FOUND {
        // The upstream no longer knows the session: neither does the proxy from now on.
        forget(&proxy, &conn);
    }
    if let Some(id) = &out.client {
        let mut st = lock(&conn.state);
        if st.waiting.contains_key(id) {
            let how = How {
                // Only an error status is passed on: a redirect is not followed, nor shown.
                status: match status.is_client_error() || status.is_server_error() {
                    true => status,
                    false => StatusCode::OK,
                },
                authenticate: resp.headers().get(header::WWW_AUTHENTICATE).cloned(),
                events: status.is_success() && is_events(&resp),
            };
            st.answers.insert(id.clone(), how);
        }
    }
    let answered = read_answer(&conn, resp, out.origin.as_ref(), out.expects.as_ref()).await;
    if !answered {
        answer_failed(&conn, out.expects, out.origin.as_ref(), Some(status));
    }
}

pub(super) fn is_events(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("text/event-stream")
        })
}

/// Reads an upstream answer, JSON or events, into the session. Whether it held the answer to
/// `expects`.
pub(super) async fn read_answer<P: Pins + Send + 'static>(
    conn: &Arc<Conn<P>>,
    mut resp: reqwest::Response,
    origin: Option<&Stream>,
    expects: Option<&Id>,
) -> bool {
    if !is_events(&resp) {
        let resp_ok = resp.status().is_success();
        let mut body = Vec::new();
        while let Ok(Some(chunk)) = resp.chunk().await {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_MESSAGE {
                return false;
            }
        }
        // The session reads anything that looks like JSON (strictly, so a bad answer fails a
        // check closed); after an error status only the error answer owed (a server's 400 with
        // `"id": null` answers nothing: the caller answers in its place).
        let json = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        let owed = || match message::read(&body, MAX_MESSAGE) {
            Ok(Message::Response { id, .. }) => Some(&id) == expects,
            _ => false,
        };
        if !json || (!resp_ok && !owed()) {
            return false;
        }
        return feed(conn, body, origin, expects);
    }
    let mut parser = EventParser::default();
    let mut answered = false;
    loop {
        // What the upstream sends waits in the client's stream: while that is full, the upstream
        // is not read (backpressure), for as long as the upstream may be silent.
        if let Some(o) = origin {
            tokio::select! {
                () = o.budget.room() => {}
                () = o.tx.closed() => break,
                () = tokio::time::sleep(IDLE_TIME) => {
                    eprintln!(
                        "pinlog: a client read nothing of its stream for {} s; it is closed",
                        IDLE_TIME.as_secs()
                    );
                    break;
                }
            }
        }
        let chunk = tokio::select! {
            chunk = resp.chunk() => chunk,
            // The client left: dropping the answer is how an HTTP client cancels.
            () = closed(origin) => break,
        };
        let Ok(Some(chunk)) = chunk else { break };
        let events = match parser.feed_events(&chunk, MAX_MESSAGE) {
            Ok(events) => events,
            Err(e) => {
                eprintln!(
                    "pinlog: an event stream from the upstream is not read further: {}",
                    safe(&e.to_string())
                );
                break;
            }
        };
        for e in events {
            // Priming events carry no data; other event types carry no message.
            if e.kind == "message" && !e.data.iter().all(u8::is_ascii_whitespace) {
                answered |= feed(conn, e.data, origin, expects);
            }
        }
    }
    answered
}

async fn closed(origin: Option<&Stream>) {
    match origin {
        Some(tx) => tx.tx.closed().await,
        None => std::future::pending().await,
    }
}

/// One message from the upstream into the session. Whether it answers `expects`.
fn feed<P: Pins + Send + 'static>(
    conn: &Arc<Conn<P>>,
    line: Vec<u8>,
    origin: Option<&Stream>,
    expects: Option<&Id>,
) -> bool {
    let mut st = lock(&conn.state);
    let answers = match message::read(&line, MAX_MESSAGE) {
        Ok(Message::Response { id, result, .. }) => {
            // The revision `initialize` settled on goes on the proxy's own requests after it.
            if st.version.is_none() && st.init_wire.as_ref() == Some(&id) {
                st.version = result
                    .as_ref()
                    .and_then(Value::as_object)
                    .and_then(|o| o.get("protocolVersion"))
                    .and_then(Value::as_str)
                    .and_then(|v| HeaderValue::from_str(v).ok());
            }
            Some(id)
        }
        _ => None,
    };
    let actions = st.session.from_server(line);
    route(conn, &mut st, actions, origin);
    answers.is_some() && answers.as_ref() == expects
}

/// The upstream owes an answer it did not give: the session gets an error in its place, so
/// nothing waits for ever (and a listing of the proxy's own fails the check closed).
fn answer_failed<P: Pins + Send + 'static>(
    conn: &Arc<Conn<P>>,
    expects: Option<Id>,
    origin: Option<&Stream>,
    status: Option<StatusCode>,
) {
    let Some(id) = expects else { return };
    let why = match status {
        Some(s) => format!(
            "pinlog proxy: the upstream answered HTTP {} without a JSON-RPC answer",
            s.as_u16()
        ),
        None => "pinlog proxy: the upstream could not be reached".to_string(),
    };
    feed(conn, message::error(&id, -32603, &why), origin, None);
}

/// Says the upstream could not be reached, without its URL.
pub(super) fn unreachable_note<P: Pins>(proxy: &Proxy<P>, e: reqwest::Error) {
    let e = e.without_url();
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    eprintln!(
        "pinlog: the upstream of {} could not be reached: {}",
        quoted(&proxy.label, 64),
        safe(&text)
    );
}
