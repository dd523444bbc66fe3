//! The lookup tools: read-only answers about a public server's history (from a verified local
//! copy of the log), this machine's pins and pending changes, and how to protect a client.
//!
//! Every answer is an [`Out`]: names through `safe_name`, dates, counts, digests, keys and fixed
//! labels, and pinlog's own text. No description, schema, instruction or other text a server
//! wrote is ever returned: a tool's answer goes straight to the model. Nor is the question
//! echoed: every name in an answer is one the log or the pin store holds.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pinlog_core::json::{Object, Value};
use pinlog_core::manifest::Manifest;
use pinlog_gate::compare::compare;
use pinlog_gate::{Kind, Policy};
use pinlog_mcp::server::{CallError, Json, McpServer, ServerInfo, ToolDef, ToolResult, Tools};

use crate::history::{self, Found, History, LogConfig, LogIndex, LogProblem};
use crate::safe::{labels, safe_name, Out, SafeStr};
use pinlog_clients::guide as clients;
use pinlog_proxy::check;
use pinlog_proxy::store::{PinStoreError, Pinned, ServerKey, Store};

pub const SERVER_STATUS: &str = "pinlog_server_status";
pub const MY_SERVERS: &str = "pinlog_my_servers";
pub const CHANGE_SUMMARY: &str = "pinlog_change_summary";
pub const HOW_TO_PROTECT: &str = "pinlog_how_to_protect";

/// The longest argument read.
const MAX_ARGUMENT: usize = 600;

/// Where this machine's pins are, for the tools that read them.
#[derive(Debug, Clone)]
pub enum Pins {
    /// The pin store's home directory (`Store::home()`).
    Home(PathBuf),
    /// No data directory could be found.
    NoHome,
    /// Not offered (Streamable HTTP: this machine's pins are never served to a network peer);
    /// the tools that read pins are not listed.
    Off,
}

/// The lookup tools' state: where the log and the pins are, and the last verified index.
pub struct LookupTools {
    log: Option<LogConfig>,
    pins: Pins,
    index: Mutex<Option<Arc<LogIndex>>>,
}

fn obj(members: Vec<(&'static str, Out)>) -> Out {
    Out::Obj(members)
}

fn s(text: &'static str) -> Out {
    Out::fixed(text)
}

fn answer(out: Out, is_error: bool) -> ToolResult {
    ToolResult::structured(out.to_json(), is_error)
}

fn invalid(message: &'static str) -> ToolResult {
    answer(
        obj(vec![
            ("status", s("invalid-arguments")),
            ("message", s(message)),
        ]),
        true,
    )
}

/// A name from outside, and a flag when it had to be changed to be shown.
fn name_members(
    field: &'static str,
    altered: &'static str,
    name: &str,
) -> Vec<(&'static str, Out)> {
    let (shown, changed) = safe_name(name);
    let mut m = vec![(field, Out::Str(SafeStr::name(&shown)))];
    if changed {
        m.push((altered, Out::Bool(true)));
    }
    m
}

/// Checks that `arguments` has only the members `allowed`, and returns the string member `name`
/// (at most [`MAX_ARGUMENT`] bytes); `Ok(None)` when absent.
fn string_arg<'a>(
    arguments: &'a Object<'_>,
    allowed: &[&str],
    name: &str,
) -> Result<Option<&'a str>, ToolResult> {
    if arguments.iter().any(|(k, _)| !allowed.contains(&k)) {
        return Err(invalid("an argument this tool does not take was given"));
    }
    match arguments.get(name) {
        None => Ok(None),
        Some(Value::String(v)) if !v.is_empty() && v.len() <= MAX_ARGUMENT => Ok(Some(v)),
        Some(Value::String(_)) => Err(invalid("the argument is empty or too long")),
        Some(_) => Err(invalid("the argument must be a string")),
    }
}

fn schema(properties: Json, required: &[&str]) -> Json {
    Json::obj([
        ("type", Json::str("object")),
        ("properties", properties),
        ("required", Json::strs(required.iter().copied())),
        ("additionalProperties", Json::Bool(false)),
    ])
}

fn string_property(description: &str, max: i64) -> Json {
    Json::obj([
        ("type", Json::str("string")),
        ("minLength", Json::Int(1)),
        ("maxLength", Json::Int(max)),
        ("description", Json::str(description)),
    ])
}

const NO_SERVER_TEXT: &str = "Facts only: dates, counts, digests, fixed change labels and names \
    restricted to a safe character set. No text a server wrote (descriptions, schemas, \
    instructions) is returned here; the log's site, or `pinlog review` in a terminal, shows it to \
    a person.";

impl LookupTools {
    pub fn new(log: Option<LogConfig>, pins: Pins) -> LookupTools {
        LookupTools {
            log,
            pins,
            index: Mutex::new(None),
        }
    }

    /// Whether the tools that read this machine's pins are offered.
    pub fn offers_pins(&self) -> bool {
        !matches!(self.pins, Pins::Off)
    }

    /// The verified index of the log: the one verified last, while the checkpoint in the
    /// directory is still the one it verified; else the log is verified and indexed again.
    /// `None` when no log is configured.
    pub fn index(&self) -> Option<Result<Arc<LogIndex>, LogProblem>> {
        let config = self.log.as_ref()?;
        let mut cached = self.index.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(index) = cached.as_ref() {
            if history::current_note(&config.dir).as_deref() == Some(index.note.as_str()) {
                return Some(Ok(index.clone()));
            }
        }
        *cached = None;
        Some(history::load(config).map(|index| {
            let index = Arc::new(index);
            *cached = Some(index.clone());
            index
        }))
    }

    fn server_status(&self, arguments: &Object<'_>) -> ToolResult {
        let asked = match string_arg(arguments, &["server"], "server") {
            Ok(Some(v)) => v,
            Ok(None) => return invalid("give the server, e.g. npm:@scope/name"),
            Err(e) => return e,
        };
        let mut m = vec![];
        let Some(index) = self.index() else {
            m.push(("status", s("log-not-configured")));
            m.push((
                "message",
                s(
                    "No copy of the public log is configured. Start `pinlog lookup` with \
                   --log DIR --vkey VKEY: a local copy of the published log, and its key pinned \
                   from a source you trust (docs/VERIFYING.md).",
                ),
            ));
            return answer(obj(m), true);
        };
        let index = match index {
            Ok(i) => i,
            Err(problem) => return log_problem(problem),
        };
        let dir = &self.log.as_ref().expect("an index means a log").dir;
        let log = obj(vec![
            ("origin", Out::Str(SafeStr::name(&index.origin))),
            ("entries", Out::Num(index.size)),
            ("root", Out::Str(SafeStr::root(&index.root))),
            ("verified", Out::Bool(true)),
        ]);
        match index.find(asked) {
            Found::One(h) => {
                m.push(("status", s("ok")));
                m.extend(name_members("server", "server_name_altered", h.id.as_str()));
                m.push(("log", log));
                m.extend(history_members(&index, dir, h));
                m.push(("note", s(NO_SERVER_TEXT)));
            }
            Found::Several(ids) => {
                m.push(("status", s("ambiguous")));
                m.push(("log", log));
                let ids: Vec<SafeStr> = ids.iter().map(|id| SafeStr::name(id.as_str())).collect();
                m.push(("candidates", Out::strs(ids)));
                m.push((
                    "message",
                    s(
                        "Several servers in the log have that name; ask again with one of the \
                       candidates (kind:name).",
                    ),
                ));
            }
            Found::None => {
                m.push(("status", s("not-found")));
                m.push(("log", log));
                m.push(("servers_in_log", Out::Num(index.server_count() as u64)));
                m.push((
                    "message",
                    s(
                        "The log has no entry for this server: it was never read by the crawler, \
                       or it is named otherwise (kind:name, e.g. npm:@scope/name, \
                       pypi:name, oci:image, remote:URL). No entry says nothing about safety.",
                    ),
                ));
            }
        }
        answer(obj(m), false)
    }

    fn store(&self) -> Result<Option<Store>, ToolResult> {
        let home = match &self.pins {
            Pins::Home(h) => h,
            Pins::NoHome => {
                return Err(answer(
                    obj(vec![
                        ("status", s("store-unreadable")),
                        (
                            "message",
                            s("No data directory for the pin store: set PINLOG_HOME."),
                        ),
                    ]),
                    true,
                ))
            }
            Pins::Off => unreachable!("the pin tools are not offered"),
        };
        match Store::open_existing(home) {
            Ok(store) => Ok(Some(store)),
            Err(PinStoreError::Missing(_)) => Ok(None),
            Err(_) => Err(store_unreadable()),
        }
    }

    fn my_servers(&self, arguments: &Object<'_>) -> ToolResult {
        if let Err(e) = string_arg(arguments, &[], "") {
            return e;
        }
        let store = match self.store() {
            Ok(Some(store)) => store,
            Ok(None) => return no_store(),
            Err(e) => return e,
        };
        let list = match store.list() {
            Ok(l) => l,
            Err(_) => return store_unreadable(),
        };
        let servers: Vec<Out> = list.iter().map(|(k, p)| pin_out(k, p)).collect();
        let pending = list.iter().filter(|(_, p)| p.pending.is_some()).count();
        answer(
            obj(vec![
                ("status", s("ok")),
                ("count", Out::Num(servers.len() as u64)),
                ("pending", Out::Num(pending as u64)),
                ("servers", Out::Arr(servers)),
                (
                    "note",
                    s(
                        "Labels are shown restricted to a safe character set. A pending change \
                       blocks (or holds) its server until the user reviews it in a terminal: \
                       `pinlog review KEY`, then `pinlog approve KEY`. Nothing here can approve \
                       anything.",
                    ),
                ),
            ]),
            false,
        )
    }

    fn change_summary(&self, arguments: &Object<'_>) -> ToolResult {
        let given = match string_arg(arguments, &["server"], "server") {
            Ok(Some(v)) => v,
            Ok(None) => return invalid("give the server: its key, a key prefix, or its label"),
            Err(e) => return e,
        };
        let store = match self.store() {
            Ok(Some(store)) => store,
            Ok(None) => return no_store(),
            Err(e) => return e,
        };
        let keys = match store.keys() {
            Ok(k) => k,
            Err(_) => return store_unreadable(),
        };
        let key =
            match resolve(&keys, given) {
                Ok(k) => k,
                Err(several) => {
                    let mut m = vec![(
                        "status",
                        s(if several.is_empty() {
                            "not-found"
                        } else {
                            "ambiguous"
                        }),
                    )];
                    if several.is_empty() {
                        m.push((
                        "message",
                        s("No pinned server has that key, key prefix (6 hex digits or more) or \
                           label; pinlog_my_servers lists them."),
                    ));
                    } else {
                        m.push((
                            "candidates",
                            Out::strs(several.iter().map(SafeStr::key).collect()),
                        ));
                        m.push((
                            "message",
                            s("Several pinned servers match; give one of the keys."),
                        ));
                    }
                    return answer(obj(m), true);
                }
            };
        let pinned = match store.pinned(&key) {
            Ok(Some(p)) => p,
            Ok(None) => {
                return answer(
                    obj(vec![
                        ("status", s("not-found")),
                        ("key", Out::Str(SafeStr::key(&key))),
                        ("message", s("The server was forgotten meanwhile.")),
                    ]),
                    true,
                )
            }
            Err(_) => return store_unreadable(),
        };
        match summary(&key, &pinned) {
            Some(out) => answer(out, false),
            None => store_unreadable(),
        }
    }

    fn how_to_protect(&self, arguments: &Object<'_>) -> ToolResult {
        let id = match string_arg(arguments, &["client"], "client") {
            Ok(Some(v)) => v,
            Ok(None) => return invalid("give the client: one of the ids in the input schema"),
            Err(e) => return e,
        };
        let Some(c) = clients::find(id) else {
            let mut m = vec![("status", s("unknown-client"))];
            m.push((
                "clients",
                Out::strs(clients::ids().map(SafeStr::fixed).collect()),
            ));
            return answer(obj(m), true);
        };
        let mut m =
            vec![
            ("status", s("ok")),
            ("client", s(c.id)),
            ("name", s(c.name)),
            (
                "wrap_all",
                Out::Str(SafeStr::format(
                    "pinlog wrap --client {}",
                    &[&SafeStr::fixed(c.id)],
                )),
            ),
            (
                "wrap_all_note",
                s("Run in a terminal: it backs the file up and puts the proxy in front of \
                   every local (command) server of this client (`--dry-run` shows the change \
                   and writes nothing); running it twice changes nothing. Remote (URL) servers \
                   are left as they are. `--project` also wraps the .mcp.json of the current \
                   directory. `pinlog unwrap` undoes it."),
            ),
            (
                "unwrap",
                Out::Str(SafeStr::format(
                    "pinlog unwrap --client {}",
                    &[&SafeStr::fixed(c.id)],
                )),
            ),
            (
                "config_files",
                Out::strs(c.config_files.iter().map(|f| SafeStr::fixed(f)).collect()),
            ),
            ("servers_key", s(c.servers_key)),
            ("format", s(c.format)),
            ("snippet", s(c.snippet)),
            (
                "snippet_note",
                s("By hand: put `pinlog proxy --name NAME --` in front of the server's command, \
                   where NAME is what you call the server and COMMAND ARG its command and \
                   arguments as they were."),
            ),
        ];
        if let Some(alt) = c.alternative {
            m.push(("command_line", s(alt)));
        }
        m.push(("after", s(c.after)));
        m.push((
            "what_happens",
            s(
                "The first session pins what the server serves (its tools, prompts and \
               instructions). Every later session is held until the server serves exactly what \
               was pinned; a change blocks the session and waits for the user's review in a \
               terminal (`pinlog review KEY`, `pinlog approve KEY`). `pinlog pins` lists what is \
               pinned. A pin is not a safety rating: a server malicious from its first use is \
               pinned as it is.",
            ),
        ));
        answer(obj(m), false)
    }
}

fn log_problem(problem: LogProblem) -> ToolResult {
    let mut m = vec![];
    match problem {
        LogProblem::Bad { rule, at } => {
            m.push(("status", s("log-does-not-verify")));
            // Rule names are pinlog's own fixed tokens.
            m.push(("rule", Out::Str(SafeStr::name(rule))));
            m.push(("at", Out::Str(SafeStr::name(&at))));
            m.push((
                "message",
                s(
                    "The local copy of the log does not verify against the pinned key: nothing is \
                   answered from it. `pinlog verify-log DIR --vkey VKEY` in a terminal says why; \
                   copy the log again.",
                ),
            ));
        }
        LogProblem::Unreadable { at } => {
            m.push(("status", s("log-unreadable")));
            m.push(("at", Out::Str(SafeStr::name(&at))));
            m.push((
                "message",
                s("The local copy of the log cannot be read (no checkpoint, or an I/O error)."),
            ));
        }
        LogProblem::Moved => {
            m.push(("status", s("log-changed-while-read")));
            m.push((
                "message",
                s("The log directory changed while it was read; ask again."),
            ));
        }
    }
    answer(obj(m), true)
}

fn store_unreadable() -> ToolResult {
    answer(
        obj(vec![
            ("status", s("store-unreadable")),
            (
                "message",
                s("The pin store cannot be read; `pinlog pins` in a terminal says why."),
            ),
        ]),
        true,
    )
}

fn no_store() -> ToolResult {
    answer(
        obj(vec![
            ("status", s("ok")),
            ("count", Out::Num(0)),
            ("pending", Out::Num(0)),
            ("servers", Out::Arr(vec![])),
            (
                "note",
                s(
                    "No server is pinned on this machine yet: the proxy pins a server the first \
                   time it runs it (pinlog_how_to_protect says how to set it up).",
                ),
            ),
        ]),
        false,
    )
}

/// A server's history: entries, first seen, last change, its current surface counted, and its
/// latest entries newest first.
fn history_members(
    index: &LogIndex,
    dir: &std::path::Path,
    h: &History,
) -> Vec<(&'static str, Out)> {
    let current = h.recent.back().expect("a history has an entry");
    let counts = index.counts(dir, current);
    let num =
        |f: fn(&history::Counts) -> u64| counts.as_ref().map_or(Out::Null, |c| Out::Num(f(c)));
    let mut cur = vec![
        ("entry", Out::Num(current.index)),
        (
            "observed_at",
            Out::Str(SafeStr::timestamp(&current.observed_at)),
        ),
        ("surface", Out::Str(SafeStr::digest(&current.surface))),
        ("tools", num(|c| c.tools)),
        ("prompts", num(|c| c.prompts)),
        (
            "instructions",
            counts.map_or(Out::Null, |c| Out::Bool(c.instructions)),
        ),
        ("labels", Out::strs(current.labels.clone())),
    ];
    if counts.is_none() {
        cur.push((
            "counts_note",
            s("The surface blob could not be read to count."),
        ));
    }
    let history: Vec<Out> = h
        .recent
        .iter()
        .rev()
        .map(|e| {
            let tools = index
                .counts(dir, e)
                .map_or(Out::Null, |c| Out::Num(c.tools));
            obj(vec![
                ("entry", Out::Num(e.index)),
                ("observed_at", Out::Str(SafeStr::timestamp(&e.observed_at))),
                ("labels", Out::strs(e.labels.clone())),
                ("tools", tools),
                ("surface", Out::Str(SafeStr::digest(&e.surface))),
            ])
        })
        .collect();
    let changed = h.entries > 1;
    vec![
        ("entries", Out::Num(h.entries)),
        ("changes", Out::Num(h.entries - 1)),
        (
            "first_seen",
            Out::Str(SafeStr::timestamp(&h.first.observed_at)),
        ),
        (
            "last_changed",
            if changed {
                Out::Str(SafeStr::timestamp(&current.observed_at))
            } else {
                Out::Null
            },
        ),
        ("current", obj(cur)),
        ("history", Out::Arr(history)),
        (
            "history_truncated",
            Out::Bool(h.entries > h.recent.len() as u64),
        ),
    ]
}

/// One pin, as `pinlog_my_servers` shows it.
fn pin_out(key: &ServerKey, p: &Pinned) -> Out {
    let mut m = vec![("key", Out::Str(SafeStr::key(key)))];
    m.extend(name_members("label", "label_altered", &p.label));
    m.push(("tools", Out::Num(p.tools as u64)));
    m.push(("prompts", Out::Num(p.prompts as u64)));
    m.push(("approval", Out::Num(p.serial)));
    m.push(("pinned_at", Out::Str(SafeStr::date(&p.pinned_at))));
    match &p.pending {
        None => m.push(("pending", Out::Bool(false))),
        Some(pending) => {
            m.push(("pending", Out::Bool(true)));
            m.push(("pending_since", Out::Str(SafeStr::date(&pending.at))));
            m.push((
                "pending_labels",
                Out::strs(labels(pending.labels.iter().map(String::as_str))),
            ));
            m.push((
                "review",
                Out::Str(SafeStr::format("pinlog review {}", &[&SafeStr::key(key)])),
            ));
        }
    }
    obj(m)
}

/// The key `given` names: a key, a unique key prefix of 6 hex digits or more, or a label no other
/// server has. `Err` holds the keys that match when several do (empty when none does).
fn resolve(keys: &[(ServerKey, String)], given: &str) -> Result<ServerKey, Vec<ServerKey>> {
    if let Some((k, _)) = keys.iter().find(|(k, _)| k.as_str() == given) {
        return Ok(k.clone());
    }
    let hex = given.len() >= 6 && given.bytes().all(|b| b.is_ascii_hexdigit());
    let prefix = given.to_ascii_lowercase();
    let by_prefix: Vec<&ServerKey> = keys
        .iter()
        .filter(|(k, _)| hex && k.as_str().starts_with(&prefix))
        .map(|(k, _)| k)
        .collect();
    let by_label: Vec<&ServerKey> = keys
        .iter()
        .filter(|(_, l)| l == given)
        .map(|(k, _)| k)
        .collect();
    match (by_prefix.as_slice(), by_label.as_slice()) {
        ([one], _) | ([], [one]) => Ok((*one).clone()),
        ([], several) | (several, _) => Err(several.iter().map(|k| (*k).clone()).collect()),
    }
}

/// Counts of one kind of item in a pending change.
#[derive(Default)]
struct Moves {
    changed: u64,
    added: u64,
    removed: u64,
}

impl Moves {
    fn out(&self, pinned: usize, served: usize) -> Out {
        obj(vec![
            ("pinned", Out::Num(pinned as u64)),
            ("served", Out::Num(served as u64)),
            ("changed", Out::Num(self.changed)),
            ("added", Out::Num(self.added)),
            ("removed", Out::Num(self.removed)),
        ])
    }
}

/// The pending change of a pin: labels and counts only. `None` when the pin or the pending
/// surface does not read.
fn summary(key: &ServerKey, p: &Pinned) -> Option<Out> {
    let mut m = vec![("status", s("ok")), ("key", Out::Str(SafeStr::key(key)))];
    m.extend(name_members("label", "label_altered", &p.label));
    let Some(pending) = &p.pending else {
        m.push(("pending", Out::Bool(false)));
        m.push((
            "message",
            s("Nothing is pending: the server last served what was approved."),
        ));
        return Some(obj(m));
    };
    let lock = p.lock().ok()?;
    let manifest = Manifest::read(&pending.manifest).ok()?;
    let served = manifest.servers.first()?;
    let (mut tools, mut prompts) = (Moves::default(), Moves::default());
    let (mut instructions, mut renamed) = (false, false);
    for f in compare(&manifest, &lock) {
        if f.kind == Kind::Unexamined {
            continue;
        }
        match f.policy {
            Some(Policy::ToolChanged) => tools.changed += 1,
            Some(Policy::ToolAdded) => tools.added += 1,
            Some(Policy::ToolRemoved) => tools.removed += 1,
            Some(Policy::PromptChanged) => prompts.changed += 1,
            Some(Policy::PromptAdded) => prompts.added += 1,
            Some(Policy::PromptRemoved) => prompts.removed += 1,
            Some(Policy::InstructionsChanged) => instructions = true,
            Some(Policy::ServerRenamed) => renamed = true,
            _ => {}
        }
    }
    // The labels as the proxy computes them now; those it recorded, if they are the same server
    // compared some other way (they are filtered to pinlog's tokens either way).
    let shown = match check::check(&manifest, &lock) {
        Some(drift) => labels(drift.labels.iter().map(String::as_str)),
        None => labels(pending.labels.iter().map(String::as_str)),
    };
    m.push(("pending", Out::Bool(true)));
    m.push(("since", Out::Str(SafeStr::date(&pending.at))));
    m.push(("labels", Out::strs(shown)));
    m.push(("tools", tools.out(p.tools, served.tools.len())));
    m.push(("prompts", prompts.out(p.prompts, served.prompts.len())));
    m.push(("instructions_changed", Out::Bool(instructions)));
    m.push(("server_renamed", Out::Bool(renamed)));
    let k = SafeStr::key(key);
    m.push((
        "review",
        Out::Str(SafeStr::format("pinlog review {}", &[&k])),
    ));
    // No approve command: an agent with a shell would run it. Approving is a person's act.
    m.push((
        "note",
        s(
            "Labels and counts only: the changed text itself is never shown here, as it may be \
           written to steer a model. The user reviews it in a terminal and decides; nothing \
           here can approve it.",
        ),
    ));
    Some(obj(m))
}

impl Tools for LookupTools {
    fn list(&self) -> Vec<ToolDef> {
        let mut tools = vec![ToolDef {
            name: SERVER_STATUS.into(),
            title: Some("Public server history".into()),
            description: "Whether a public MCP server's surface (its tools, prompts and \
                instructions) changed, when, and how many tools it has, from a local copy of \
                pinlog's public log verified against its pinned key. Answers hold dates, counts, \
                digests and fixed change labels only, never the server's own text."
                .into(),
            input_schema: schema(
                Json::obj([(
                    "server",
                    string_property(
                        "The server's identity in the log, kind:name (npm:@scope/name, \
                         pypi:name, oci:image, remote:URL, registry:name), or its name alone",
                        520,
                    ),
                )]),
                &["server"],
            ),
            read_only: true,
        }];
        if self.offers_pins() {
            tools.push(ToolDef {
                name: MY_SERVERS.into(),
                title: Some("Pinned servers on this machine".into()),
                description: "The MCP servers pinned on this machine by pinlog's proxy: key, \
                    label, tool and prompt counts, when pinned, and whether a change waits for \
                    review (with its fixed change labels)."
                    .into(),
                input_schema: schema(Json::obj([]), &[]),
                read_only: true,
            });
            tools.push(ToolDef {
                name: CHANGE_SUMMARY.into(),
                title: Some("Pending change summary".into()),
                description: "What kind of change waits for review on a pinned server: fixed \
                    change labels (new-instruction, new-field, wording-only, …) and counts of \
                    tools and prompts changed, added and removed. Never the changed text; the \
                    user reviews and approves in a terminal."
                    .into(),
                input_schema: schema(
                    Json::obj([(
                        "server",
                        string_property(
                            "The pinned server: its key, a key prefix of 6 hex digits or more, \
                             or its label",
                            200,
                        ),
                    )]),
                    &["server"],
                ),
                read_only: true,
            });
        }
        tools.push(ToolDef {
            name: HOW_TO_PROTECT.into(),
            title: Some("How to protect a client".into()),
            description: "How to put pinlog's proxy in front of a client's local MCP servers: \
                the configuration file, the `pinlog wrap` command, and the snippet to write by \
                hand."
                .into(),
            input_schema: schema(
                Json::obj([(
                    "client",
                    Json::obj([
                        ("type", Json::str("string")),
                        ("enum", Json::strs(clients::names())),
                        ("description", Json::str("The MCP client")),
                    ]),
                )]),
                &["client"],
            ),
            read_only: true,
        });
        tools
    }

    fn call(&self, name: &str, arguments: &Object<'_>) -> Result<ToolResult, CallError> {
        match name {
            SERVER_STATUS => Ok(self.server_status(arguments)),
            MY_SERVERS if self.offers_pins() => Ok(self.my_servers(arguments)),
            CHANGE_SUMMARY if self.offers_pins() => Ok(self.change_summary(arguments)),
            HOW_TO_PROTECT => Ok(self.how_to_protect(arguments)),
            _ => Err(CallError::UnknownTool),
        }
    }
}

/// The lookup server: its tools and who it says it is.
pub fn server(tools: LookupTools) -> McpServer<LookupTools> {
    let instructions = if tools.offers_pins() {
        "pinlog lookup: read-only facts about MCP servers. pinlog_server_status answers from a \
         verified local copy of pinlog's public log; pinlog_my_servers and \
         pinlog_change_summary from this machine's pin store; pinlog_how_to_protect says how to \
         set pinlog up in a client. Answers hold names restricted to a safe character set, \
         dates, counts, digests and fixed labels only: never a server's own descriptions or \
         pending definitions. Nothing here approves or changes anything: the user reviews and \
         approves changes in a terminal."
    } else {
        "pinlog lookup: read-only facts about public MCP servers. pinlog_server_status answers \
         from a verified local copy of pinlog's public log; pinlog_how_to_protect says how to \
         set pinlog up in a client. Answers hold names restricted to a safe character set, \
         dates, counts, digests and fixed labels only: never a server's own text."
    };
    McpServer::new(
        tools,
        ServerInfo {
            name: "pinlog-lookup".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            title: Some("pinlog lookup".into()),
            instructions: Some(instructions.into()),
        },
    )
}
