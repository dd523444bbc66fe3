//! Whether a served surface is the approved one: the gate's comparison, for one server.

use std::collections::BTreeSet;

use pinlog_core::lockfile::Lockfile;
use pinlog_core::manifest::{Manifest, ManifestServer};
use pinlog_core::Value;
use pinlog_gate::compare::compare;
use pinlog_gate::report_text::render_findings;
use pinlog_gate::{Finding, Kind, Policy, Subject};

/// What a server serves, as the proxy read it.
#[derive(Debug, Clone, Default)]
pub struct Served {
    pub reported_name: Option<String>,
    pub protocol_version: String,
    pub instructions: Option<String>,
    pub tools: Vec<Value<'static>>,
    pub prompts: Vec<Value<'static>>,
}

impl Served {
    /// A one-server manifest of the surface under `id`, scoped to it.
    pub fn manifest(&self, id: &str) -> Manifest<'static> {
        Manifest {
            protocol_version: self.protocol_version.clone(),
            // Read once: a missing item is unseen, which the proxy also takes for drift.
            complete: false,
            captured_at: pinlog_core::clock::now(),
            captured_by: format!("pinlog-proxy/{}", env!("CARGO_PKG_VERSION")),
            scope: Some(vec![id.to_string()]),
            servers: vec![ManifestServer {
                id: id.to_string(),
                reported_name: self.reported_name.clone(),
                protocol_version: self.protocol_version.clone(),
                passes: 1,
                instructions: self.instructions.clone(),
                package: None,
                tools: self.tools.clone(),
                prompts: self.prompts.clone(),
            }],
        }
    }
}

/// How the served surface departs from the approved one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Drift {
    /// The policies broken and the change labels, as fixed tokens: safe to show anyone.
    pub labels: Vec<String>,
    /// Tools and prompts that changed or are new: what hold mode hides.
    pub tools: BTreeSet<String>,
    pub prompts: BTreeSet<String>,
    pub instructions: bool,
    /// The findings as the text report renders them: every served string rendered safe.
    pub report: String,
}

/// Compares `served` (a manifest from [`Served::manifest`]) with `approved`; `None` when it holds.
/// Protocol revisions are not compared: a client may ask for another one than was approved.
/// Anything that cannot be compared counts as drift: it is never taken for a match.
pub fn check(served: &Manifest<'_>, approved: &Lockfile<'_>) -> Option<Drift> {
    let findings: Vec<Finding<'_, '_>> = compare(served, approved)
        .into_iter()
        // Servers of a team lock other than this one are out of scope; anything else this
        // server serves that was not examined (a version 1 lock's prompts and instructions)
        // counts as drift, as something that cannot be compared always does.
        .filter(|f| !(f.kind == Kind::Unexamined && f.policy.is_none()))
        // The wire does not say what package runs (the served manifest records none): the
        // package a lock pins is enforced on the command line at launch instead.
        .filter(|f| f.policy != Some(Policy::PackageChanged))
        .filter(|f| f.policy.is_some_and(Policy::gates_by_default))
        .collect();
    if findings.is_empty() {
        return None;
    }
    let mut drift = Drift::default();
    let mut policies = BTreeSet::new();
    let mut labels = BTreeSet::new();
    for f in &findings {
        let policy = f.policy.expect("filtered above");
        policies.insert(policy.as_str());
        labels.extend(f.labels.iter().map(|l| l.as_str()));
        match (&f.subject, policy) {
            (Subject::Tool(name), Policy::ToolChanged | Policy::ToolAdded) => {
                drift.tools.insert(name.clone());
            }
            (Subject::Prompt(name), Policy::PromptChanged | Policy::PromptAdded) => {
                drift.prompts.insert(name.clone());
            }
            (_, Policy::InstructionsChanged) => drift.instructions = true,
            _ => {}
        }
    }
    drift.labels = policies
        .into_iter()
        .chain(labels)
        .map(str::to_string)
        .collect();
    drift.report = render_findings(&findings, false);
    Some(drift)
}
