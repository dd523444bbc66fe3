//! `pinlog_my_servers` and `pinlog_change_summary`: this machine's pins and their pending
//! changes, as labels and counts.

use pinlog_core::json::Object;
use pinlog_core::lockfile::Lockfile;
use pinlog_core::manifest::Manifest;
use pinlog_gate::compare::compare;
use pinlog_gate::{Kind, Policy};
use pinlog_mcp::server::ToolResult;
use pinlog_proxy::check;
use pinlog_proxy::store::{PinStoreError, Pinned, ServerKey, Store};

use super::answer::{answer, invalid, name_members, obj, s, string_arg};
use super::search::MAX_SUGGESTED;
use super::{LookupTools, Pins};
use crate::safe::{labels, Out, SafeStr};

impl LookupTools {
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

    pub(super) fn my_servers(&self, arguments: &Object<'_>) -> ToolResult {
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

    pub(super) fn change_summary(&self, arguments: &Object<'_>) -> ToolResult {
        let given = match string_arg(arguments, &["server"], "server") {
            Ok(Some(v)) => v,
            Ok(None) => return invalid("give the server: its key, a key prefix, or its label"),
            Err(e) => return e,
        };
        let (key, pinned) = match self.find_pin(given) {
            Ok(Some(found)) => found,
            Ok(None) => return nothing_pinned(),
            Err(e) => return e,
        };
        match summary(&key, &pinned) {
            Some(out) => answer(out, false),
            None => store_unreadable(),
        }
    }

    /// The pin `given` names (see [`resolve`]); `Ok(None)` when there is no store yet, `Err` the
    /// answer when it names none or several, or the store cannot be read.
    pub(super) fn find_pin(&self, given: &str) -> Result<Option<(ServerKey, Pinned)>, ToolResult> {
        let Some(store) = self.store()? else {
            return Ok(None);
        };
        let keys = store.keys().map_err(|_| store_unreadable())?;
        let key = resolve(&keys, given).map_err(|several| {
            let mut m = vec![(
                "status",
                s(if several.is_empty() {
                    "not-found"
                } else {
                    "ambiguous"
                }),
            )];
            if several.is_empty() {
                let near = near_labels(&keys, given);
                m.push((
                    "did_you_mean",
                    Out::Arr(
                        near.iter()
                            .take(MAX_SUGGESTED)
                            .map(|(k, label)| {
                                let mut pin = vec![("key", Out::Str(SafeStr::key(k)))];
                                pin.extend(name_members("label", "label_altered", label));
                                obj(pin)
                            })
                            .collect(),
                    ),
                ));
                m.push((
                    "message",
                    s(if near.is_empty() {
                        "No pinned server has that key, key prefix (6 hex digits or more) or \
                         label; pinlog_my_servers lists them."
                    } else {
                        "No pinned server has exactly that key, key prefix (6 hex digits or \
                         more) or label; did_you_mean lists the pins whose label holds it: ask \
                         again with one of their keys."
                    }),
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
            answer(obj(m), true)
        })?;
        match store.pinned(&key) {
            Ok(Some(p)) => Ok(Some((key, p))),
            Ok(None) => Err(answer(
                obj(vec![
                    ("status", s("not-found")),
                    ("key", Out::Str(SafeStr::key(&key))),
                    ("message", s("The server was forgotten meanwhile.")),
                ]),
                true,
            )),
            Err(_) => Err(store_unreadable()),
        }
    }
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

/// A question about one pin, with no pin store yet: nothing is pinned, so none is found.
pub(super) fn nothing_pinned() -> ToolResult {
    answer(
        obj(vec![
            ("status", s("not-found")),
            (
                "message",
                s(
                    "No server is pinned on this machine yet: the proxy pins a server the first \
                   time it runs it (pinlog_how_to_protect says how to set it up).",
                ),
            ),
        ]),
        true,
    )
}

/// The pins whose label holds `given`, ignoring ASCII case, shortest label first.
fn near_labels<'k>(keys: &'k [(ServerKey, String)], given: &str) -> Vec<&'k (ServerKey, String)> {
    let q = given.trim().to_ascii_lowercase();
    let mut near: Vec<_> = keys
        .iter()
        .filter(|(_, label)| !q.is_empty() && label.to_ascii_lowercase().contains(&q))
        .collect();
    near.sort_by(|(ka, a), (kb, b)| a.len().cmp(&b.len()).then(ka.as_str().cmp(kb.as_str())));
    near
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

/// Counts of one kind of item in a change.
#[derive(Default)]
pub(super) struct Moves {
    changed: u64,
    added: u64,
    removed: u64,
}

impl Moves {
    /// The counts, after how many items each side has (`before` the approved side, `after` the
    /// side compared with it), each under its name.
    pub(super) fn out(&self, before: (&'static str, usize), after: (&'static str, usize)) -> Out {
        obj(vec![
            (before.0, Out::Num(before.1 as u64)),
            (after.0, Out::Num(after.1 as u64)),
            ("changed", Out::Num(self.changed)),
            ("added", Out::Num(self.added)),
            ("removed", Out::Num(self.removed)),
        ])
    }
}

/// How a surface departs from a lock, by the proxy's own comparison: labels and counts only.
pub(super) struct Change {
    /// The labels the proxy's check gives, filtered to pinlog's tokens; `None` when the check
    /// finds nothing the default gate stops.
    pub labels: Option<Vec<SafeStr>>,
    pub tools: Moves,
    pub prompts: Moves,
    pub instructions: bool,
    pub renamed: bool,
}

/// How `served` (a one-server manifest) departs from `lock`.
pub(super) fn change(served: &Manifest<'_>, lock: &Lockfile<'_>) -> Change {
    let mut c = Change {
        labels: check::check(served, lock).map(|d| labels(d.labels.iter().map(String::as_str))),
        tools: Moves::default(),
        prompts: Moves::default(),
        instructions: false,
        renamed: false,
    };
    for f in compare(served, lock) {
        if f.kind == Kind::Unexamined {
            continue;
        }
        match f.policy {
            Some(Policy::ToolChanged) => c.tools.changed += 1,
            Some(Policy::ToolAdded) => c.tools.added += 1,
            Some(Policy::ToolRemoved) => c.tools.removed += 1,
            Some(Policy::PromptChanged) => c.prompts.changed += 1,
            Some(Policy::PromptAdded) => c.prompts.added += 1,
            Some(Policy::PromptRemoved) => c.prompts.removed += 1,
            Some(Policy::InstructionsChanged) => c.instructions = true,
            Some(Policy::ServerRenamed) => c.renamed = true,
            _ => {}
        }
    }
    c
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
    let c = change(&manifest, &lock);
    // The labels as the proxy computes them now; those it recorded, if they are the same server
    // compared some other way (they are filtered to pinlog's tokens either way).
    let shown = c
        .labels
        .unwrap_or_else(|| labels(pending.labels.iter().map(String::as_str)));
    m.push(("pending", Out::Bool(true)));
    m.push(("since", Out::Str(SafeStr::date(&pending.at))));
    m.push(("labels", Out::strs(shown)));
    m.push((
        "tools",
        c.tools
            .out(("pinned", p.tools), ("served", served.tools.len())),
    ));
    m.push((
        "prompts",
        c.prompts
            .out(("pinned", p.prompts), ("served", served.prompts.len())),
    ));
    m.push(("instructions_changed", Out::Bool(c.instructions)));
    m.push(("server_renamed", Out::Bool(c.renamed)));
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
