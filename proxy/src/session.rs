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

use std::collections::{BTreeSet, HashMap};

use pinlog_core::digest::value_digest;
use pinlog_core::lockfile::{Lockfile, Pin};
use pinlog_core::manifest::Manifest;
use pinlog_core::render::quoted;
use pinlog_core::{Digest, Value};

use pinlog_mcp::caps::Caps;
use pinlog_mcp::listing::{page_params, Next, Pages};
use pinlog_mcp::message::{self, Id, Message, METHOD_NOT_FOUND};

use crate::check::{check, Drift, Served};
use crate::queue::{self, Held};

/// JSON-RPC error codes the proxy answers with (docs/PROXY.md, a contract).
pub mod code {
    /// The server's surface departed from what was approved: the session is blocked.
    pub const BLOCKED: i64 = -32090;
    /// This tool or prompt changed since it was approved, or is new: it is held for review.
    pub const HELD: i64 = -32091;
    /// The server could not be checked, or answered with something that is not strict
    /// JSON-RPC; its own text is never passed on.
    pub const UNCHECKED: i64 = -32092;
}

/// What to do about drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnDrift {
    /// Nothing more reaches the server; every request is answered with an error.
    Block,
    /// Changed and new tools and prompts are hidden and refused; the rest works.
    Hold,
}

/// The approved surface, and where first use and drift are recorded.
pub trait Pins {
    /// The approved surface as a lockfile's bytes, and the server's id in it; `None` when this
    /// server was never approved (first use). `Err` stops the session: a pin that cannot be read
    /// is never replaced by trusting what is served now.
    fn approved(&mut self) -> Result<Option<(Vec<u8>, String)>, String>;
    /// The id the served surface is recorded under for first use and drift.
    fn id(&self) -> String;
    /// Pins `manifest` (first use). Returns the line to show, `None` when another session pinned
    /// this server first (the session then compares with that pin), or why it may not be pinned.
    fn pin_first_use(&mut self, manifest: &[u8]) -> Result<Option<String>, String>;
    fn record_drift(&mut self, manifest: &[u8], labels: &[String]) -> Result<(), String>;
    /// The server serves what was approved again.
    fn release(&mut self) -> Result<(), String>;
    /// The command that reviews a drift, for messages.
    fn review_command(&self) -> String;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// A message for the server, without a line end: the transport frames it.
    ToServer(Vec<u8>),
    /// A message for the client, likewise.
    ToClient(Vec<u8>),
    /// A line for the proxy's standard error, already safe to print.
    Note(String),
}

/// How the session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Checked and open, or still checking.
    Open,
    /// Blocked on drift.
    Blocked,
    /// The surface could not be checked (the server failed, or the pins could not be read).
    Unchecked,
}

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
    /// The last id the proxy used on the server's side. Every request the server sees carries
    /// one of these, the client's and the proxy's own alike: they cannot collide, and the
    /// server cannot tell them apart.
    next_wire: u64,
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
            next_wire: 0,
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

    /// Whether the proxy is still reading the surface.
    pub fn is_checking(&self) -> bool {
        self.phase == Phase::Checking
    }

    /// The server ended before its surface was read.
    pub fn server_gone(&mut self) -> Vec<Action> {
        self.unchecked("the server ended")
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
        self.next_wire += 1;
        Id(self.next_wire.to_string())
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

    /// Blocked: requests get an error, nothing is forwarded.
    fn refuse(&mut self, line: &[u8]) -> Vec<Action> {
        match message::read(line, self.max_message) {
            Ok(Message::Request { id, .. }) => vec![Action::ToClient(self.blocked_error(&id))],
            _ => Vec::new(),
        }
    }

    fn blocked_error(&self, id: &Id) -> Vec<u8> {
        let (code, why) = match self.outcome {
            Outcome::Unchecked => (
                code::UNCHECKED,
                "its surface could not be checked".to_string(),
            ),
            _ => (
                code::BLOCKED,
                "its surface changed since it was approved".to_string(),
            ),
        };
        message::error(
            id,
            code,
            &format!(
                "pinlog blocked {}: {why}{}. Nothing more is sent to it, and none of its \
                 answers is passed on. Review with `{}`",
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

    fn initialized(&mut self, result: Value<'static>) -> Vec<Action> {
        let o = result.as_object();
        let text = |name: &str| {
            o.and_then(|o| o.get(name))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let caps = o
            .and_then(|o| o.get("capabilities"))
            .and_then(Value::as_object);
        self.caps = (
            caps.is_some_and(|c| c.get("tools").is_some()),
            caps.is_some_and(|c| c.get("prompts").is_some()),
        );
        let served = Served {
            protocol_version: text("protocolVersion").unwrap_or_default(),
            instructions: text("instructions"),
            reported_name: o
                .and_then(|o| o.get("serverInfo"))
                .and_then(Value::as_object)
                .and_then(|i| i.get("name"))
                .and_then(Value::as_str)
                .map(str::to_string),
            ..Served::default()
        };
        self.init_result = Some(result);
        // The server hears `initialized` from the proxy; the client's own is dropped later.
        self.drop_initialized = true;
        let mut actions = vec![Action::ToServer(message::notification(
            "notifications/initialized",
            None,
        ))];
        actions.extend(self.start_listing(served, None));
        actions
    }

    /// The server does not speak the stateless era. Nothing was released, so the session starts
    /// over: the client's requests get "method not found" (clients then fall back to
    /// `initialize`, as the specification has them do), never the server's own text.
    fn not_stateless(&mut self) -> Vec<Action> {
        self.phase = Phase::Waiting;
        self.meta = None;
        self.own.clear();
        self.listing = None;
        let mut actions = vec![Action::Note(format!(
            "{} does not speak the 2026-07-28 era; waiting for the client's initialize",
            quoted(&self.label, 64)
        ))];
        for line in std::mem::take(&mut self.queue) {
            if let Ok(Message::Request { id, .. }) = message::read(&line, self.max_message) {
                actions.push(Action::ToClient(message::error(
                    &id,
                    METHOD_NOT_FOUND,
                    "pinlog proxy: the server does not speak the 2026-07-28 era; use initialize",
                )));
            }
        }
        actions
    }

    /// The stateless era's `server/discover` answer: who the server is and what it offers.
    fn discovered(&mut self, result: Value<'static>) -> Vec<Action> {
        let o = result.as_object();
        let revision = self.meta.as_deref().and_then(|m| {
            let m = pinlog_core::json::parse(m, pinlog_core::json::Limits::default()).ok()?;
            let m = m.as_object()?;
            m.get("io.modelcontextprotocol/protocolVersion")?
                .as_str()
                .map(str::to_string)
        });
        let supported = o
            .and_then(|o| o.get("supportedVersions"))
            .and_then(Value::as_array)
            .is_some_and(|v| {
                v.iter()
                    .any(|v| v.as_str().is_some() && v.as_str() == revision.as_deref())
            });
        if !supported {
            return self.not_stateless();
        }
        let caps = o
            .and_then(|o| o.get("capabilities"))
            .and_then(Value::as_object);
        self.caps = (
            caps.is_some_and(|c| c.get("tools").is_some()),
            caps.is_some_and(|c| c.get("prompts").is_some()),
        );
        let info = o
            .and_then(|o| o.get("_meta"))
            .and_then(Value::as_object)
            .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"))
            .or_else(|| o.and_then(|o| o.get("serverInfo")));
        let served = Served {
            protocol_version: revision.unwrap_or_default(),
            instructions: o
                .and_then(|o| o.get("instructions"))
                .and_then(Value::as_str)
                .map(str::to_string),
            reported_name: info
                .and_then(Value::as_object)
                .and_then(|i| i.get("name"))
                .and_then(Value::as_str)
                .map(str::to_string),
            ..Served::default()
        };
        self.start_listing(served, None)
    }

    /// Reads the surface's listings, as the server's capabilities announce them.
    fn start_listing(&mut self, served: Served, notification: Option<Vec<u8>>) -> Vec<Action> {
        // A listing already under way is started over; its late answers are dropped, and the
        // notifications that asked for it wait for the new one.
        let mut notifications = self
            .listing
            .take()
            .map(|l| l.notifications)
            .unwrap_or_default();
        if let Some(n) = notification {
            if notifications.push(n).is_err() {
                return self.server_past_bounds();
            }
        }
        self.own
            .retain(|_, p| !matches!(p, Purpose::Tools | Purpose::Prompts));
        // While the proxy lists, what the client sends waits, as it did the first time.
        self.phase = Phase::Checking;
        self.deadline = Some(std::time::Instant::now() + CHECK_TIME);
        let mut todo = Vec::new();
        if self.caps.0 {
            todo.push(Purpose::Tools);
        }
        if self.caps.1 {
            todo.push(Purpose::Prompts);
        }
        todo.reverse();
        self.listing = Some(Listing {
            served,
            todo,
            pages: None,
            notifications,
        });
        self.next_listing()
    }

    fn next_listing(&mut self) -> Vec<Action> {
        let Some(listing) = self.listing.as_mut() else {
            return Vec::new();
        };
        let Some(purpose) = listing.todo.pop() else {
            return self.listed();
        };
        let item = Item::of(purpose);
        listing.pages = Some(Pages::new(item.method(), item.member(), &self.listing_caps));
        self.ask(purpose, None)
    }

    fn ask(&mut self, purpose: Purpose, cursor: Option<&str>) -> Vec<Action> {
        let params = page_params(self.meta.as_deref(), cursor);
        let id = self.own_id(purpose);
        vec![Action::ToServer(message::request(
            &id,
            Item::of(purpose).method(),
            &params,
        ))]
    }

    fn page(&mut self, purpose: Purpose, result: Value<'static>) -> Vec<Action> {
        let Some(listing) = self.listing.as_mut() else {
            return Vec::new();
        };
        let Some(pages) = listing.pages.as_mut() else {
            return Vec::new();
        };
        match pages.page(result) {
            Ok(Next::More(cursor)) => self.ask(purpose, Some(&cursor)),
            Ok(Next::Done(items)) => {
                match Item::of(purpose) {
                    Item::Tools => listing.served.tools.extend(items),
                    Item::Prompts => listing.served.prompts.extend(items),
                }
                self.next_listing()
            }
            Err(e) => self.unchecked(&pinlog_core::render::safe(&e.to_string())),
        }
    }

    /// The surface is read: compare it with what was approved.
    fn listed(&mut self) -> Vec<Action> {
        let Some(listing) = self.listing.take() else {
            return Vec::new();
        };
        if let Some(name) = duplicate_name(&listing.served) {
            return self.unchecked(&format!("the server listed {} twice", quoted(&name, 64)));
        }
        let mut notes = Vec::new();
        if self.approved.is_none() {
            match self.pins.approved() {
                Ok(a) => self.approved = a,
                Err(e) => return self.unchecked(&e),
            }
        }
        if self.approved.is_none() {
            // A surface that could never be found to match its pin is not pinned at all.
            let undecidable = listing
                .served
                .tools
                .iter()
                .chain(&listing.served.prompts)
                .find(|i| value_digest(i).is_err());
            if let Some(item) = undecidable {
                return self.unchecked(&format!(
                    "{} holds a number literal no double identifies, so it cannot be pinned",
                    quoted(item_name(item), 64)
                ));
            }
            let manifest = listing.served.manifest(&self.pins.id()).to_bytes();
            match self.pins.pin_first_use(&manifest) {
                Ok(Some(line)) => notes.push(Action::Note(line)),
                // Another session pinned this server first: compare with what it pinned.
                Ok(None) => {}
                Err(e) => return self.unchecked(&e),
            }
            match self.pins.approved() {
                Ok(Some(a)) => self.approved = Some(a),
                Ok(None) => return self.unchecked("the pin just made cannot be read back"),
                Err(e) => return self.unchecked(&e),
            }
        }
        let (bytes, id) = self.approved.clone().expect("read above");
        let lock = match Lockfile::read(&bytes) {
            Ok(l) => l,
            Err(e) => return self.unchecked(&format!("the approved surface cannot be read ({e})")),
        };
        self.digests = Some(Digests::of(&lock, &id));
        let manifest = listing.served.manifest(&id);
        let verdict = check(&manifest, &lock);
        let mut actions = notes;
        match verdict {
            None => {
                if self.drifted {
                    self.drifted = false;
                    if let Err(e) = self.pins.release() {
                        actions.push(Action::Note(e));
                    }
                    actions.push(Action::Note(format!(
                        "{} serves the approved surface again",
                        quoted(&self.label, 64)
                    )));
                }
                self.held_tools.clear();
                self.held_prompts.clear();
                self.strip_instructions = false;
                actions.extend(self.release(listing));
            }
            Some(drift) => {
                actions.extend(self.drift_notes(&drift, &manifest));
                match self.on_drift {
                    OnDrift::Block => actions.extend(self.stop(Outcome::Blocked, drift.labels)),
                    OnDrift::Hold => {
                        self.held_tools = drift.tools;
                        self.held_prompts = drift.prompts;
                        self.strip_instructions = drift.instructions;
                        actions.extend(self.release(listing));
                    }
                }
            }
        }
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

    /// An `initialize` or `server/discover` answer the client asked for itself: the instructions
    /// and the name the server gives are checked against the approved ones before delivery.
    fn deliver_identity(&mut self, id: Id, mut result: Value<'static>) -> Vec<Action> {
        let Some((bytes, sid)) = self.approved.clone() else {
            return vec![Action::ToClient(message::response(&id, &result))];
        };
        let Ok(lock) = Lockfile::read(&bytes) else {
            return self.unchecked("the approved surface cannot be read");
        };
        let o = result.as_object();
        let mut served = self.last.clone();
        served.instructions = o
            .and_then(|o| o.get("instructions"))
            .and_then(Value::as_str)
            .map(str::to_string);
        served.reported_name = o
            .and_then(|o| {
                o.get("serverInfo").or_else(|| {
                    o.get("_meta")
                        .and_then(Value::as_object)
                        .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"))
                })
            })
            .and_then(Value::as_object)
            .and_then(|i| i.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let manifest = served.manifest(&sid);
        let drift = check(&manifest, &lock)
            .filter(|d| d.instructions || d.labels.iter().any(|l| l == "server-renamed"));
        let Some(drift) = drift else {
            return vec![Action::ToClient(message::response(&id, &result))];
        };
        let mut actions = self.drift_notes(&drift, &manifest);
        match self.on_drift {
            OnDrift::Block => {
                actions.extend(self.stop(Outcome::Blocked, drift.labels.clone()));
                actions.push(Action::ToClient(self.blocked_error(&id)));
            }
            OnDrift::Hold => {
                if drift.instructions {
                    self.strip_instructions = true;
                    if let Value::Object(o) = &mut result {
                        o.remove("instructions");
                    }
                }
                actions.push(Action::ToClient(message::response(&id, &result)));
            }
        }
        actions
    }

    /// A listing the client asked for, checked before it is delivered: the page's items against
    /// the approved surface. Block mode blocks on a changed or new item; hold mode takes held
    /// items out of the page and lets one that changed back through.
    fn deliver_listing(&mut self, id: Id, result: Value<'static>, item: Item) -> Vec<Action> {
        let raw = message::response(&id, &result);
        let Value::Object(mut o) = result else {
            return vec![Action::ToClient(raw)];
        };
        let items: Vec<Value<'static>> = match o.get(item.member()) {
            Some(Value::Array(items)) => items.clone(),
            _ => return vec![Action::ToClient(raw)],
        };
        let page = Served {
            tools: items.clone(),
            ..Served::default()
        };
        if duplicate_name(&page).is_some() {
            return vec![
                Action::Note("refused a listing that names one item twice".into()),
                Action::ToClient(message::error(
                    &id,
                    code::UNCHECKED,
                    "pinlog: the server's listing names one item twice; it was not passed on",
                )),
            ];
        }
        // The common case, checked cheaply: every item is approved as served and nothing is held.
        let held = match item {
            Item::Tools => &self.held_tools,
            Item::Prompts => &self.held_prompts,
        };
        if held.is_empty()
            && self
                .digests
                .as_ref()
                .is_some_and(|d| d.all_approved(item, &items))
        {
            return vec![Action::ToClient(raw)];
        }
        let Some((bytes, sid)) = self.approved.clone() else {
            return vec![Action::ToClient(raw)];
        };
        let Ok(lock) = Lockfile::read(&bytes) else {
            return self.unchecked("the approved surface cannot be read");
        };
        // The page's items replace those of the same name in the last surface read.
        let mut served = self.last.clone();
        let list = match item {
            Item::Tools => &mut served.tools,
            Item::Prompts => &mut served.prompts,
        };
        for i in &items {
            let name = item_name(i).to_string();
            list.retain(|t| item_name(t) != name);
            list.push(i.clone());
        }
        let manifest = served.manifest(&sid);
        let drift = check(&manifest, &lock);
        self.last = served;
        let drifted: BTreeSet<String> = match (&drift, item) {
            (Some(d), Item::Tools) => d.tools.clone(),
            (Some(d), Item::Prompts) => d.prompts.clone(),
            (None, _) => BTreeSet::new(),
        };
        let on_page: Vec<&str> = items
            .iter()
            .map(item_name)
            .filter(|n| drifted.contains(*n))
            .collect();
        let held = match item {
            Item::Tools => &mut self.held_tools,
            Item::Prompts => &mut self.held_prompts,
        };
        // An item on this page that serves its approved form again is released.
        held.retain(|n| drifted.contains(n) || !items.iter().any(|i| item_name(i) == n));
        let nothing_held =
            self.held_tools.is_empty() && self.held_prompts.is_empty() && !self.strip_instructions;
        let mut released = Vec::new();
        if nothing_held && self.drifted && drift.is_none() {
            self.drifted = false;
            if let Err(e) = self.pins.release() {
                released.push(Action::Note(e));
            }
            released.push(Action::Note(format!(
                "{} serves the approved surface again",
                quoted(&self.label, 64)
            )));
        }
        let held = match item {
            Item::Tools => &mut self.held_tools,
            Item::Prompts => &mut self.held_prompts,
        };
        let newly: Vec<String> = on_page
            .iter()
            .filter(|n| !held.contains(**n))
            .map(|n| n.to_string())
            .collect();
        let mut actions = released;
        if let (Some(drift), false) = (&drift, newly.is_empty()) {
            actions.extend(self.drift_notes(drift, &manifest));
            if self.on_drift == OnDrift::Block {
                actions.extend(self.stop(Outcome::Blocked, drift.labels.clone()));
                actions.push(Action::ToClient(self.blocked_error(&id)));
                return actions;
            }
        }
        let held = match item {
            Item::Tools => &mut self.held_tools,
            Item::Prompts => &mut self.held_prompts,
        };
        held.extend(newly);
        if !items.iter().any(|i| held.contains(item_name(i))) {
            actions.push(Action::ToClient(raw));
            return actions;
        }
        if let Some(Value::Array(list)) = o.get_mut(item.member()) {
            list.retain(|i| !held.contains(item_name(i)));
        }
        actions.push(Action::ToClient(message::response(&id, &Value::Object(o))));
        actions
    }
}

/// The approved server's tool and prompt digests by name: what a listing is checked against
/// between full comparisons.
struct Digests {
    tools: HashMap<String, Digest>,
    prompts: HashMap<String, Digest>,
}

impl Digests {
    fn of(lock: &Lockfile<'_>, id: &str) -> Digests {
        // An undecidable pin has no digest, so nothing matches it here: the full check decides.
        let map = |pins: &[Pin<'_>]| {
            pins.iter()
                .filter_map(|p| p.digest.as_ref().ok().map(|d| (p.name.clone(), *d)))
                .collect()
        };
        let server = lock.server(id);
        Digests {
            tools: server.map(|s| map(&s.tools)).unwrap_or_default(),
            prompts: server
                .and_then(|s| s.prompts.as_deref())
                .map(map)
                .unwrap_or_default(),
        }
    }

    fn all_approved(&self, item: Item, items: &[Value<'_>]) -> bool {
        let map = match item {
            Item::Tools => &self.tools,
            Item::Prompts => &self.prompts,
        };
        items.iter().all(|i| {
            map.get(item_name(i))
                .is_some_and(|d| value_digest(i).is_ok_and(|served| served == *d))
        })
    }
}

/// Which listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    Tools,
    Prompts,
}

impl Item {
    /// The listing a purpose of the proxy's reads.
    fn of(purpose: Purpose) -> Item {
        match purpose {
            Purpose::Prompts => Item::Prompts,
            _ => Item::Tools,
        }
    }

    fn method(self) -> &'static str {
        match self {
            Item::Tools => "tools/list",
            Item::Prompts => "prompts/list",
        }
    }

    fn member(self) -> &'static str {
        match self {
            Item::Tools => "tools",
            Item::Prompts => "prompts",
        }
    }
}

fn item_name<'v>(item: &'v Value<'_>) -> &'v str {
    item.as_object()
        .and_then(|o| o.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// A name two tools (or two prompts) share, equal after NFC, or an item without a string name.
fn duplicate_name(served: &Served) -> Option<String> {
    for list in [&served.tools, &served.prompts] {
        let mut seen = std::collections::HashSet::new();
        for item in list {
            let name = item
                .as_object()
                .and_then(|o| o.get("name"))
                .and_then(Value::as_str);
            let Some(name) = name else {
                return Some(String::new());
            };
            if !seen.insert(pinlog_core::format::nfc(name)) {
                return Some(name.to_string());
            }
        }
    }
    None
}
