//! The Streamable HTTP proxy, `pinlog proxy --listen ADDR --upstream URL`: the client talks HTTP
//! to this process, and this process talks HTTP to the server. Every MCP session runs through a
//! [`Session`] of its own, exactly as a stdio session does, and its own upstream session. The
//! 2026-07-28 era has no sessions: each request gets a `Session` of its own, so the surface is
//! listed and checked before that request goes on.
//!
//! Clients are kept apart whatever the upstream does. Each handshake session gets an
//! `Mcp-Session-Id` of the proxy's, 128 random bits, and only that one: the upstream's id (if it
//! gives one) stays in the proxy, so an upstream that gives none, or the same one twice, never
//! makes two clients one. What a session waits for is keyed by the client's own ids within that
//! session, and what goes upstream carries ids unique across the proxy.
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

mod envelope;
mod listen;
mod requests;
mod response;
mod route;
mod sessions;
mod stream;
mod upstream;

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper::header::{HeaderMap, HeaderValue};
use hyper::StatusCode;
use pinlog_mcp::message::Id;
use tokio::sync::mpsc;

use crate::queue::Budget;
use crate::session::{OnDrift, OnPublicMismatch, Pins, Public, Session, WireIds};
use sessions::SharedPins;
use stream::Stream;

pub use listen::{run_listener, serve};

const SESSION: &str = "mcp-session-id";
const VERSION: &str = "mcp-protocol-version";
const METHOD: &str = "mcp-method";
/// How long a client may take to send its headers, and then its body.
const CLIENT_TIME: Duration = Duration::from_secs(30);
/// The longest silence on an upstream answer: a stream may stay open long, not silent long.
const IDLE_TIME: Duration = Duration::from_secs(300);

type Body = BoxBody<Bytes, Infallible>;

pub struct HttpOptions {
    /// The upstream's Streamable HTTP endpoint.
    pub upstream: String,
    /// What people see the server called.
    pub label: String,
    pub on_drift: OnDrift,
    /// The public log each session compares with, and what a difference does.
    pub public: Option<(Box<dyn Public + Send>, OnPublicMismatch)>,
}

struct Proxy<P: Pins> {
    pins: Arc<Mutex<P>>,
    label: String,
    on_drift: OnDrift,
    /// One public log for every session.
    public: Option<(sessions::SharedLog, OnPublicMismatch)>,
    url: reqwest::Url,
    client: reqwest::Client,
    /// Handshake-era sessions, by the session id the proxy gave the client.
    sessions: Mutex<HashMap<String, Arc<Conn<P>>>>,
    /// Every session's wire ids: unique across clients, whose requests an upstream that gives
    /// no session id cannot tell apart.
    wire: WireIds,
}

/// One session of the client's, and the way to its upstream.
struct Conn<P: Pins> {
    /// The session id the proxy gave the client; none in the 2026-07-28 era.
    sid: Option<HeaderValue>,
    state: Mutex<State<P>>,
    /// Messages for the upstream, sent in order by [`sender`](upstream::sender).
    upstream: mpsc::UnboundedSender<Outgoing>,
    /// What waits in `upstream`: a client's message is taken only while it has room.
    sending: Budget,
}

struct State<P: Pins> {
    session: Session<SharedPins<P>>,
    /// The upstream's session id, once it gave one. Never shown to the client.
    upstream_id: Option<HeaderValue>,
    /// `MCP-Protocol-Version` for the proxy's own requests: the client's, else the revision the
    /// upstream's `initialize` settled on.
    version: Option<HeaderValue>,
    /// The client's latest `Authorization`, for the proxy's own requests. Never printed.
    auth: Option<HeaderValue>,
    /// The 2026-07-28 era: one request, no session id, and the method named in a header.
    stateless: bool,
    /// The id the client's `initialize` went upstream under.
    init_wire: Option<Id>,
    /// The client's requests not answered yet, by the client's id in this session.
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

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
