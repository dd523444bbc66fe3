//! `pinlog_server_status`: a public server's history, from the verified copy of the log.

use pinlog_core::json::Object;
use pinlog_mcp::server::ToolResult;

use super::answer::{answer, invalid, name_members, obj, s, string_arg};
use super::search::{identities, MAX_SUGGESTED};
use super::LookupTools;
use crate::history::{self, Found, History, LogIndex, LogProblem};
use crate::safe::{Out, SafeStr};

const NO_SERVER_TEXT: &str = "Facts only: dates, counts, digests, fixed change labels and names \
    restricted to a safe character set. No text a server wrote (descriptions, schemas, \
    instructions) is returned here; the log's site, or `pinlog review` in a terminal, shows it to \
    a person.";

impl LookupTools {
    pub(super) fn server_status(&self, arguments: &Object<'_>) -> ToolResult {
        let asked = match string_arg(arguments, &["server"], "server") {
            Ok(Some(v)) => v,
            Ok(None) => return invalid("give the server, e.g. npm:@scope/name"),
            Err(e) => return e,
        };
        let mut m = vec![];
        let index = match self.index() {
            None => return log_not_configured(),
            Some(Ok(i)) => i,
            Some(Err(problem)) => return log_problem(problem),
        };
        let log = log_out(&index);
        let found = match index.find(asked) {
            Ok(f) => f,
            Err(problem) => return log_problem(problem),
        };
        match found {
            Found::One(h) => {
                m.push(("status", s("ok")));
                m.extend(name_members("server", "server_name_altered", h.id.as_str()));
                m.push(("log", log));
                m.extend(history_members(&index, &h));
                // The site gives a server its short slug unless another holds it: with another
                // server in the log holding it, which page is whose is not known here.
                let page = match &self.site {
                    Some(site) if index.slug_is_short(&h.id) => {
                        Out::Str(SafeStr::site_page(site, &pinlog_core::slug::slug(&h.id)))
                    }
                    _ => Out::Null,
                };
                m.push(("site_page", page));
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
                let near = index.did_you_mean(asked);
                m.push(("status", s("not-found")));
                m.push(("log", log));
                m.push(("servers_in_log", Out::Num(index.server_count() as u64)));
                m.push(("did_you_mean", identities(&near, MAX_SUGGESTED)));
                m.push((
                    "message",
                    s(if near.is_empty() {
                        "The log has no entry for this server: it was never read by the crawler, \
                         or it is named otherwise (kind:name, e.g. npm:@scope/name, pypi:name, \
                         oci:image, remote:URL); pinlog_search_servers finds a server by a part \
                         of its name. Having no entry says nothing about a server's safety."
                    } else {
                        "The log has no server by exactly that name; did_you_mean lists those \
                         whose identity holds it, best first: ask again with one of them \
                         (pinlog_search_servers lists more). Having no entry says nothing about \
                         a server's safety."
                    }),
                ));
            }
        }
        answer(obj(m), false)
    }
}

pub(super) fn log_not_configured() -> ToolResult {
    answer(
        obj(vec![
            ("status", s("log-not-configured")),
            (
                "message",
                s(
                    "No copy of the public log is configured. Start `pinlog lookup` with \
                   --log DIR --vkey VKEY: a local copy of the published log, and its key pinned \
                   from a source you trust (docs/VERIFYING.md).",
                ),
            ),
        ]),
        true,
    )
}

/// The verified log an answer comes from.
pub(super) fn log_out(index: &LogIndex) -> Out {
    obj(vec![
        ("origin", Out::Str(SafeStr::name(&index.origin))),
        ("entries", Out::Num(index.size)),
        ("root", Out::Str(SafeStr::root(&index.root))),
        ("verified", Out::Bool(true)),
    ])
}

pub(super) fn log_problem(problem: LogProblem) -> ToolResult {
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
        LogProblem::Unreadable { at, .. } => {
            m.push(("status", s("log-unreadable")));
            m.push(("at", Out::Str(SafeStr::name(&at))));
            m.push((
                "message",
                s("The public log cannot be read (no checkpoint, an I/O error, or not in time)."),
            ));
        }
        LogProblem::Moved => {
            m.push(("status", s("log-changed-while-read")));
            m.push((
                "message",
                s("The log changed after it was verified, while it was read; ask again."),
            ));
        }
    }
    answer(obj(m), true)
}

/// A server's history: entries, first seen, last change, its current surface counted, and its
/// latest entries newest first.
fn history_members(index: &LogIndex, h: &History) -> Vec<(&'static str, Out)> {
    let current = h.recent.back().expect("a history has an entry");
    let counts = index.counts(current);
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
    match &current.version {
        Some(v) => cur.extend(name_members("observed_version", "version_altered", v)),
        None => cur.push(("observed_version", Out::Null)),
    }
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
            let tools = index.counts(e).map_or(Out::Null, |c| Out::Num(c.tools));
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
