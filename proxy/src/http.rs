//! The Streamable HTTP proxy, `pinlog proxy --listen ADDR --upstream URL`: the client talks HTTP
//! to this process, and this process talks HTTP to the server. Every MCP session (keyed by the
//! upstream's `Mcp-Session-Id`, which the client gets unchanged) runs through a [`Session`] of its
//! own, exactly as a stdio session does. The 2026-07-28 era has no sessions: each request gets a
//! `Session` of its own, so the surface is listed and checked before that request goes on.
//!
//! The session's actions, mapped onto HTTP:
//! - a client POST carrying a request waits for the answer to it, and gets it as the upstream
//!   answered: JSON with the upstream's error status, or an event stream carrying what the server
//!   sent about the request (progress, its own requests) and ending with the answer. An answer
//!   the proxy makes itself (a block, a hold) is JSON;
//! - other messages for the client go on the stream of the request they came with, else on the
//!   client's GET stream, else nowhere (as a server with no stream open would not send them);
//! - every message for the server is POSTed upstream with the client's `Authorization`, `Accept`
//!   and MCP headers; the answer, JSON or events, is split into messages and fed to the session.
//!
//! Nothing reaches the upstream for a request whose Host or Origin is not this machine (DNS
//! rebinding), nor for a session the proxy does not know (404: the client initializes again).
//! Header values and the upstream URL are never printed: either may hold a credential.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, Full, Limited};
use hyper::body::{Frame, Incoming};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use pinlog_core::render::{quoted, safe};
use pinlog_core::Value;
use pinlog_mcp::http::EventParser;
use pinlog_mcp::loopback;
use pinlog_mcp::message::{self, Id, Message};
use pinlog_mcp::revision::{Era, Revision};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::options::ProxyOptions;
use crate::pins::{LockPins, StorePins};
use crate::queue::{self, Budget};
use crate::session::{Action, OnDrift, Outcome, Pins, Session};
use crate::stdio::MAX_MESSAGE;
use crate::store::{ServerKey, Store};
use pinlog_core::exit::Failure;

const SESSION: &str = "mcp-session-id";
const VERSION: &str = "mcp-protocol-version";
const METHOD: &str = "mcp-method";
/// Sessions kept at once; past it the one idle longest is forgotten (its client gets 404 and
/// initializes again, which checks the surface again).
const MAX_SESSIONS: usize = 256;
/// How long a client may take to send its headers, and then its body.
const CLIENT_TIME: Duration = Duration::from_secs(30);
const CONNECT_TIME: Duration = Duration::from_secs(10);
/// The longest silence on an upstream answer: a stream may stay open long, not silent long.
const IDLE_TIME: Duration = Duration::from_secs(300);

type Body = BoxBody<Bytes, Infallible>;

pub struct HttpOptions {
    /// The upstream's Streamable HTTP endpoint.
    pub upstream: String,
    /// What people see the server called.
    pub label: String,
    pub on_drift: OnDrift,
}

/// `pinlog proxy --listen ADDR --upstream URL`: serves until SIGINT or SIGTERM (exit 0). Exit 2
/// for an address that is not loopback or an upstream that is not an http(s) URL; 4 when the
/// store or the lockfile cannot be read or the address cannot be bound.
pub fn run_listener(args: &ProxyOptions, upstream: &str) -> Result<u8, Failure> {
    let listen = args
        .listen
        .ok_or_else(|| Failure::usage("--upstream needs --listen ADDR"))?;
    // The proxy passes requests on with the client's credentials and has none of its own to
    // ask for: only this machine may reach it.
    let listen = loopback::require(listen).map_err(|_| {
        Failure::usage(format!(
            "--listen {listen}: only a loopback address (127.0.0.1, [::1]) is served"
        ))
    })?;
    let url = reqwest::Url::parse(upstream)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| Failure::usage("--upstream must be an http or https URL"))?;
    // The URL itself may carry a token: the default label is its host and port only.
    let label = args.name.clone().unwrap_or_else(|| {
        let host = url.host_str().unwrap_or_default();
        url.port()
            .map_or(host.to_string(), |p| format!("{host}:{p}"))
    });
    // A store, a pin or a lockfile that cannot be read stops the proxy before it listens.
    let store = Store::home()
        .and_then(|h| Store::open(&h))
        .map_err(|e| Failure::unreadable(e.to_string()))?;
    let key = ServerKey::from_url(upstream);
    if let Err(e) = store.pinned(&key) {
        return Err(Failure::unreadable(format!(
            "{e} (`pinlog forget {key}` drops the pin)"
        )));
    }
    let lock = match &args.lock {
        None => None,
        Some(path) => {
            let bytes = pinlog_core::files::read_bounded(path, 64 << 20).map_err(|e| {
                Failure::unreadable(format!("cannot read the lockfile {}: {e}", path.display()))
            })?;
            let read = pinlog_core::lockfile::Lockfile::read(&bytes).map_err(|e| {
                Failure::unreadable(format!("the lockfile {}: {e}", path.display()))
            })?;
            if args.only_locked && read.server(&label).is_none() {
                return Err(Failure::unreadable(format!(
                    "the lockfile {} does not name the server {} and --only-locked is set",
                    path.display(),
                    quoted(&label, 64)
                )));
            }
            Some((bytes, path.display().to_string()))
        }
    };
    let store_pins = StorePins {
        store,
        key: key.clone(),
        label: label.clone(),
    };
    let on_drift = args.on_drift;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::unreadable(format!("cannot start the runtime: {e}")))?;
    let listener = runtime
        .block_on(TcpListener::bind(listen))
        .map_err(|e| Failure::unreadable(format!("cannot listen on {listen}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| Failure::unreadable(e.to_string()))?;
    eprintln!(
        "pinlog: listening on http://{bound}/ for {} (server key {key})",
        quoted(&label, 64)
    );
    let options = HttpOptions {
        upstream: upstream.to_string(),
        label: label.clone(),
        on_drift,
    };
    match lock {
        Some((lock, lock_path)) => {
            let pins = LockPins {
                lock,
                lock_path,
                id: label,
                fallback: (!args.only_locked).then_some(store_pins),
            };
            runtime.block_on(serve(listener, options, pins, stop()))
        }
        None => runtime.block_on(serve(listener, options, store_pins, stop())),
    }
    .map_err(Failure::unreadable)?;
    Ok(0)
}

async fn stop() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// Serves clients on `listener` until `shutdown` completes.
pub async fn serve<P, F>(
    listener: TcpListener,
    options: HttpOptions,
    pins: P,
    shutdown: F,
) -> Result<(), String>
where
    P: Pins + Send + 'static,
    F: Future<Output = ()>,
{
    let url = reqwest::Url::parse(&options.upstream)
        .map_err(|e| format!("--upstream is not a URL: {e}"))?;
    // No redirects: the client's Authorization goes to the upstream it named, nowhere else.
    let client = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIME)
        .read_timeout(IDLE_TIME)
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
        .build()
        .map_err(|e| format!("no HTTP client: {e}"))?;
    let proxy = Arc::new(Proxy {
        pins: Arc::new(Mutex::new(pins)),
        label: options.label,
        on_drift: options.on_drift,
        url,
        client,
        sessions: Mutex::new(HashMap::new()),
        sessionless: Mutex::new(None),
    });
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Out of descriptors, say: wait rather than spin.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => return Ok(()),
        };
        let proxy = proxy.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let proxy = proxy.clone();
                async move { Ok::<_, Infallible>(handle(proxy, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(CLIENT_TIME)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

struct Proxy<P: Pins> {
    pins: Arc<Mutex<P>>,
    label: String,
    on_drift: OnDrift,
    url: reqwest::Url,
    client: reqwest::Client,
    /// Handshake-era sessions, by the upstream's session id.
    sessions: Mutex<HashMap<String, Arc<Conn<P>>>>,
    /// A handshake-era session whose upstream gave no session id: sessionless requests go to it.
    sessionless: Mutex<Option<Arc<Conn<P>>>>,
}

/// One session of the client's, and the way to its upstream.
struct Conn<P: Pins> {
    state: Mutex<State<P>>,
    /// Messages for the upstream, sent in order by [`sender`].
    upstream: mpsc::UnboundedSender<Outgoing>,
    /// What waits in `upstream`: a client's message is taken only while it has room.
    sending: Budget,
}

struct State<P: Pins> {
    session: Session<SharedPins<P>>,
    /// The upstream's session id, once it gave one.
    id: Option<HeaderValue>,
    /// `MCP-Protocol-Version` for the proxy's own requests: the client's, else the revision the
    /// upstream's `initialize` settled on.
    version: Option<HeaderValue>,
    /// The client's latest `Authorization`, for the proxy's own requests. Never printed.
    auth: Option<HeaderValue>,
    /// The 2026-07-28 era: one request, no session id, and the method named in a header.
    stateless: bool,
    /// The id of the client's `initialize`, and the one it went upstream under.
    init: Option<Id>,
    init_wire: Option<Id>,
    /// The client's requests not answered yet, by the client's id.
    waiting: HashMap<Id, Waiter>,
    /// How the upstream answered the client's requests: the client is answered the same way.
    answers: HashMap<Id, How>,
    /// The client's GET stream.
    get: Option<Stream>,
    used: Instant,
    /// The check deadline a timer is set for.
    armed: Option<Instant>,
}

/// A client request waiting for its answer.
struct Waiter {
    tx: Stream,
    /// The client's headers that go upstream with the request.
    headers: HeaderMap,
    /// The method and parameters, as the session writes them: the session sends the request
    /// upstream under an id of its own, and this is how the proxy knows it again.
    method: String,
    params: Vec<u8>,
    /// Sent upstream.
    sent: bool,
}

/// A message for the client.
struct Delivery {
    bytes: Vec<u8>,
    /// The answer that ends a POST's stream.
    last: bool,
    /// How the upstream answered, when this is the answer to a request it was sent.
    how: Option<How>,
}

struct How {
    status: StatusCode,
    /// So that a client can find how to authenticate (RFC 9728); not a secret.
    authenticate: Option<HeaderValue>,
    /// As an event stream.
    events: bool,
}

/// A message for the upstream.
struct Outgoing {
    body: Vec<u8>,
    headers: HeaderMap,
    /// The request id whose answer the upstream owes.
    expects: Option<Id>,
    /// The client's id for that request, when it is the client's.
    client: Option<Id>,
    /// The client stream that what the upstream sends about this request belongs on.
    origin: Option<Stream>,
}

/// One set of pins for every session: each call takes the lock for itself only, and the store
/// itself keeps concurrent writers apart.
struct SharedPins<P>(Arc<Mutex<P>>);

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
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

async fn handle<P: Pins + Send + 'static>(
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

fn lookup<P: Pins>(proxy: &Proxy<P>, sid: &HeaderValue) -> Option<Arc<Conn<P>>> {
    let key = sid.to_str().ok()?;
    lock(&proxy.sessions).get(key).cloned()
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
    let (id, method, params, revision, envelope) = match message::read(&body, MAX_MESSAGE) {
        Ok(Message::Request { id, method, params }) => {
            let revision = params
                .as_ref()
                .and_then(Value::as_object)
                .and_then(|p| p.get("_meta"))
                .and_then(Value::as_object)
                .is_some_and(|m| m.get("io.modelcontextprotocol/protocolVersion").is_some());
            let envelope = envelope(params.as_ref(), parts.headers.get(VERSION));
            (
                Some(id),
                method,
                written(params.as_ref()),
                revision,
                envelope,
            )
        }
        Ok(Message::Notification { method, .. }) => (None, method, Vec::new(), false, Ok(())),
        Ok(Message::Response { .. }) => (None, String::new(), Vec::new(), false, Ok(())),
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
    let conn = match parts.headers.get(SESSION) {
        Some(sid) => match lookup(&proxy, sid) {
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
        None => {
            let sessionless = lock(&proxy.sessionless).clone();
            match (sessionless, &id) {
                (Some(c), _) if !initialize && !revision => c,
                // A new session (initialize), or a 2026-07-28 request with its envelope whole.
                (_, Some(id)) => match envelope {
                    Err(refusal) if !initialize => return refusal.answer(id),
                    _ => new_conn(&proxy, !initialize),
                },
                _ => {
                    return rpc_error(
                        StatusCode::BAD_REQUEST,
                        None,
                        -32600,
                        "pinlog proxy: Mcp-Session-Id is missing",
                    )
                }
            }
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
            let (tx, r) = stream();
            let waiter = Waiter {
                tx,
                headers: forwarded(&parts.headers),
                method: method.clone(),
                params,
                sent: false,
            };
            st.waiting.insert(id.clone(), waiter);
            if initialize {
                st.init = Some(id.clone());
            }
            rx = Some(r);
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
            "pinlog proxy: the session ended",
        );
    };
    let (sid, open) = {
        let st = lock(&conn.state);
        (st.id.clone(), st.session.outcome() == Outcome::Open)
    };
    if initialize && sid.is_none() && open && first.last {
        *lock(&proxy.sessionless) = Some(conn.clone());
    }
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
    if let Some(sid) = sid {
        resp.headers_mut().insert(SESSION, sid);
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

/// Why a request outside a session does not carry the 2026-07-28 envelope it needs: answered as
/// the specification has a server answer it (HTTP 400), with the request's id, before anything
/// reaches the upstream.
struct Refusal {
    code: i64,
    message: String,
    /// The error's `data`, as JSON.
    data: Option<Vec<u8>>,
}

impl Refusal {
    fn answer(self, id: &Id) -> Response<Body> {
        let bytes = message::error_with_data(id, self.code, &self.message, self.data.as_deref());
        respond(StatusCode::BAD_REQUEST, "application/json", full(bytes))
    }
}

/// Checks a request outside a session as a 2026-07-28 request: `_meta` names the revision (as
/// the `MCP-Protocol-Version` header does, when sent: -32020 otherwise), one of that era the
/// proxy speaks (-32022, naming those it speaks), and the client's capabilities (-32602).
fn envelope(params: Option<&Value<'_>>, header: Option<&HeaderValue>) -> Result<(), Refusal> {
    let invalid = |why: &str| Refusal {
        code: -32602,
        message: format!(
            "pinlog proxy: a request outside a session is initialize, or carries _meta with \
             io.modelcontextprotocol/protocolVersion and \
             io.modelcontextprotocol/clientCapabilities; {why}"
        ),
        data: None,
    };
    let meta = params
        .and_then(Value::as_object)
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .ok_or_else(|| invalid("params._meta is not an object"))?;
    let Some(Value::String(requested)) = meta.get("io.modelcontextprotocol/protocolVersion") else {
        return Err(invalid("the protocol version is missing, or not a string"));
    };
    if header.is_some_and(|h| h.as_bytes() != requested.as_bytes()) {
        return Err(Refusal {
            code: -32020,
            message: "pinlog proxy: the MCP-Protocol-Version header does not match \
                      _meta's io.modelcontextprotocol/protocolVersion"
                .into(),
            data: None,
        });
    }
    let spoken: Vec<Revision> = Revision::ALL
        .into_iter()
        .filter(|r| r.era() == Era::Stateless)
        .collect();
    if !spoken.iter().any(|r| r.as_str() == requested.as_ref()) {
        let mut data = b"{\"supported\":[".to_vec();
        for (i, r) in spoken.iter().enumerate() {
            if i > 0 {
                data.push(b',');
            }
            pinlog_core::json::write_string(&mut data, r.as_str());
        }
        data.extend_from_slice(b"],\"requested\":");
        pinlog_core::json::write_string(&mut data, requested);
        data.push(b'}');
        return Err(Refusal {
            code: -32022,
            message: "pinlog proxy: unsupported protocol version".into(),
            data: Some(data),
        });
    }
    match meta.get("io.modelcontextprotocol/clientCapabilities") {
        Some(Value::Object(_)) => Ok(()),
        _ => Err(invalid(
            "the client capabilities are missing, or not an object",
        )),
    }
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
    }
    headers.insert(SESSION, sid.clone());
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

/// The client ends its session: so does the upstream's.
async fn delete<P: Pins + Send + 'static>(
    proxy: Arc<Proxy<P>>,
    req: Request<Incoming>,
) -> Response<Body> {
    let (sid, conn) = match session_of(&proxy, &req) {
        Ok(found) => found,
        Err(status) => return empty(status),
    };
    let mut headers = forwarded(req.headers());
    headers.insert(SESSION, sid.clone());
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

fn new_conn<P: Pins + Send + 'static>(proxy: &Arc<Proxy<P>>, stateless: bool) -> Arc<Conn<P>> {
    let (tx, rx) = mpsc::unbounded_channel();
    let session = Session::new(
        SharedPins(proxy.pins.clone()),
        &proxy.label,
        proxy.on_drift,
        MAX_MESSAGE,
    );
    let conn = Arc::new(Conn {
        state: Mutex::new(State {
            session,
            id: None,
            version: None,
            auth: None,
            stateless,
            init: None,
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

/// Carries out the session's actions: messages to the upstream, to the client, and notes.
/// `origin` is the client stream of the request whose upstream answer is being read.
fn route<P: Pins + Send + 'static>(
    conn: &Arc<Conn<P>>,
    st: &mut State<P>,
    actions: Vec<Action>,
    origin: Option<&Stream>,
) {
    // Requests the session sends while it checks are its own; once it is open, they are the
    // client's (released from its queue, or just received). The client's `initialize` is sent
    // while checking, as the check's first step.
    let checking = st.session.is_checking();
    for action in actions {
        match action {
            Action::Note(text) => eprintln!("pinlog: {text}"),
            Action::ToServer(bytes) => to_upstream(conn, st, bytes, checking),
            Action::ToClient(bytes) => to_client(st, bytes, origin),
        }
    }
    arm(conn, st);
}

fn to_upstream<P: Pins>(conn: &Conn<P>, st: &mut State<P>, bytes: Vec<u8>, checking: bool) {
    let (id, method, params) = match message::read(&bytes, MAX_MESSAGE) {
        Ok(Message::Request { id, method, params }) => {
            (Some(id), Some(method), written(params.as_ref()))
        }
        Ok(Message::Notification { method, .. }) => (None, Some(method), Vec::new()),
        _ => (None, None, Vec::new()),
    };
    let initialize = id.is_some() && method.as_deref() == Some("initialize");
    if initialize {
        st.init_wire = id.clone();
    }
    // The session sends the client's request under an id of its own: the waiting request with
    // the same method and parameters is the one.
    let client_id = match (&id, &method) {
        (Some(_), Some(m)) if initialize || !checking => st
            .waiting
            .iter()
            .find(|(_, w)| !w.sent && w.method == *m && (initialize || w.params == params))
            .map(|(cid, _)| cid.clone()),
        _ => None,
    };
    if let Some(w) = client_id.as_ref().and_then(|c| st.waiting.get_mut(c)) {
        w.sent = true;
    }
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
    if let (false, Some(sid)) = (st.stateless, &st.id) {
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

/// Parameters as the session writes them when it forwards a request.
fn written(params: Option<&Value<'_>>) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some(p) = params {
        pinlog_core::json::write_as_served(p, &mut out);
    }
    out
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
        adopt(&proxy, &conn, sid);
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

fn is_events(resp: &reqwest::Response) -> bool {
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
async fn read_answer<P: Pins + Send + 'static>(
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

/// The upstream gave the session its id: the session is known by it from now on.
fn adopt<P: Pins>(proxy: &Proxy<P>, conn: &Arc<Conn<P>>, sid: &HeaderValue) {
    {
        let mut st = lock(&conn.state);
        if st.id.is_some() || st.stateless {
            return;
        }
        st.id = Some(sid.clone());
    }
    let Ok(key) = sid.to_str() else { return };
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

fn forget<P: Pins>(proxy: &Proxy<P>, conn: &Arc<Conn<P>>) {
    let sid = lock(&conn.state).id.clone();
    let Some(key) = sid.as_ref().and_then(|s| s.to_str().ok()) else {
        return;
    };
    let mut sessions = lock(&proxy.sessions);
    if sessions.get(key).is_some_and(|c| Arc::ptr_eq(c, conn)) {
        sessions.remove(key);
    }
}

/// Says the upstream could not be reached, without its URL.
fn unreachable_note<P: Pins>(proxy: &Proxy<P>, e: reqwest::Error) {
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

/// A client's stream as the proxy fills it: what waits in it is bounded by its [`Budget`], which
/// the upstream answer feeding it waits on.
#[derive(Clone)]
struct Stream {
    tx: mpsc::UnboundedSender<Delivery>,
    budget: Budget,
}

impl Stream {
    /// Queues `d`, or gives it back when the client's side is gone.
    fn send(&self, d: Delivery) -> Result<(), Delivery> {
        let n = d.bytes.len();
        self.budget.add(n);
        self.tx.send(d).map_err(|e| {
            self.budget.remove(n);
            e.0
        })
    }
}

/// The client's side of a [`Stream`].
struct Inbox {
    rx: mpsc::UnboundedReceiver<Delivery>,
    budget: Budget,
}

impl Inbox {
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Delivery>> {
        let polled = self.rx.poll_recv(cx);
        if let Poll::Ready(Some(d)) = &polled {
            self.budget.remove(d.bytes.len());
        }
        polled
    }

    async fn recv(&mut self) -> Option<Delivery> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }
}

fn stream() -> (Stream, Inbox) {
    let (tx, rx) = mpsc::unbounded_channel();
    let budget = Budget::default();
    let inbox = Inbox {
        rx,
        budget: budget.clone(),
    };
    (Stream { tx, budget }, inbox)
}

/// A POST's or a GET's event stream: `first`, then what arrives, until an answer ends it or the
/// senders are gone.
struct Events {
    first: Option<Delivery>,
    rx: Inbox,
    done: bool,
}

impl hyper::body::Body for Events {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.done {
            return Poll::Ready(None);
        }
        let d = match self.first.take() {
            Some(d) => d,
            None => match self.rx.poll_recv(cx) {
                Poll::Ready(Some(d)) => d,
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            },
        };
        self.done = d.last;
        // CR and LF only ever stand between JSON tokens: each piece becomes a data line, and
        // the reader joins them with LF, which is whitespace as well.
        let mut event = b"event: message\n".to_vec();
        for piece in d.bytes.split(|b| *b == b'\n' || *b == b'\r') {
            event.extend_from_slice(b"data: ");
            event.extend_from_slice(piece);
            event.push(b'\n');
        }
        event.push(b'\n');
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(event)))))
    }
}

fn events(first: Option<Delivery>, rx: Inbox) -> Response<Body> {
    let mut resp = respond(
        StatusCode::OK,
        "text/event-stream",
        Events {
            first,
            rx,
            done: false,
        }
        .boxed(),
    );
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}

fn full(bytes: Vec<u8>) -> Body {
    Full::new(Bytes::from(bytes)).boxed()
}

fn empty(status: StatusCode) -> Response<Body> {
    let mut resp = Response::new(Empty::new().boxed());
    *resp.status_mut() = status;
    resp
}

fn respond(status: StatusCode, content_type: &'static str, body: Body) -> Response<Body> {
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp
}

fn rpc_error(status: StatusCode, id: Option<&Id>, code: i64, text: &str) -> Response<Body> {
    let bytes = message::error(id.unwrap_or(&Id::null()), code, text);
    respond(status, "application/json", full(bytes))
}
