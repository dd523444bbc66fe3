//! What `pinlog pins`, `review`, `approve`, `forget` and `audit` print, so that the CLI only
//! parses arguments, opens the store and exits with [`CommandError::exit`].
//!
//! A server is named by its key, a unique prefix of it (6 hex digits or more), or its label when
//! no other server has it. Labels and tool names come from outside: they are always rendered safe.

use std::borrow::Cow;
use std::fmt::{self, Write};

use pinlog_core::exit::{Exit, Failure};
use pinlog_core::manifest::Manifest;
use pinlog_core::render::{quoted, safe, safe_ascii};
use pinlog_gate::report_text::render;
use pinlog_gate::{Gate, Inputs, Report, SignatureState};

use crate::approvers::Approvers;
use crate::confirm::{ChangeId, Refusal};
use crate::store::{PinStoreError, Pinned, ServerKey, Store};

/// Why a command failed.
#[derive(Debug)]
pub enum CommandError {
    /// The server named matches none, or several; or approvals here come only from a signed
    /// lockfile.
    Usage(String),
    /// The person did not confirm what was shown: nothing was done (what, in words).
    NotConfirmed(Refusal, &'static str),
    /// A setting in the pinlog home cannot be read, or the terminal written.
    Io(String),
    Store(PinStoreError),
}

impl CommandError {
    /// 2 for a server that cannot be found from what was given (or an approval this machine
    /// takes only from a signed lockfile), 1 when the local log does not verify (a departure
    /// proven) or an approval was not confirmed (or what was shown changed meanwhile), 4 when
    /// the store or a setting cannot be read, or the store written.
    pub fn exit(&self) -> Exit {
        match self {
            CommandError::Usage(_) => Exit::Usage,
            CommandError::NotConfirmed(..) => Exit::Bad,
            CommandError::Io(_) => Exit::Unreadable,
            CommandError::Store(PinStoreError::Audit { .. } | PinStoreError::Replaced(_)) => {
                Exit::Bad
            }
            CommandError::Store(_) => Exit::Unreadable,
        }
    }
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandError::Usage(why) | CommandError::Io(why) => f.write_str(why),
            CommandError::NotConfirmed(r, nothing) => write!(f, "{r}: {nothing}"),
            CommandError::Store(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for CommandError {}

impl From<CommandError> for Failure {
    fn from(e: CommandError) -> Self {
        Failure::new(e.exit(), e.to_string())
    }
}

impl From<PinStoreError> for CommandError {
    fn from(e: PinStoreError) -> Self {
        CommandError::Store(e)
    }
}

fn show(s: &str, ascii: bool) -> Cow<'_, str> {
    if ascii {
        safe_ascii(s)
    } else {
        safe(s)
    }
}

/// The key of the server `given` names: its key, a unique key prefix, or a unique label.
pub fn resolve(store: &Store, given: &str) -> Result<ServerKey, CommandError> {
    let keys = store.keys()?;
    let ids = |matches: &[&(ServerKey, String)]| {
        let ids: Vec<&str> = matches.iter().map(|(k, _)| k.as_str()).collect();
        ids.join(", ")
    };
    if let Some((k, _)) = keys.iter().find(|(k, _)| k.as_str() == given) {
        return Ok(k.clone());
    }
    // A prefix is hex digits only, so it is safe to print as given.
    let hex = given.len() >= 6 && given.bytes().all(|b| b.is_ascii_hexdigit());
    let prefix = given.to_ascii_lowercase();
    let by_prefix: Vec<_> = keys
        .iter()
        .filter(|(k, _)| hex && k.as_str().starts_with(&prefix))
        .collect();
    let by_label: Vec<_> = keys.iter().filter(|(_, l)| l == given).collect();
    match (by_prefix.as_slice(), by_label.as_slice()) {
        ([one], _) | ([], [one]) => Ok(one.0.clone()),
        ([], []) => Err(CommandError::Usage(format!(
            "no pinned server has the id, an id starting with, or the label {}; \
             `pinlog pins` lists them",
            quoted(given, 64)
        ))),
        ([], several) => Err(CommandError::Usage(format!(
            "several pinned servers have the label {}: give one of their ids ({})",
            quoted(given, 64),
            ids(several)
        ))),
        (several, _) => Err(CommandError::Usage(format!(
            "several pinned servers have ids starting with {given}: {}; give more digits",
            ids(several)
        ))),
    }
}

/// One line for a server, and one more when something is pending. Everything read from the
/// store is rendered safe: a row may have been edited.
fn line(out: &mut String, key: &ServerKey, p: &Pinned, ascii: bool) {
    let _ = writeln!(
        out,
        "{key}  \"{}\"  {} tool(s), {} prompt(s), approval {}, pinned {}",
        show(&p.label, ascii),
        p.tools,
        p.prompts,
        p.serial,
        show(&p.pinned_at, ascii)
    );
    if let Some(pending) = &p.pending {
        let _ = writeln!(
            out,
            "    PENDING since {}: {}; review with `pinlog review {key}`",
            show(&pending.at, ascii),
            show(&pending.labels.join(", "), ascii)
        );
    }
}

/// `pinlog pins [--server ID]`: every pin, one line each; with a server, its line and the review
/// of what is pending.
pub fn pins(store: &Store, server: Option<&str>, ascii: bool) -> Result<String, CommandError> {
    let mut out = String::new();
    match server {
        None => {
            let all = store.list()?;
            if all.is_empty() {
                out.push_str(
                    "no server is pinned yet: the proxy pins a server the first time it runs it\n",
                );
            }
            for (key, p) in &all {
                line(&mut out, key, p, ascii);
            }
        }
        Some(given) => {
            let key = resolve(store, given)?;
            let p = pinned(store, &key)?;
            line(&mut out, &key, &p, ascii);
            if p.pending.is_some() {
                out.push('\n');
                out.push_str(&review_of(&key, &p, ascii)?.0);
                out.push_str(&how_to_approve(&key));
            }
        }
    }
    Ok(out)
}

fn pinned(store: &Store, key: &ServerKey) -> Result<Pinned, CommandError> {
    store.pinned(key)?.ok_or_else(|| {
        CommandError::Usage(format!("{key} is not pinned (it was forgotten meanwhile)"))
    })
}

/// The gate's text report of the pending surface against the pin, and its exit code.
fn review_of(key: &ServerKey, p: &Pinned, ascii: bool) -> Result<(String, Exit), CommandError> {
    let label = show(&p.label, ascii);
    let Some(pending) = &p.pending else {
        let text =
            format!("\"{label}\" ({key}) last served what was approved: nothing to review\n");
        return Ok((text, Exit::Ok));
    };
    let lock = p.lock()?;
    let manifest =
        Manifest::read(&pending.manifest).map_err(|e| PinStoreError::Refused(e.to_string()))?;
    let lock_path = format!("the pin of \"{label}\" ({key})");
    let manifest_path = format!("the surface it served at {}", pending.at);
    // Both paths are rendered safe by the report.
    let inputs = Inputs {
        lock_path: &lock_path,
        manifest_path: &manifest_path,
    };
    let report = Report::new(
        &manifest,
        &lock,
        Gate::default(),
        SignatureState::Absent,
        inputs,
    );
    Ok((render(&report, ascii), report.status.exit()))
}

fn how_to_approve(key: &ServerKey) -> String {
    format!(
        "\napprove all of it with `pinlog approve {key}`, or only some tools with \
         `pinlog approve {key} TOOL…`; `pinlog forget {key}` drops the pin\n"
    )
}

/// `pinlog review ID`: field by field, what the server served against what was approved, every
/// served string rendered safe. The exit code is the gate's (0 when nothing is pending).
pub fn review(store: &Store, given: &str, ascii: bool) -> Result<(String, Exit), CommandError> {
    let key = resolve(store, given)?;
    let p = pinned(store, &key)?;
    let (mut text, exit) = review_of(&key, &p, ascii)?;
    if p.pending.is_some() {
        text.push_str(&how_to_approve(&key));
    }
    Ok((text, exit))
}

/// `pinlog approve` refuses, `--yes` or not, where approvals come only from a lockfile an
/// approver signed (crate::approvers).
fn approvals_here(store: &Store) -> Result<(), CommandError> {
    match Approvers::from_home(store.home_dir()) {
        Ok(None) => Ok(()),
        Ok(Some(a)) => Err(CommandError::Usage(format!(
            "approvals on this machine come only from a lockfile signed by an approver key ({}, \
             naming {}): approve by locking the served surface again (`pinlog lock`), signing the \
             lockfile (`pinlog sign`) and running the proxy with --lock; nothing approved",
            a.path().display(),
            a.fingerprints().join(", ")
        ))),
        Err(why) => Err(CommandError::Io(format!(
            "{why}; it names who may approve, so nothing is approved"
        ))),
    }
}

/// What `pinlog approve` shows a person before approving: the change and the code that
/// confirms it. Only [`Proposal::confirm`] with that code makes it something to approve.
#[derive(Debug)]
pub struct Proposal {
    key: ServerKey,
    tools: Vec<String>,
    change: ChangeId,
    what: String,
    /// The change: its labels and the review, field by field, every served string safe.
    pub shown: String,
    /// The question, with the code.
    pub prompt: String,
}

/// A proposal the person confirmed by typing its code.
#[derive(Debug)]
pub struct Confirmed(Proposal);

impl Proposal {
    /// `answer` is one line as read from the terminal (empty when the input ended): the code
    /// shown, or nothing is approved.
    pub fn confirm(self, answer: &[u8]) -> Result<Confirmed, CommandError> {
        self.change
            .confirm(answer)
            .map_err(|r| CommandError::NotConfirmed(r, "nothing approved"))?;
        Ok(Confirmed(self))
    }
}

/// What is approved, in words: every pending change, or the tools named.
fn what(key: &ServerKey, label: &str, tools: &[String], ascii: bool) -> String {
    let what = match tools.is_empty() {
        true => "every pending change".to_string(),
        false => {
            let names: Vec<_> = tools
                .iter()
                .map(|t| format!("\"{}\"", show(t, ascii)))
                .collect();
            format!("the tool(s) {}", names.join(", "))
        }
    };
    format!("{what} of \"{}\" ({key})", show(label, ascii))
}

/// `pinlog approve ID [TOOL…]` on a terminal, first half: the change and the code to type.
pub fn propose(
    store: &Store,
    given: &str,
    tools: &[String],
    ascii: bool,
) -> Result<Proposal, CommandError> {
    approvals_here(store)?;
    let key = resolve(store, given)?;
    let p = pinned(store, &key)?;
    let Some(pending) = &p.pending else {
        return Err(PinStoreError::Refused(format!(
            "nothing is pending for {key}: it last served what was approved"
        ))
        .into());
    };
    let change = ChangeId::of(&key, &p, tools).expect("something is pending");
    let mut shown = format!(
        "\"{}\" ({key}) changed since it was approved: {}\n\n",
        show(&p.label, ascii),
        show(&pending.labels.join(", "), ascii)
    );
    shown.push_str(&review_of(&key, &p, ascii)?.0);
    let what = what(&key, &p.label, tools, ascii);
    Ok(Proposal {
        prompt: change.prompt(&format!("approve {what}")),
        key,
        tools: tools.to_vec(),
        change,
        what,
        shown,
    })
}

/// `pinlog approve ID [TOOL…]` on a terminal, second half: approves what was shown and
/// confirmed, if it is still what is pending (exit 1 otherwise).
pub fn approve_confirmed(store: &Store, confirmed: Confirmed) -> Result<String, CommandError> {
    let Confirmed(p) = confirmed;
    approvals_here(store)?;
    let done = store.approve_shown(&p.key, &p.tools, &p.change)?;
    Ok(approved(&p.key, &p.what, &done))
}

/// `pinlog approve ID [TOOL…] --yes`: approves what is pending when it runs, unseen (for scripts
/// a person runs).
pub fn approve(
    store: &Store,
    given: &str,
    tools: &[String],
    ascii: bool,
) -> Result<String, CommandError> {
    approvals_here(store)?;
    let key = resolve(store, given)?;
    let p = pinned(store, &key)?;
    let done = store.approve(&key, tools)?;
    Ok(approved(&key, &what(&key, &p.label, tools, ascii), &done))
}

fn approved(key: &ServerKey, what: &str, done: &crate::store::Approved) -> String {
    let mut out = format!("approved {what}: approval {}\n", done.serial);
    if let Some(labels) = &done.pending {
        let _ = writeln!(
            out,
            "still pending: {}; `pinlog review {key}` shows it",
            safe(&labels.join(", "))
        );
    }
    out
}

/// `pinlog forget ID`.
pub fn forget(store: &Store, given: &str, ascii: bool) -> Result<String, CommandError> {
    let key = resolve(store, given)?;
    let Some(label) = store.forget(&key, None)? else {
        return Err(CommandError::Usage(format!(
            "{key} is not pinned (it was forgotten meanwhile)"
        )));
    };
    Ok(forgot(&key, &label, ascii))
}

fn forgot(key: &ServerKey, label: &str, ascii: bool) -> String {
    format!(
        "forgot \"{}\" ({key}): the next time it runs, the proxy pins what it serves then\n",
        show(label, ascii)
    )
}

/// What `pinlog forget` shows a person first: what is forgotten, what that means, and the code
/// that confirms it. Forgetting is an approval of whatever the server serves next, unseen, so it
/// is asked for as an approval is.
#[derive(Debug)]
pub struct ForgetProposal {
    key: ServerKey,
    change: ChangeId,
    /// What is forgotten, every served string safe.
    pub shown: String,
    /// The question, with the code.
    pub prompt: String,
}

/// A forget the person confirmed by typing its code.
#[derive(Debug)]
pub struct ConfirmedForget(ForgetProposal);

impl ForgetProposal {
    /// `answer` is one line as read from the terminal: the code shown, or nothing is forgotten.
    pub fn confirm(self, answer: &[u8]) -> Result<ConfirmedForget, CommandError> {
        self.change
            .confirm(answer)
            .map_err(|r| CommandError::NotConfirmed(r, "nothing forgotten"))?;
        Ok(ConfirmedForget(self))
    }
}

/// `pinlog forget ID` on a terminal, first half: what is forgotten and the code to type.
pub fn propose_forget(
    store: &Store,
    given: &str,
    ascii: bool,
) -> Result<ForgetProposal, CommandError> {
    let key = resolve(store, given)?;
    let p = pinned(store, &key)?;
    let change = ChangeId::forgetting(&key, &p);
    let label = show(&p.label, ascii);
    let pending = match &p.pending {
        Some(pending) => format!(
            "; a change is pending ({}), and the next session would pin it unseen",
            show(&pending.labels.join(", "), ascii)
        ),
        None => String::new(),
    };
    let shown = format!(
        "\"{label}\" ({key}) is pinned: {} tool(s), {} prompt(s), approval {}{pending}.\n         Forgetting it means the next session pins whatever the server serves then, unseen: it \
         is an approval.\n",
        p.tools, p.prompts, p.serial
    );
    Ok(ForgetProposal {
        prompt: change.prompt(&format!("forget \"{label}\" ({key})")),
        key,
        change,
        shown,
    })
}

/// `pinlog forget ID` on a terminal, second half: forgets the pin that was shown, if it is still
/// the pin (exit 1 otherwise).
pub fn forget_confirmed(
    store: &Store,
    confirmed: ConfirmedForget,
    ascii: bool,
) -> Result<String, CommandError> {
    let ConfirmedForget(p) = confirmed;
    match store.forget(&p.key, Some(&p.change))? {
        Some(label) => Ok(forgot(&p.key, &label, ascii)),
        None => Err(CommandError::Usage(format!(
            "{} is not pinned (it was forgotten meanwhile)",
            p.key
        ))),
    }
}

/// `pinlog audit`: the local log verifies, and every pin is the one it last recorded.
pub fn audit(store: &Store) -> Result<String, CommandError> {
    let a = store.audit()?;
    Ok(format!(
        "the local log verifies: {} event(s), root {}; {} pin(s) agree with it\n",
        a.events, a.root, a.pins
    ))
}
