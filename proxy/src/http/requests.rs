//! What the client sends: a POST, a GET or a DELETE, checked and handed to its session.

use std::sync::Arc;
use std::time::Instant;

use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use pinlog_core::Value;
use pinlog_mcp::loopback;
use pinlog_mcp::message::{self, Id, Message};

use super::envelope::envelope;
use super::response::{empty, full, respond, rpc_error};
use super::route::route;
use super::sessions::{forget, lookup, mint};
use super::stream::{events, stream};
use super::upstream::new_conn;
use super::upstream::{is_events, read_answer, unreachable_note};
use super::{lock, Body, Conn, Proxy, Waiter, CLIENT_TIME, SESSION, VERSION};
use crate::queue;
use crate::session::{Outcome, Pins};
use crate::stdio::MAX_MESSAGE;

/// Requests of one session waiting for their answers at once: each holds a stream, and a client
/// that never reads them must not grow them without bound.
const MAX_WAITING: usize = 256;

pub(super) async fn handle<P: Pins + Send + 'static>(
    proxy: Arc<Proxy<P>>,
    req: Request<Incoming>,
) -> Response<Body> {
    if !from_this_machine(req.headers()) {
        return rpc_error(
            StatusCode::FORBIDDEN,
            None,
            -32600,
            "pinlog proxy: the request's Host or Origin is not this machine",
        );
    }
    match *req.method() {
        Method::POST => post(proxy, req).await,
        Method::GET => get(proxy, req).await,
        Method::DELETE => delete(proxy, req).await,
        _ => empty(StatusCode::METHOD_NOT_ALLOWED),
    }
}

/// DNS rebinding: a web page can make a browser send requests to a loopback port under the
/// page's own host name. Only requests naming this machine, from no other origin, are served.
/// The upstream cannot check this behind the proxy: it sees the proxy's Host.
fn from_this_machine(headers: &HeaderMap) -> bool {
    let value = |name| headers.get(name).map(HeaderValue::as_bytes);
    loopback::check(value(header::HOST), value(header::ORIGIN)).is_ok()
}

/// The client's headers that belong upstream: its credentials, what answers it accepts, and
/// MCP's own headers (the revision, and in the 2026-07-28 era `Mcp-Method`, `Mcp-Name`,
/// `Mcp-Param-*`). The session id is the session's, set where the request goes out.
fn forwarded(headers: &HeaderMap) -> HeaderMap {
    headers
        .iter()
        .filter(|(n, _)| {
            *n == header::AUTHORIZATION
                || *n == header::ACCEPT
                || (n.as_str().starts_with("mcp-") && *n != SESSION)
        })
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect()
}

async fn post<P: Pins + Send + 'static>(
    proxy: Arc<Proxy<P>>,
    req: Request<Incoming>,
) -> Response<Body> {
    let (parts, body) = req.into_parts();
    let collected = tokio::time::timeout(CLIENT_TIME, Limited::new(body, MAX_MESSAGE).collect());
    let Ok(Ok(body)) = collected.await else {
        return rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            -32600,
            "pinlog proxy: the body is too large, or was not sent in time",
        );
    };
    let body = body.to_bytes().to_vec();
    let (id, method, envelope, cancels) = match message::read(&body, MAX_MESSAGE) {
        Ok(Message::Request { id, method, params }) => {
            let envelope = envelope(params.as_ref(), parts.headers.get(VERSION));
            (Some(id), method, envelope, None)
        }
        Ok(Message::Notification { method, params }) => {
            let cancels = (method == "notifications/cancelled")
                .then(|| params.as_ref().and_then(Value::as_object)?.get("requestId"))
                .flatten()
                .and_then(Id::of);
            (None, method, Ok(()), cancels)
        }
        Ok(Message::Response { .. }) => (None, String::new(), Ok(()), None),
        // A batch too: no revision the proxy speaks uses one.
        Err(_) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                -32700,
                "pinlog proxy: the body is not one strict JSON-RPC message",
            )
        }
    };
    let initialize = method == "initialize";
    let conn = match (parts.headers.get(SESSION), &id) {
        (Some(sid), _) => match lookup(&proxy, sid) {
            Some(c) => c,
            // Never forwarded: the proxy checked no surface for a session it does not know.
            None => {
                return rpc_error(
                    StatusCode::NOT_FOUND,
                    id.as_ref(),
                    -32001,
                    "pinlog proxy: session not found; initialize again",
                )
            }
        },
        // A new session, with an id of the proxy's whatever the upstream gives: the one thing
        // that tells this client's requests from another's.
        (None, Some(id)) if initialize => match mint() {
            Some(sid) => new_conn(&proxy, Some(sid)),
            None => {
                return rpc_error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    Some(id),
                    -32603,
                    "pinlog proxy: no random source for a session id",
                )
            }
        },
        // A 2026-07-28 request with its envelope whole.
        (None, Some(id)) => match envelope {
            Err(refusal) => return refusal.answer(id),
            Ok(()) => new_conn(&proxy, None),
        },
        (None, None) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                -32600,
                "pinlog proxy: Mcp-Session-Id is missing",
            )
        }
    };
    // Backpressure: the client's message waits while the upstream has not taken what came before.
    if tokio::time::timeout(CLIENT_TIME, conn.sending.room())
        .await
        .is_err()
    {
        return not_taken(id.as_ref(), "wait to be sent upstream");
    }
    let mut rx = None;
    {
        let mut st = lock(&conn.state);
        if !st.session.takes_from_client() {
            return not_taken(id.as_ref(), "wait for the server's surface to be checked");
        }
        st.used = Instant::now();
        if let Some(a) = parts.headers.get(header::AUTHORIZATION) {
            st.auth = Some(a.clone());
        }
        if let Some(v) = parts.headers.get(VERSION) {
            st.version = Some(v.clone());
        }
        if let Some(id) = &id {
            // The client's ids name its requests within its session: one already waiting would
            // take the other's answer.
            if st.waiting.contains_key(id) {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    Some(id),
                    -32600,
                    "pinlog proxy: a request with this id is already waiting in this session",
                );
            }
            if st.waiting.len() >= MAX_WAITING {
                return rpc_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    Some(id),
                    -32603,
                    &format!(
                        "pinlog proxy: {MAX_WAITING} requests of this session wait for their \
                         answers; this one was not taken"
                    ),
                );
            }
            let (tx, r) = stream();
            let waiter = Waiter {
                tx,
                headers: forwarded(&parts.headers),
            };
            st.waiting.insert(id.clone(), waiter);
            rx = Some(r);
        }
        // A cancelled request is answered no more: its POST ends when the upstream's answer
        // to it does.
        if let Some(c) = &cancels {
            st.waiting.remove(c);
            st.answers.remove(c);
        }
        let actions = st.session.from_client(body);
        route(&conn, &mut st, actions, None);
    }
    let Some(mut rx) = rx else {
        return empty(StatusCode::ACCEPTED);
    };
    let Some(mut first) = rx.recv().await else {
        return rpc_error(
            StatusCode::BAD_GATEWAY,
            id.as_ref(),
            -32603,
            "pinlog proxy: the request was cancelled, or its session ended",
        );
    };
    // Answered as the upstream answered: JSON, or events (also when more than the answer
    // came); an answer of the proxy's own is JSON.
    let mut resp = match first.how.take() {
        Some(how) if how.events => events(Some(first), rx),
        how if first.last => {
            let status = how.as_ref().map_or(StatusCode::OK, |h| h.status);
            let mut resp = respond(status, "application/json", full(first.bytes));
            if let Some(a) = how.and_then(|h| h.authenticate) {
                resp.headers_mut().insert(header::WWW_AUTHENTICATE, a);
            }
            resp
        }
        _ => events(Some(first), rx),
    };
    if let Some(sid) = &conn.sid {
        resp.headers_mut().insert(SESSION, sid.clone());
    }
    resp
}

/// A client message refused because `what` already holds as much as it may (503).
fn not_taken(id: Option<&Id>, what: &str) -> Response<Body> {
    rpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        id,
        -32603,
        &format!(
            "pinlog proxy: {} {what}; this message was not taken",
            queue::bounds()
        ),
    )
}

/// The session a GET or DELETE names: 400 without a session id, 404 for one not known here.
fn session_of<P: Pins>(
    proxy: &Proxy<P>,
    req: &Request<Incoming>,
) -> Result<(HeaderValue, Arc<Conn<P>>), StatusCode> {
    let sid = req.headers().get(SESSION).ok_or(StatusCode::BAD_REQUEST)?;
    let conn = lookup(proxy, sid).ok_or(StatusCode::NOT_FOUND)?;
    Ok((sid.clone(), conn))
}

/// The client's GET stream: what the upstream sends on its own GET stream, through the session.
async fn get<P: Pins + Send + 'static>(
    proxy: Arc<Proxy<P>>,
    req: Request<Incoming>,
) -> Response<Body> {
    let (sid, conn) = match session_of(&proxy, &req) {
        Ok(found) => found,
        Err(status) => return empty(status),
    };
    let mut headers = forwarded(req.headers());
    {
        let mut st = lock(&conn.state);
        // Nothing more reaches a server whose session was blocked.
        if st.session.outcome() != Outcome::Open {
            return empty(StatusCode::METHOD_NOT_ALLOWED);
        }
        st.used = Instant::now();
        if let (false, Some(v)) = (headers.contains_key(VERSION), &st.version) {
            headers.insert(VERSION, v.clone());
        }
        if let Some(up) = &st.upstream_id {
            headers.insert(SESSION, up.clone());
        }
    }
    let accept = HeaderValue::from_static("text/event-stream");
    headers.entry(header::ACCEPT).or_insert(accept);
    let sent = proxy
        .client
        .get(proxy.url.clone())
        .headers(headers)
        .send()
        .await;
    let resp = match sent {
        Ok(r) => r,
        Err(e) => {
            unreachable_note(&proxy, e);
            return empty(StatusCode::BAD_GATEWAY);
        }
    };
    let status = resp.status();
    if !status.is_success() || !is_events(&resp) {
        if status == StatusCode::NOT_FOUND {
            forget(&proxy, &conn);
        }
        let mut out = empty(status);
        if let Some(a) = resp.headers().get(header::WWW_AUTHENTICATE) {
            out.headers_mut()
                .insert(header::WWW_AUTHENTICATE, a.clone());
        }
        return out;
    }
    let (tx, rx) = stream();
    lock(&conn.state).get = Some(tx.clone());
    tokio::spawn(async move {
        read_answer(&conn, resp, Some(&tx), None).await;
        // The upstream ended its stream: so does the client's, so that it opens another.
        let mut st = lock(&conn.state);
        if st.get.as_ref().is_some_and(|g| g.tx.same_channel(&tx.tx)) {
            st.get = None;
        }
    });
    let mut resp = events(None, rx);
    resp.headers_mut().insert(SESSION, sid.clone());
    resp
}

/// The client ends its session: so does the upstream's, when it gave one.
async fn delete<P: Pins + Send + 'static>(
    proxy: Arc<Proxy<P>>,
    req: Request<Incoming>,
) -> Response<Body> {
    let conn = match session_of(&proxy, &req) {
        Ok((_, conn)) => conn,
        Err(status) => return empty(status),
    };
    let Some(up) = lock(&conn.state).upstream_id.clone() else {
        forget(&proxy, &conn);
        return empty(StatusCode::OK);
    };
    let mut headers = forwarded(req.headers());
    headers.insert(SESSION, up);
    let sent = proxy
        .client
        .delete(proxy.url.clone())
        .headers(headers)
        .send()
        .await;
    match sent {
        Ok(r) => {
            // 405: the upstream does not let clients end sessions, so this one goes on.
            if r.status().is_success() || r.status() == StatusCode::NOT_FOUND {
                forget(&proxy, &conn);
            }
            empty(r.status())
        }
        Err(e) => {
            unreachable_note(&proxy, e);
            empty(StatusCode::BAD_GATEWAY)
        }
    }
}
