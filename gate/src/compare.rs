//! The comparison policies: the served surface (a manifest) against the approved one (a
//! lockfile). The rules are in docs/GATE.md; in short:
//!
//! - servers are matched by `id`, tools and prompts by exact `name` (a name that changed is a
//!   removal and an addition);
//! - an approved server missing from a scoped manifest is unexamined; missing from an unscoped one,
//!   each of its tools and prompts is removed;
//! - an approved item missing from a capture that is not complete is unseen, not removed;
//! - a tool or prompt with a number literal that no double identifies is compared structurally:
//!   a difference anywhere else proves the change; otherwise it is undecidable, never a match;
//! - a version 1 lockfile pins tool digests only: a moved digest is a change without a diff or
//!   labels, and served prompts and instructions are unexamined (exit 3 when gated): it never
//!   approved them, and nothing proves them new;
//! - an approved server gone from an unscoped capture loses its instructions too;
//! - a locked package is compared with the manifest's when it records one: another package,
//!   version or registry digest is a change; a package, version or digest the lockfile pins and
//!   the manifest does not record is unexamined; one the lockfile does not pin is not compared.

use std::collections::{HashMap, HashSet};

use pinlog_core::diff::{diff, Change};
use pinlog_core::digest::value_digest;
use pinlog_core::json::to_f64;
use pinlog_core::labels::{instructions_labels, prompt_labels, tool_labels, Label};
use pinlog_core::lockfile::{InstructionsPin, LockServer, Lockfile, Pin};
use pinlog_core::manifest::{Manifest, ManifestServer};
use pinlog_core::package::Package;
use pinlog_core::Value;

use crate::finding::{Detail, Finding, Kind, Subject};
use crate::policy::Policy;

/// Every comparison finding, in lockfile order and then for servers the lockfile does not know.
pub fn compare<'v, 'a>(manifest: &'v Manifest<'a>, lock: &'v Lockfile<'a>) -> Vec<Finding<'v, 'a>> {
    let mut out = Vec::new();
    for approved in &lock.servers {
        match manifest.servers.iter().find(|s| s.id == approved.id) {
            Some(served) => server(approved, Some(served), manifest.complete, &mut out),
            None if manifest.scope.is_some() => out.push(Finding {
                policy: None,
                kind: Kind::Unexamined,
                server: &approved.id,
                subject: Subject::Server,
                detail: Detail::None,
                labels: Vec::new(),
            }),
            None => server(approved, None, manifest.complete, &mut out),
        }
    }
    let pins_prompts = lock.schema_version >= 2;
    for served in &manifest.servers {
        if lock.server(&served.id).is_none() {
            new_server(served, pins_prompts, &mut out);
        }
    }
    out
}

/// The tools and prompts of a server the lockfile does not know, all added; its instructions,
/// if any, changed from none.
fn new_server<'v, 'a>(
    served: &'v ManifestServer<'a>,
    pins_prompts: bool,
    out: &mut Vec<Finding<'v, 'a>>,
) {
    items(&served.id, Item::Tool, &[], &served.tools, true, out);
    if pins_prompts {
        items(&served.id, Item::Prompt, &[], &served.prompts, true, out);
        instructions(&served.id, None, served.instructions.as_deref(), out);
    } else {
        unpinned(served, out);
    }
}

fn server<'v, 'a>(
    approved: &'v LockServer<'a>,
    served: Option<&'v ManifestServer<'a>>,
    complete: bool,
    out: &mut Vec<Finding<'v, 'a>>,
) {
    let id = approved.id.as_str();
    let Some(served) = served else {
        // The whole server is gone from a capture that claims to be the whole surface.
        items(id, Item::Tool, &approved.tools, &[], complete, out);
        if let Some(prompts) = &approved.prompts {
            items(id, Item::Prompt, prompts, &[], complete, out);
        }
        if let InstructionsPin::Approved(Some(text)) = &approved.instructions {
            if complete {
                instructions(id, Some(text), None, out);
            } else {
                out.push(bare(
                    Policy::InstructionsChanged,
                    Kind::Unseen,
                    id,
                    Subject::Instructions,
                ));
            }
        }
        return;
    };
    if approved.reported_name != served.reported_name {
        out.push(text_finding(
            Policy::ServerRenamed,
            id,
            Subject::Server,
            approved.reported_name.as_deref(),
            served.reported_name.as_deref(),
            Vec::new(),
        ));
    }
    if let Some(locked) = &approved.package {
        package(id, locked, served.package.as_ref(), out);
    }
    if let Some(p) = approved.protocol_version.as_deref() {
        if p != served.protocol_version {
            out.push(text_finding(
                Policy::ProtocolChanged,
                id,
                Subject::Server,
                Some(p),
                Some(&served.protocol_version),
                Vec::new(),
            ));
        }
    }
    items(
        id,
        Item::Tool,
        &approved.tools,
        &served.tools,
        complete,
        out,
    );
    match &approved.prompts {
        Some(prompts) => items(id, Item::Prompt, prompts, &served.prompts, complete, out),
        None => unpinned(served, out),
    }
    if let InstructionsPin::Approved(text) = &approved.instructions {
        instructions(id, text.as_deref(), served.instructions.as_deref(), out);
    }
}

/// The locked package against the one the manifest records. A changed package with an
/// unchanged surface is still a change: other code answers the same tools.
fn package<'v, 'a>(
    id: &'v str,
    approved: &'v Package,
    served: Option<&'v Package>,
    out: &mut Vec<Finding<'v, 'a>>,
) {
    let kind = match served {
        None => Kind::Unexamined,
        Some(s) => {
            let moved = |a: &Option<String>, s: &Option<String>| matches!((a, s), (Some(a), Some(s)) if a != s);
            // What the lockfile pins and the capture leaves out cannot be shown to match.
            let unrecorded = |a: &Option<String>, s: &Option<String>| a.is_some() && s.is_none();
            if s.registry != approved.registry
                || !approved.registry.same_name(&approved.name, &s.name)
                || moved(&approved.version, &s.version)
                || moved(&approved.digest, &s.digest)
            {
                Kind::Violation
            } else if unrecorded(&approved.version, &s.version)
                || unrecorded(&approved.digest, &s.digest)
            {
                Kind::Unexamined
            } else {
                return;
            }
        }
    };
    out.push(Finding {
        policy: Some(Policy::PackageChanged),
        kind,
        server: id,
        subject: Subject::Server,
        detail: Detail::Package { approved, served },
        labels: Vec::new(),
    });
}

/// A finding with no evidence beyond its kind.
fn bare<'v, 'a>(policy: Policy, kind: Kind, server: &'v str, subject: Subject) -> Finding<'v, 'a> {
    Finding {
        policy: Some(policy),
        kind,
        server,
        subject,
        detail: Detail::None,
        labels: Vec::new(),
    }
}

/// A version 1 lockfile pinned no prompts and no instructions: what is served of them is
/// unexamined, neither approved nor proven new.
fn unpinned<'v, 'a>(served: &'v ManifestServer<'a>, out: &mut Vec<Finding<'v, 'a>>) {
    for p in &served.prompts {
        let subject = Subject::Prompt(name_of(p).to_string());
        out.push(bare(
            Policy::PromptAdded,
            Kind::Unexamined,
            &served.id,
            subject,
        ));
    }
    if served.instructions.is_some() {
        let subject = Subject::Instructions;
        out.push(bare(
            Policy::InstructionsChanged,
            Kind::Unexamined,
            &served.id,
            subject,
        ));
    }
}

fn instructions<'v, 'a>(
    id: &'v str,
    approved: Option<&'v str>,
    served: Option<&'v str>,
    out: &mut Vec<Finding<'v, 'a>>,
) {
    if approved != served {
        out.push(text_finding(
            Policy::InstructionsChanged,
            id,
            Subject::Instructions,
            approved,
            served,
            instructions_labels(approved, served),
        ));
    }
}

fn text_finding<'v, 'a>(
    policy: Policy,
    server: &'v str,
    subject: Subject,
    approved: Option<&'v str>,
    served: Option<&'v str>,
    labels: Vec<Label>,
) -> Finding<'v, 'a> {
    Finding {
        policy: Some(policy),
        kind: Kind::Violation,
        server,
        subject,
        detail: Detail::Text { approved, served },
        labels,
    }
}

#[derive(Clone, Copy)]
enum Item {
    Tool,
    Prompt,
}

impl Item {
    fn policies(self) -> [Policy; 3] {
        match self {
            Item::Tool => [Policy::ToolChanged, Policy::ToolAdded, Policy::ToolRemoved],
            Item::Prompt => [
                Policy::PromptChanged,
                Policy::PromptAdded,
                Policy::PromptRemoved,
            ],
        }
    }

    fn subject(self, name: &str) -> Subject {
        match self {
            Item::Tool => Subject::Tool(name.to_string()),
            Item::Prompt => Subject::Prompt(name.to_string()),
        }
    }

    fn labels(self, old: Option<&Value<'_>>, new: Option<&Value<'_>>) -> Vec<Label> {
        match self {
            Item::Tool => tool_labels(old, new),
            Item::Prompt => prompt_labels(old, new),
        }
    }
}

fn name_of<'v>(item: &'v Value<'_>) -> &'v str {
    // The manifest reader refuses an item without a string name.
    item.as_object()
        .and_then(|o| o.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn items<'v, 'a>(
    server: &'v str,
    item: Item,
    pins: &'v [Pin<'a>],
    served: &'v [Value<'a>],
    complete: bool,
    out: &mut Vec<Finding<'v, 'a>>,
) {
    let [changed, added, removed] = item.policies();
    let finding = |policy, kind, name: &str, detail, labels| Finding {
        policy: Some(policy),
        kind,
        server,
        subject: item.subject(name),
        detail,
        labels,
    };
    // By name, through maps: a listing of many items must not cost their square.
    let by_name: HashMap<&str, &'v Value<'a>> = served.iter().map(|s| (name_of(s), s)).collect();
    let pinned: HashSet<&str> = pins.iter().map(|p| p.name.as_str()).collect();
    for pin in pins {
        match by_name.get(pin.name.as_str()).copied() {
            Some(s) => {
                if let Some((kind, detail)) = compare_item(pin, s) {
                    // Without the approved object (version 1) there is nothing to label from.
                    let labels = match (kind, &pin.approved) {
                        (Kind::Violation, Some(approved)) => item.labels(Some(approved), Some(s)),
                        _ => Vec::new(),
                    };
                    out.push(finding(changed, kind, &pin.name, detail, labels));
                }
            }
            None if complete => {
                let approved = pin.approved.as_ref();
                let labels = item.labels(approved, None);
                out.push(finding(
                    removed,
                    Kind::Violation,
                    &pin.name,
                    Detail::Removed(approved),
                    labels,
                ));
            }
            None => out.push(finding(
                removed,
                Kind::Unseen,
                &pin.name,
                Detail::None,
                Vec::new(),
            )),
        }
    }
    for s in served {
        let name = name_of(s);
        if !pinned.contains(name) {
            let labels = item.labels(None, Some(s));
            out.push(finding(
                added,
                Kind::Violation,
                name,
                Detail::Added(s),
                labels,
            ));
        }
    }
}

/// How an approved item and the served one differ: `None` when they match.
fn compare_item<'v, 'a>(pin: &'v Pin<'a>, served: &'v Value<'a>) -> Option<(Kind, Detail<'v, 'a>)> {
    let served_digest = value_digest(served);
    match (&pin.digest, &served_digest, &pin.approved) {
        (Ok(a), Ok(s), _) if a == s => None,
        (Ok(_), Ok(_), Some(approved)) => {
            Some((Kind::Violation, Detail::Changed(diff(approved, served))))
        }
        (Ok(a), Ok(s), None) => Some((
            Kind::Violation,
            Detail::DigestMoved {
                approved: *a,
                served: *s,
            },
        )),
        (_, _, approved) => {
            if let Some(approved) = approved {
                let changes = diff(approved, served);
                if changes.iter().any(proven) {
                    return Some((Kind::Violation, Detail::Changed(changes)));
                }
            }
            let mut literals: Vec<String> = pin.digest.clone().err().unwrap_or_default();
            if let Err(u) = served_digest {
                literals.extend(u.literals.into_iter().map(|l| l.literal));
            }
            literals.sort();
            literals.dedup();
            Some((Kind::Undecidable, Detail::Undecidable(literals)))
        }
    }
}

/// Whether a difference holds whatever doubles the literals stand for: it is not two numbers one
/// of which no double identifies.
fn proven(change: &Change<'_, '_>) -> bool {
    let undecidable = |v: Option<&Value<'_>>| match v {
        Some(Value::Number(n)) => to_f64(n.literal()).is_err(),
        _ => false,
    };
    let number = |v: Option<&Value<'_>>| matches!(v, Some(Value::Number(_)));
    !(number(change.old)
        && number(change.new)
        && (undecidable(change.old) || undecidable(change.new)))
}
