//! What `verify` found, and the verdict the findings and the gate make together.

use pinlog_core::diff::Change;
use pinlog_core::exit::Exit;
use pinlog_core::labels::Label;
use pinlog_core::package::Package;
use pinlog_core::unicode::{HiddenText, NameProblem};
use pinlog_core::{Digest, Value};

use crate::policy::{Gate, Policy};

/// How sure a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// The policy is broken, and that is proven by what was read.
    Violation,
    /// A tool or prompt holds number literals no double identifies, and nothing else differs:
    /// whether it matches cannot be decided.
    Undecidable,
    /// An approved tool or prompt is missing from a capture that says it is not complete: its
    /// removal cannot be proven.
    Unseen,
    /// Something approved the manifest does not record, so it was not compared: a server outside
    /// the manifest's `scope`, prompts and instructions a version 1 lockfile never pinned, a
    /// locked package the capture does not name.
    Unexamined,
}

impl Kind {
    /// The word reports use: `VIOLATION`, `UNDECIDABLE`, `UNSEEN`, `UNEXAMINED` (upper case in
    /// text, lower case in JSON).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Violation => "violation",
            Kind::Undecidable => "undecidable",
            Kind::Unseen => "unseen",
            Kind::Unexamined => "unexamined",
        }
    }
}

/// What a finding is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Subject {
    Server,
    Tool(String),
    Prompt(String),
    Instructions,
}

impl Subject {
    /// `tool`, `prompt`, `instructions` or `server`.
    pub fn kind(&self) -> &'static str {
        match self {
            Subject::Server => "server",
            Subject::Tool(_) => "tool",
            Subject::Prompt(_) => "prompt",
            Subject::Instructions => "instructions",
        }
    }

    pub fn name(&self) -> Option<&str> {
        match self {
            Subject::Tool(n) | Subject::Prompt(n) => Some(n),
            Subject::Server | Subject::Instructions => None,
        }
    }
}

/// The evidence of a finding. Values borrow from the lockfile and the manifest as read.
#[derive(Debug, Clone)]
pub enum Detail<'v, 'a> {
    /// Where the approved and the served object differ.
    Changed(Vec<Change<'v, 'a>>),
    /// A version 1 lockfile kept only the digest: the two digests.
    DigestMoved {
        approved: Digest,
        served: Digest,
    },
    /// The served object nobody approved.
    Added(&'v Value<'a>),
    /// The approved object, when the lockfile kept it.
    Removed(Option<&'v Value<'a>>),
    /// A text that moved: a reported name, a protocol revision, instructions. `None` is absent.
    Text {
        approved: Option<&'v str>,
        served: Option<&'v str>,
    },
    /// The package the lockfile pins, and the one the manifest records (`None`: it records none).
    Package {
        approved: &'v Package,
        served: Option<&'v Package>,
    },
    /// The literals that keep the comparison from being decided.
    Undecidable(Vec<String>),
    /// No further evidence (unseen, unexamined).
    None,
    /// Every server offering the tool name (equal after NFC), with its spelling there.
    Collision(Vec<(&'v str, &'v str)>),
    Hidden(Vec<HiddenText>),
    /// The scripts the name mixes.
    MixedScript(Vec<&'static str>),
    InvalidName(NameProblem),
}

/// One finding.
#[derive(Debug, Clone)]
pub struct Finding<'v, 'a> {
    /// `None` only for [`Kind::Unexamined`], which stands for every comparison policy.
    pub policy: Option<Policy>,
    pub kind: Kind,
    pub server: &'v str,
    pub subject: Subject,
    pub detail: Detail<'v, 'a>,
    /// The change labels (docs/LABELS.md), for changes, additions and removals.
    pub labels: Vec<Label>,
}

impl Finding<'_, '_> {
    /// Whether the finding bears on `policy`.
    pub fn concerns(&self, policy: Policy) -> bool {
        match self.policy {
            Some(p) => p == policy,
            None => policy.compares(),
        }
    }

    /// Whether the finding fails `gate`.
    pub fn gated(&self, gate: &Gate) -> bool {
        gate.policies().iter().any(|p| self.concerns(*p))
    }
}

/// The run's verdict. Its exit code is a contract (docs/GATE.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Every gated policy holds: exit 0.
    Pass,
    /// A gated policy is broken, proven: exit 1.
    Fail,
    /// Nothing gated was proven broken, and something gated could not be compared: exit 3.
    Partial,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Partial => "PARTIAL",
        }
    }

    pub fn exit(self) -> Exit {
        match self {
            Status::Pass => Exit::Ok,
            Status::Fail => Exit::Bad,
            Status::Partial => Exit::Undecidable,
        }
    }

    pub fn exit_code(self) -> u8 {
        self.exit().code()
    }

    /// The strongest statement the findings make about the gate: a proven departure outranks
    /// one that could not be compared, which can only hide a departure, never invent one.
    pub fn of(findings: &[Finding<'_, '_>], gate: &Gate) -> Status {
        let gated = |f: &&Finding<'_, '_>| f.gated(gate);
        if findings
            .iter()
            .filter(gated)
            .any(|f| f.kind == Kind::Violation)
        {
            Status::Fail
        } else if findings.iter().any(|f| f.gated(gate)) {
            Status::Partial
        } else {
            Status::Pass
        }
    }

    /// The status of one policy on its own, whether it gates or not.
    pub fn of_policy(findings: &[Finding<'_, '_>], policy: Policy) -> Status {
        let mine = findings.iter().filter(|f| f.concerns(policy));
        let mut status = Status::Pass;
        for f in mine {
            if f.kind == Kind::Violation {
                return Status::Fail;
            }
            status = Status::Partial;
        }
        status
    }
}
