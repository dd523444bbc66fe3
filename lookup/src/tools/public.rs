//! `pinlog_pin_vs_public_record`: whether a pin on this machine matches what the public log saw
//! of a server, in the three outcomes the proxy says: matches, differs from, or not in the public
//! record. The pin store keeps no public identity, so the question names it.
//!
//! The comparison is the proxy's: the pin's surface digest against the log's latest entry for the
//! identity (and version), by the record verified for the index. A difference is told by labels
//! and counts from the proxy's check of the pin against the public surface, never its text.

use std::time::SystemTime;

use pinlog_core::json::Object;
use pinlog_core::lockfile::{InstructionsPin, LockServer, Lockfile, Pin};
use pinlog_core::ServerId;
use pinlog_core::Value;
use pinlog_log::surface_blob;
use pinlog_mcp::server::ToolResult;
use pinlog_proxy::check::Served;
use pinlog_proxy::public::public_lock;
use pinlog_proxy::store::{Pinned, ServerKey};
use pinlog_verifier::record::{Compared, Observed};

use super::answer::{answer, invalid, name_members, obj, s, string_arg};
use super::pins::{change, nothing_pinned};
use super::status::{log_not_configured, log_out, log_problem};
use super::LookupTools;
use crate::history::LogIndex;
use crate::safe::{Out, SafeStr};

const ARGUMENTS: &[&str] = &["pin", "identity", "version"];

const NOTE: &str = "Facts only: the outcome, the log's entry, dates, counts and fixed change \
    labels. The text that differs is never shown here, as it may be written to steer a model: a \
    person reads the difference in a terminal, where the proxy started with --log, or `pinlog \
    verify --log` of a manifest, shows it field by field (`pinlog review` shows only a change \
    pending against the pin). A match says the public log saw the same surface, not that it is \
    safe.";

impl LookupTools {
    pub(super) fn pin_vs_public_record(&self, arguments: &Object<'_>) -> ToolResult {
        let arg = |name| string_arg(arguments, ARGUMENTS, name);
        let (given, identity, version) = match (arg("pin"), arg("identity"), arg("version")) {
            (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return e,
            (Ok(None), _, _) => {
                return invalid("give the pin: its key, a key prefix, or its label")
            }
            (_, Ok(None), _) => {
                return invalid("give the server's public identity, e.g. npm:@scope/name")
            }
            (Ok(Some(p)), Ok(Some(i)), Ok(v)) => (p, i, v),
        };
        let Ok(identity) = identity.parse::<ServerId>() else {
            return invalid(
                "the identity is kind:name (npm:@scope/name, pypi:name, oci:image, remote:URL, \
                 registry:name)",
            );
        };
        let (key, pinned) = match self.find_pin(given) {
            Ok(Some(found)) => found,
            Ok(None) => return nothing_pinned(),
            Err(e) => return e,
        };
        let index = match self.index() {
            None => return log_not_configured(),
            Some(Ok(i)) => i,
            Some(Err(problem)) => return log_problem(problem),
        };
        compared(&index, &key, &pinned, &identity, version)
    }
}

/// The pin's approved surface, as the proxy would be served it; `None` for a pin that does not
/// hold every item whole (a version 1 lockfile).
fn pinned_surface(p: &Pinned) -> Option<Served> {
    let lock = p.lock().ok()?;
    let server = lock.server(&p.id)?;
    let InstructionsPin::Approved(instructions) = &server.instructions else {
        return None;
    };
    let whole = |pins: &[Pin<'_>]| -> Option<Vec<Value<'static>>> {
        pins.iter()
            .map(|p| p.approved.clone().map(Value::into_owned))
            .collect()
    };
    Some(Served {
        reported_name: server.reported_name.clone(),
        protocol_version: server.protocol_version.clone().unwrap_or_default(),
        instructions: instructions.clone(),
        tools: whole(&server.tools)?,
        prompts: whole(server.prompts.as_deref()?)?,
    })
}

/// The pin against the log's entry for `identity`: the answer.
fn compared(
    index: &LogIndex,
    key: &ServerKey,
    p: &Pinned,
    identity: &ServerId,
    version: Option<&str>,
) -> ToolResult {
    let mut m = vec![("key", Out::Str(SafeStr::key(key)))];
    m.extend(name_members("label", "label_altered", &p.label));
    let surface = pinned_surface(p).and_then(|served| {
        let blob = surface_blob::build(
            served.instructions.as_deref(),
            &served.prompts,
            &served.tools,
        )
        .ok()?;
        Some((served, blob.surface()))
    });
    let Some((served, digest)) = surface else {
        let mut out = vec![("status", s("not-comparable"))];
        out.extend(m);
        out.push((
            "message",
            s(
                "The pin's surface has no digest the public log could hold (a pin written by an \
               older pinlog, or a number with no canonical form): it cannot be compared.",
            ),
        ));
        return answer(obj(out), false);
    };
    let outcome = match index.record.compare(identity, version, &digest) {
        Ok(o) => o,
        Err(e) => return log_problem(e.into()),
    };
    let origin = SafeStr::name(&index.origin);
    let mut out = vec![("status", s("ok"))];
    out.extend(m);
    out.push(("log", log_out(index)));
    out.push(("pinned_surface", Out::Str(SafeStr::digest(&digest))));
    out.push(("words", s(outcome.words())));
    match &outcome {
        Compared::Matches(o) => {
            // The proxy's audit-log tokens for the same outcomes.
            out.push(("outcome", s("public-matches")));
            out.extend(name_members(
                "identity",
                "identity_altered",
                identity.as_str(),
            ));
            let days = o.days(SystemTime::now());
            out.extend(observed(o, days));
            out.push((
                "message",
                Out::Str(SafeStr::format(
                    "Matches the public record: entry {} of {}{}, unchanged for {} day(s); the \
                     pin is backed by public observation.",
                    &[
                        &SafeStr::number(o.index),
                        &origin,
                        &at_version(o),
                        &SafeStr::number(days),
                    ],
                )),
            ));
        }
        Compared::Differs(o, public) => {
            out.push(("outcome", s("public-differs")));
            out.extend(name_members(
                "identity",
                "identity_altered",
                identity.as_str(),
            ));
            out.extend(observed(o, o.days(SystemTime::now())));
            out.push((
                "message",
                Out::Str(SafeStr::format(
                    "Differs from the public record: entry {} of {}{} holds another surface; \
                     either this machine's configuration changes the surface, or this machine \
                     was served something the public was not.",
                    &[&SafeStr::number(o.index), &origin, &at_version(o)],
                )),
            ));
            // The pin as served, against the public surface as its lock: what the proxy shows.
            let lock_bytes = public_lock(public, &served, &p.id);
            match Lockfile::read(&lock_bytes) {
                Ok(lock) => {
                    let c = change(&served.manifest(&p.id), &lock);
                    let public_server = lock.servers.first();
                    let count = |f: fn(&LockServer<'_>) -> usize| public_server.map_or(0, f);
                    out.push(("labels", Out::strs(c.labels.unwrap_or_default())));
                    out.push((
                        "tools",
                        c.tools.out(
                            ("public", count(|s| s.tools.len())),
                            ("pinned", served.tools.len()),
                        ),
                    ));
                    out.push((
                        "prompts",
                        c.prompts.out(
                            ("public", count(|s| s.prompts.as_ref().map_or(0, Vec::len))),
                            ("pinned", served.prompts.len()),
                        ),
                    ));
                    out.push(("instructions_changed", Out::Bool(c.instructions)));
                }
                // A public blob that reads as no surface: every item differs, none is counted.
                Err(_) => out.push(("labels", Out::Arr(vec![]))),
            }
        }
        Compared::Absent => {
            // The identity asked is not one the log holds: it is not echoed.
            out.push(("outcome", s("public-absent")));
            out.push((
                "message",
                Out::Str(SafeStr::format(
                    "Not in the public record: the log {} has no entry for that identity (it was \
                     never read by the crawler, or it is named otherwise). Having no entry says \
                     nothing about a server's safety.",
                    &[&origin],
                )),
            ));
        }
    }
    out.push(("note", s(NOTE)));
    answer(obj(out), false)
}

/// The entry compared with: its index, when the log first saw its surface, the days since, and
/// the version the crawler ran.
fn observed(o: &Observed, days: u64) -> Vec<(&'static str, Out)> {
    let mut m = vec![
        ("entry", Out::Num(o.index)),
        ("public_surface", Out::Str(SafeStr::digest(&o.surface))),
        ("since", Out::Str(SafeStr::timestamp(&o.since))),
        ("days_since", Out::Num(days)),
    ];
    match &o.version {
        Some(v) => m.extend(name_members("observed_version", "version_altered", v)),
        None => m.push(("observed_version", Out::Null)),
    }
    m
}

/// `, observed at version V` when the log recorded one.
fn at_version(o: &Observed) -> SafeStr {
    match &o.version {
        Some(v) => SafeStr::format(", observed at version {}", &[&SafeStr::name(v)]),
        None => SafeStr::fixed(""),
    }
}
