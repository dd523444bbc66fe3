//! One proxied session, as a state machine: what a line from either side makes the proxy do. No
//! I/O here; the transport feeds lines in and carries the actions out, in order.
//!
//! Until the surface is checked, nothing the client sends reaches the server. The proxy sends the
//! client's own `initialize` (so the server sees the client's era, capabilities and id), then
//! `notifications/initialized` and every page of `tools/list` and `prompts/list` itself, with ids
//! in the client's style; compares the surface with what was approved; and only then answers the
//! client's `initialize` and releases what it queued (minus the client's own `initialized`, which
//! the server already had). For the rest of the session every listing the client receives is
//! checked before delivery, and a `list_changed` notification makes the proxy list again before
//! the client hears of it.

mod delivery;
mod interface;
mod items;
mod surface;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use pinlog_core::manifest::Manifest;
use pinlog_core::render::quoted;
use pinlog_core::Value;

use pinlog_mcp::caps::Caps;
use pinlog_mcp::listing::{page_params, Pages};
use pinlog_mcp::message::{self, Id, Message, METHOD_NOT_FOUND};

use crate::check::{Drift, Served};
use crate::queue::{self, Held};
use items::{Digests, Item};

pub use interface::{
    code, Action, OnDrift, OnPublicMismatch, Outcome, Pins, Public, PublicVerdict,
    PUBLIC_UNAVAILABLE,
};

/// What the proxy's own requests are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Purpose {
    Initialize,
    Discover,
    Tools,
    Prompts,
}

/// The surface being read by the proxy itself.
#[derive(Debug, Default)]
struct Listing {
    served: Served,
    /// The listings still to read, the next last.
    todo: Vec<Purpose>,
    /// The listing being read, as the client library reads one.
    pages: Option<Pages>,
    /// The notifications that started a re-check, delivered once it holds.
    notifications: Held,
}

/// What to do about a server that ended before it answered: said on standard error and to the
/// client.
const SERVER_ENDED_NEXT: &str = "nothing was pinned. Run the server's command from the client's \
    configuration in a terminal to see why it stops (a package that is not installed, a setting, \
    a key or an argument it needs), fix it there, then restart the client";

/// How long the server has to answer everything the proxy asks to check its surface.
pub const CHECK_TIME: std::time::Duration = std::time::Duration::from_secs(30);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    /// No `initialize` from the client yet.
    Waiting,
    /// The proxy is listing the surface.
    Checking,
    Open,
    Blocked,
}

/// Where a session's wire ids come from. Sessions that reach one server through one proxy share
/// one, so that no two of their requests carry the same id there: an HTTP upstream that gives no
/// session id sees every client's requests as one session's.
#[derive(Debug, Clone, Default)]
pub struct WireIds(Arc<AtomicU64>);

impl WireIds {
    fn next(&self) -> Id {
        Id::from(self.0.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

/// A request of the client's, forwarded under a wire id and not answered yet.
#[derive(Debug, Clone)]
struct Tracked {
    /// The id the client gave it, restored in the answer.
    client_id: Id,
    method: String,
}

pub struct Session<P: Pins> {
    pins: P,
    label: String,
    on_drift: OnDrift,
    max_message: usize,
    phase: Phase,
    outcome: Outcome,
    /// Client lines held until the surface is checked.
    queue: Held,
    /// Server notifications and requests held while checking.
    held_from_server: Held,
    own: HashMap<Id, Purpose>,
    /// The ids the proxy uses on the server's side. Every request the server sees carries one
    /// of these, the client's and the proxy's own alike: they cannot collide, and the server
    /// cannot tell them apart.
    wire: WireIds,
    listing: Option<Listing>,
    client_init: Option<Id>,
    drop_initialized: bool,
    pending: HashMap<Id, Tracked>,
    /// What hold mode hides.
    held_tools: BTreeSet<String>,
    held_prompts: BTreeSet<String>,
    strip_instructions: bool,
    /// The last surface that was checked, for drift records made from one page.
    last: Served,
    /// The client's `_meta`, in the stateless era.
    meta: Option<Vec<u8>>,
    /// The approved digests by name, once the surface is checked.
    digests: Option<Digests>,
    /// What the block says: policy and label tokens, never served text.
    block_labels: Vec<String>,
    /// Whether the server announced tools and prompts.
    caps: (bool, bool),
    /// `initialize`'s result, delivered once the surface holds.
    init_result: Option<Value<'static>>,
    /// A drift was recorded and the server has not changed back since.
    drifted: bool,
    /// When the check under way must have ended.
    deadline: Option<std::time::Instant>,
    /// The approved surface, once read.
    approved: Option<(Vec<u8>, String)>,
    /// Messages refused as not strict JSON-RPC, from either side.
    refused: usize,
    /// The bounds on a listing: the client library's.
    listing_caps: Caps,
    /// The public log, asked on first use and on a change.
    public: Option<Box<dyn Public + Send>>,
    on_public: OnPublicMismatch,
    /// The approved surface is the public record's, held to for this session (first use under
    /// `--on-public-mismatch hold`); nothing was pinned.
    public_hold: bool,
    /// The server ended before its surface was read: what the client is told, once unchecked.
    server_ended: bool,
}

/// How a server that ended during the check ended, as its transport saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerEnd {
    /// Its exit status (128 + the signal for one a signal ended), when it was known in time.
    pub status: Option<i32>,
    /// The last lines of its standard error, oldest first, each already rendered safe and cut.
    pub last_lines: Vec<String>,
}

impl<P: Pins> Session<P> {
    pub fn new(pins: P, label: &str, on_drift: OnDrift, max_message: usize) -> Self {
        Session {
            pins,
            label: label.to_string(),
            on_drift,
            max_message,
            phase: Phase::Waiting,
            outcome: Outcome::Open,
            queue: Held::default(),
            held_from_server: Held::default(),
            own: HashMap::new(),
            wire: WireIds::default(),
            listing: None,
            client_init: None,
            drop_initialized: false,
            pending: HashMap::new(),
            held_tools: BTreeSet::new(),
            held_prompts: BTreeSet::new(),
            strip_instructions: false,
            last: Served::default(),
            meta: None,
            digests: None,
            block_labels: Vec::new(),
            approved: None,
            caps: (false, false),
            init_result: None,
            drifted: false,
            deadline: None,
            refused: 0,
            listing_caps: Caps {
                message_bytes: max_message,
                ..Caps::default()
            },
            public: None,
            on_public: OnPublicMismatch::Warn,
            public_hold: false,
            server_ended: false,
        }
    }

    /// The session also compares what it is served with the public log, on first use and on a
    /// change, and acts on a difference as `on` says.
    pub fn with_public(mut self, public: Box<dyn Public + Send>, on: OnPublicMismatch) -> Self {
        self.public = Some(public);
        self.on_public = on;
        self
    }

    /// The session takes its wire ids from `ids`, which other sessions to the same server share.
    pub fn with_wire_ids(mut self, ids: WireIds) -> Self {
        self.wire = ids;
        self
    }

    /// The client's id of the request the server sees under `wire`, while it waits for its
    /// answer: how a transport knows whose request a message for the server is.
    pub fn client_id(&self, wire: &Id) -> Option<&Id> {
        match self.own.get(wire) {
            Some(Purpose::Initialize) => self.client_init.as_ref(),
            Some(_) => None,
            None => self.pending.get(wire).map(|t| &t.client_id),
        }
    }

    /// How many messages, from either side, were refused as not strict JSON-RPC.
    pub fn refused(&self) -> usize {
        self.refused
    }

    pub fn outcome(&self) -> Outcome {
        self.outcome
    }

    /// The pins, once the session is over.
    pub fn into_pins(self) -> P {
        self.pins
    }

    /// Whether the surface is not read yet: the client has not asked, or the proxy is reading it.
    pub fn is_unchecked_yet(&self) -> bool {
        matches!(self.phase, Phase::Waiting | Phase::Checking)
    }

    /// The server ended before its surface was read: said with how it ended and its last words,
    /// each line a note of its own, and what to do next. Its words reach standard error only,
    /// never the client.
    pub fn server_gone(&mut self, end: &ServerEnd) -> Vec<Action> {
        let why = match end.status {
            Some(status) => format!("the server ended (exit status {status}) before it answered"),
            None => "the server ended before it answered".to_string(),
        };
        self.server_ended = true;
        let mut actions = self.unchecked(&why);
        let mut notes = Vec::new();
        if end.last_lines.is_empty() {
            notes.push(Action::Note(
                "it wrote nothing on its standard error".to_string(),
            ));
        } else {
            notes.push(Action::Note(
                "the last lines of its standard error:".to_string(),
            ));
            notes.extend(
                end.last_lines
                    .iter()
                    .map(|l| Action::Note(format!("  | {l}"))),
            );
        }
        notes.push(Action::Note(SERVER_ENDED_NEXT.to_string()));
        // After the first note (what happened), before what goes to the client.
        let at = actions
            .iter()
            .position(|a| !matches!(a, Action::Note(_)))
            .unwrap_or(actions.len());
        actions.splice(at..at, notes);
        actions
    }

    /// When the check under way must have ended, if one is.
    pub fn deadline(&self) -> Option<std::time::Instant> {
        self.deadline.filter(|_| self.phase == Phase::Checking)
    }

    /// The check's time ran out.
    pub fn timed_out(&mut self) -> Vec<Action> {
        self.unchecked(&format!(
            "the server did not answer within {} s",
            CHECK_TIME.as_secs()
        ))
    }

    /// The client left; a check still under way did not end, so the surface was not checked.
    pub fn client_gone(&mut self) {
        if self.phase == Phase::Checking {
            self.outcome = Outcome::Unchecked;
            self.phase = Phase::Blocked;
        }
    }

    /// The server's output could not be read further (a line over the bound, a read error).
    pub fn server_broken(&mut self, why: &str) -> Vec<Action> {
        if self.phase == Phase::Blocked {
            return Vec::new();
        }
        self.unchecked(&format!("the server's output cannot be read ({why})"))
    }

    fn wire_id(&mut self) -> Id {
        self.wire.next()
    }

    fn own_id(&mut self, purpose: Purpose) -> Id {
        let id = self.wire_id();
        self.own.insert(id.clone(), purpose);
        id
    }

    /// A line from the client.
    pub fn from_client(&mut self, line: Vec<u8>) -> Vec<Action> {
        match self.phase {
            Phase::Waiting => self.client_waiting(line),
            Phase::Checking => self.hold_from_client(line),
            Phase::Open => self.client_open(line),
            Phase::Blocked => self.refuse(&line),
        }
    }

    /// Whether a line from the client would be taken now: the transport stops reading the client
    /// while the lines held for the check fill their queue.
    pub fn takes_from_client(&self) -> bool {
        !self.queue.is_full()
    }

    /// Holds a client line until the surface is checked; a client that sends past the bound is
    /// cut off.
    fn hold_from_client(&mut self, line: Vec<u8>) -> Vec<Action> {
        match self.queue.push(line) {
            Ok(()) => Vec::new(),
            Err(_) => self.unchecked(&format!(
                "the client sent more than {} before the surface was checked",
                queue::bounds()
            )),
        }
    }

    /// Holds a server line while the surface is checked; a server that sends past the bound is
    /// cut off, as the check cannot go on without reading it.
    fn hold_from_server(&mut self, line: Vec<u8>) -> Vec<Action> {
        match self.held_from_server.push(line) {
            Ok(()) => Vec::new(),
            Err(_) => self.server_past_bounds(),
        }
    }

    fn server_past_bounds(&mut self) -> Vec<Action> {
        self.unchecked(&format!(
            "the server sent more than {} while its surface was checked",
            queue::bounds()
        ))
    }

    fn client_waiting(&mut self, line: Vec<u8>) -> Vec<Action> {
        let (id, method, params) = match message::read(&line, self.max_message) {
            Ok(Message::Request { id, method, params }) => (id, method, params),
            _ => return self.hold_from_client(line),
        };
        self.phase = Phase::Checking;
        self.deadline = Some(std::time::Instant::now() + CHECK_TIME);
        if method == "initialize" {
            // The client's own initialize, under a wire id: the server sees the client's
            // revision, capabilities and info.
            let wire = self.own_id(Purpose::Initialize);
            self.client_init = Some(id);
            return vec![Action::ToServer(message::forwarded(
                &wire,
                &method,
                params.as_ref(),
            ))];
        }
        // The 2026-07-28 era has no handshake: every request carries the client's revision,
        // info and capabilities in `_meta`. The proxy discovers and lists with the same `_meta`.
        let meta = params
            .as_ref()
            .and_then(Value::as_object)
            .and_then(|p| p.get("_meta"))
            .filter(|m| {
                m.as_object()
                    .is_some_and(|m| m.get("io.modelcontextprotocol/protocolVersion").is_some())
            });
        let Some(meta) = meta else {
            self.phase = Phase::Blocked;
            self.outcome = Outcome::Unchecked;
            return vec![
                Action::Note("the client neither initialized nor named a revision in _meta; the session is blocked".into()),
                Action::ToClient(message::error(
                    &id,
                    code::UNCHECKED,
                    &format!(
                        "pinlog proxy for {}: the first request must be initialize, or carry \
                         _meta with io.modelcontextprotocol/protocolVersion; nothing was sent \
                         to the server",
                        quoted(&self.label, 64)
                    ),
                )),
            ];
        };
        let mut bytes = Vec::new();
        pinlog_core::json::write_as_served(meta, &mut bytes);
        self.meta = Some(bytes);
        let refused = self.hold_from_client(line);
        if !refused.is_empty() {
            return refused;
        }
        let id = self.own_id(Purpose::Discover);
        let params = page_params(self.meta.as_deref(), None);
        vec![Action::ToServer(message::request(
            &id,
            "server/discover",
            &params,
        ))]
    }

    fn client_open(&mut self, line: Vec<u8>) -> Vec<Action> {
        let msg = match message::read(&line, self.max_message) {
            Ok(msg) => msg,
            // A line that is not one strict message (a batch, a lone surrogate, a request that
            // is also an answer, …) cannot be tracked or held, so it is not forwarded.
            Err(e) => {
                self.refused += 1;
                return vec![
                    Action::Note(format!(
                        "refused a client message that is not strict JSON-RPC: {}",
                        pinlog_core::render::safe(&e.why)
                    )),
                    Action::ToClient(message::invalid(&format!(
                        "pinlog proxy: the message is not one strict JSON-RPC message ({}); it \
                         was not forwarded",
                        e.why
                    ))),
                ];
            }
        };
        match msg {
            Message::Notification { method, .. }
                if method == "notifications/initialized" && self.drop_initialized =>
            {
                self.drop_initialized = false;
                Vec::new()
            }
            Message::Notification { method, params } if method == "notifications/cancelled" => {
                self.cancelled(params.as_ref())
            }
            Message::Request { id, method, params } => {
                let name = params
                    .as_ref()
                    .and_then(|p| p.as_object())
                    .and_then(|p| p.get("name"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let held = match (method.as_str(), &name) {
                    ("tools/call", Some(n)) => self.held_tools.contains(n),
                    ("prompts/get", Some(n)) => self.held_prompts.contains(n),
                    _ => false,
                };
                if held {
                    let what = if method == "tools/call" {
                        "tool"
                    } else {
                        "prompt"
                    };
                    return vec![Action::ToClient(message::error(
                        &id,
                        code::HELD,
                        &format!(
                            "pinlog: the {what} {} of {} changed since it was approved and is held \
                             for review; nothing was sent to the server. Review it with `{}`",
                            quoted(name.as_deref().unwrap_or_default(), 64),
                            quoted(&self.label, 64),
                            self.pins.review_command()
                        ),
                    ))];
                }
                let wire = self.wire_id();
                let forwarded = message::forwarded(&wire, &method, params.as_ref());
                self.pending.insert(
                    wire,
                    Tracked {
                        client_id: id,
                        method,
                    },
                );
                vec![Action::ToServer(forwarded)]
            }
            other => vec![Action::ToServer(other.write())],
        }
    }

    /// The client cancels a request: the server knows it under its wire id, so the notification
    /// names that one. A request the server never saw, or already answered, is not named at all:
    /// under the client's id, the server would cancel another request. The session forgets the
    /// request, so an answer that crosses the notification is dropped, as the client expects.
    fn cancelled(&mut self, params: Option<&Value<'_>>) -> Vec<Action> {
        let Some(o) = params.and_then(Value::as_object) else {
            return Vec::new();
        };
        let Some(client) = o.get("requestId").and_then(Id::of) else {
            return Vec::new();
        };
        let wire = self
            .pending
            .iter()
            .find(|(_, t)| t.client_id == client)
            .map(|(w, _)| w.clone());
        let Some(wire) = wire else {
            return Vec::new();
        };
        self.pending.remove(&wire);
        let mut out =
            b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":"
                .to_vec();
        out.extend_from_slice(wire.0.as_bytes());
        for (name, value) in o.iter().filter(|(n, _)| *n != "requestId") {
            out.push(b',');
            pinlog_core::json::write_string(&mut out, name);
            out.push(b':');
            pinlog_core::json::write_as_served(value, &mut out);
        }
        out.extend_from_slice(b"}}");
        vec![Action::ToServer(out)]
    }

    /// Blocked: requests get an error, nothing is forwarded.
    fn refuse(&mut self, line: &[u8]) -> Vec<Action> {
        match message::read(line, self.max_message) {
            Ok(Message::Request { id, .. }) => vec![Action::ToClient(self.blocked_error(&id))],
            _ => Vec::new(),
        }
    }

    fn blocked_error(&self, id: &Id) -> Vec<u8> {
        if self.outcome == Outcome::Unchecked {
            // Nothing was recorded for review, so no review is offered; and the reason stays on
            // standard error, as it may quote what the server sent.
            let (why, next) = match self.server_ended {
                true => (
                    "the server ended before it answered",
                    format!(
                        "{SERVER_ENDED_NEXT}. The client's log of this server shows its last lines"
                    ),
                ),
                false => (
                    "its surface could not be checked",
                    "nothing was pinned. The client's log of this server (pinlog's standard \
                     error) says why"
                        .to_string(),
                ),
            };
            return message::error(
                id,
                code::UNCHECKED,
                &format!(
                    "pinlog blocked {}: {why}. Nothing more is sent to it, and {next}.",
                    quoted(&self.label, 64)
                ),
            );
        }
        message::error(
            id,
            code::BLOCKED,
            &format!(
                "pinlog blocked {}: its surface changed since it was approved{}. Nothing more is \
                 sent to it, and none of its answers is passed on. Review with `{}`",
                quoted(&self.label, 64),
                match self.block_labels.is_empty() {
                    true => String::new(),
                    false => format!(" ({})", self.block_labels.join(", ")),
                },
                self.pins.review_command()
            ),
        )
    }

    /// A line from the server.
    pub fn from_server(&mut self, line: Vec<u8>) -> Vec<Action> {
        if self.phase == Phase::Blocked {
            return Vec::new();
        }
        let msg = match message::read(&line, self.max_message) {
            Ok(m) => m,
            Err(e) => return self.server_refused(e),
        };
        let out = match &msg {
            Message::Response { .. } => Vec::new(),
            other => other.write(),
        };
        match msg {
            // Before the client's first request nothing was asked of the server, and nothing is
            // listed or pinned: a notification then (a list_changed included; the check after
            // the handshake lists anyway) is dropped.
            Message::Notification { method, .. } if self.phase == Phase::Waiting => {
                vec![Action::Note(format!(
                    "dropped {} from {} before the handshake",
                    quoted(&method, 64),
                    quoted(&self.label, 64)
                ))]
            }
            Message::Response { id, result, error } => {
                if let Some(purpose) = self.own.remove(&id) {
                    if purpose == Purpose::Initialize && result.is_none() {
                        return self.initialize_refused(error.as_ref());
                    }
                    return self.own_answer(purpose, result.map(Value::into_owned));
                }
                // Only an answer to a request the client made and the proxy forwarded reaches
                // the client: anything else (a second answer, an answer to nothing) is dropped.
                let Some(tracked) = self.pending.remove(&id) else {
                    return vec![Action::Note(
                        "dropped an answer from the server to no request it was sent".into(),
                    )];
                };
                let client_id = tracked.client_id;
                let Some(result) = result else {
                    let error = error.unwrap_or(Value::Null);
                    return vec![Action::ToClient(message::error_object(&client_id, &error))];
                };
                let result = result.into_owned();
                match tracked.method.as_str() {
                    "tools/list" => self.deliver_listing(client_id, result, Item::Tools),
                    "prompts/list" => self.deliver_listing(client_id, result, Item::Prompts),
                    "initialize" | "server/discover" => self.deliver_identity(client_id, result),
                    _ => vec![Action::ToClient(message::response(&client_id, &result))],
                }
            }
            Message::Notification { method, .. }
                if method == "notifications/tools/list_changed"
                    || method == "notifications/prompts/list_changed" =>
            {
                if self.phase == Phase::Checking && self.digests.is_none() {
                    // The first check is under way (the handshake or discovery included): it
                    // lists after this anyway.
                    return self.hold_from_server(out);
                }
                // The proxy lists again before the client hears of it: the client must not
                // list a surface the proxy has not seen.
                let served = Served {
                    tools: Vec::new(),
                    prompts: Vec::new(),
                    ..self.last.clone()
                };
                self.start_listing(served, Some(out))
            }
            Message::Request { id, method, .. } if self.phase != Phase::Open => {
                // The server's own requests wait for the client, but a ping is answered now.
                if method == "ping" {
                    let empty = Value::Object(Default::default());
                    return vec![Action::ToServer(message::response(&id, &empty))];
                }
                self.hold_from_server(out)
            }
            _ if self.phase == Phase::Checking => self.hold_from_server(out),
            _ => vec![Action::ToClient(out)],
        }
    }

    /// A line from the server that is not strict JSON-RPC is never passed on; while checking, it
    /// stops the session. A client request it names by id is answered with an error in its place,
    /// so that the client does not wait for an answer that was refused.
    fn server_refused(&mut self, refused: message::Refused) -> Vec<Action> {
        self.refused += 1;
        let note = Action::Note(format!(
            "refused a message from {}: {}",
            quoted(&self.label, 64),
            pinlog_core::render::safe(&refused.why)
        ));
        let mut actions = match self.phase {
            Phase::Checking => self.stop(Outcome::Unchecked, Vec::new()),
            _ => Vec::new(),
        };
        if let Some(tracked) = refused.id.and_then(|id| self.pending.remove(&id)) {
            actions.push(Action::ToClient(message::error(
                &tracked.client_id,
                code::UNCHECKED,
                &format!(
                    "pinlog proxy: {} answered with a message that is not strict JSON-RPC; it \
                     was not passed on",
                    quoted(&self.label, 64)
                ),
            )));
        }
        actions.insert(0, note);
        actions
    }

    /// The server answered the client's own `initialize` with an error. "Method not found" (a
    /// server of the 2026-07-28 era) is passed on as such, so the client knows to speak that
    /// era; any other error as the check that could not be made. The message is the proxy's,
    /// never the server's text; nothing was checked, so nothing more is sent.
    fn initialize_refused(&mut self, error: Option<&Value<'_>>) -> Vec<Action> {
        let code = error
            .and_then(Value::as_object)
            .and_then(|e| e.get("code"))
            .and_then(|c| match c {
                Value::Number(n) => n.literal().parse::<i64>().ok(),
                _ => None,
            })
            .filter(|c| *c == METHOD_NOT_FOUND)
            .unwrap_or(code::UNCHECKED);
        let client = self.client_init.take();
        let mut actions = self.unchecked("the server answered initialize with an error");
        if let Some(id) = client {
            actions.push(Action::ToClient(message::error(
                &id,
                code,
                &format!(
                    "pinlog proxy for {}: the server refused initialize, so its surface could \
                     not be checked; nothing else was sent to it",
                    quoted(&self.label, 64)
                ),
            )));
        }
        actions
    }

    /// The server's answer to one of the proxy's own requests.
    fn own_answer(&mut self, purpose: Purpose, result: Option<Value<'static>>) -> Vec<Action> {
        if purpose == Purpose::Discover && result.is_none() {
            return self.not_stateless();
        }
        let Some(result) = result else {
            // The server's error text is its own; nobody downstream hears it.
            let what = match purpose {
                Purpose::Initialize => "initialize",
                Purpose::Discover => "server/discover",
                Purpose::Tools => "tools/list",
                Purpose::Prompts => "prompts/list",
            };
            return self.unchecked(&format!("the server answered {what} with an error"));
        };
        match purpose {
            Purpose::Initialize => self.initialized(result),
            Purpose::Discover => self.discovered(result),
            Purpose::Tools | Purpose::Prompts => self.page(purpose, result),
        }
    }

    fn unchecked(&mut self, why: &str) -> Vec<Action> {
        let mut actions = self.stop(Outcome::Unchecked, Vec::new());
        actions.insert(
            0,
            Action::Note(format!(
                "{why}, so the surface of {} could not be checked; the session is blocked",
                quoted(&self.label, 64)
            )),
        );
        actions
    }

    /// Records a drift and says so on standard error: the policies, labels and the safe diff.
    fn drift_notes(&mut self, drift: &Drift, manifest: &Manifest<'_>) -> Vec<Action> {
        self.drifted = true;
        let mut notes = vec![Action::Note(format!(
            "THE SURFACE OF {} CHANGED SINCE IT WAS APPROVED ({})",
            quoted(&self.label, 64),
            drift.labels.join(", ")
        ))];
        if let Err(e) = self.pins.record_drift(&manifest.to_bytes(), &drift.labels) {
            notes.push(Action::Note(e));
        }
        notes.extend(drift.report.lines().map(|l| Action::Note(l.to_string())));
        let what = match self.on_drift {
            OnDrift::Block => "blocked: nothing more reaches the server",
            OnDrift::Hold => "held: changed and new tools and prompts are hidden from the client",
        };
        notes.push(Action::Note(format!(
            "{what}; review with `{}`",
            self.pins.review_command()
        )));
        notes
    }

    /// The surface holds (or is held): deliver what waited.
    fn release(&mut self, listing: Listing) -> Vec<Action> {
        self.last = listing.served;
        self.deadline = None;
        let mut actions = Vec::new();
        if let (Some(id), Some(mut result)) = (self.client_init.take(), self.init_result.take()) {
            if self.strip_instructions {
                if let Value::Object(o) = &mut result {
                    o.remove("instructions");
                }
            }
            actions.push(Action::ToClient(message::response(&id, &result)));
        }
        self.phase = Phase::Open;
        for n in listing.notifications {
            actions.push(Action::ToClient(n));
        }
        for line in std::mem::take(&mut self.held_from_server) {
            actions.push(Action::ToClient(line));
        }
        for line in std::mem::take(&mut self.queue) {
            actions.extend(self.client_open(line));
        }
        actions
    }

    /// Ends the session's traffic: the client's `initialize` if still unanswered, everything
    /// queued and everything forwarded and unanswered gets an error; nothing more is forwarded.
    fn stop(&mut self, outcome: Outcome, labels: Vec<String>) -> Vec<Action> {
        self.outcome = outcome;
        self.block_labels = labels;
        let was_checking = self.phase == Phase::Checking;
        self.phase = Phase::Blocked;
        self.deadline = None;
        self.listing = None;
        self.own.clear();
        let mut actions = Vec::new();
        if was_checking {
            if let Some(id) = self.client_init.clone() {
                actions.push(Action::ToClient(self.blocked_error(&id)));
            }
        }
        for line in std::mem::take(&mut self.queue) {
            actions.extend(self.refuse(&line));
        }
        let pending: Vec<Id> = self.pending.drain().map(|(_, t)| t.client_id).collect();
        for id in pending {
            actions.push(Action::ToClient(self.blocked_error(&id)));
        }
        actions
    }
}
