//! The local gate: a served surface (a manifest) checked against an approved one (a lockfile),
//! policy by policy, with a verdict whose exit code is a contract (docs/GATE.md).

#[cfg(feature = "cli")]
pub mod cli;
pub mod commands;
pub mod compare;
pub mod finding;
pub mod inspect;
pub mod lock;
pub mod policy;
pub mod report_json;
pub mod report_sarif;
pub mod report_text;
pub mod signature;

use pinlog_core::lockfile::Lockfile;
use pinlog_core::manifest::Manifest;
use pinlog_core::Digest;

pub use finding::{Detail, Finding, Kind, Status, Subject};
pub use policy::{Gate, Policy};

/// What is known of the lockfile's signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignatureState {
    /// Checked against a pinned key.
    Verified {
        public_key_fingerprint: Digest,
        signed_at: String,
    },
    /// A signature file is present and no key was given to check it with.
    Unchecked,
    /// No signature file, and none was asked for.
    Absent,
}

/// Everything a report renders.
#[derive(Debug)]
pub struct Report<'v, 'a> {
    pub gate: Gate,
    pub lock_path: String,
    pub manifest_path: String,
    pub lock: &'v Lockfile<'a>,
    pub manifest: &'v Manifest<'a>,
    pub signature: SignatureState,
    /// Comparison findings first, then inspection findings, each in policy order.
    pub findings: Vec<Finding<'v, 'a>>,
    /// What limits the comparison, in sentences.
    pub notes: Vec<String>,
    pub status: Status,
}

/// Where the report's inputs came from, as shown to the reader.
pub struct Inputs<'p> {
    pub lock_path: &'p str,
    pub manifest_path: &'p str,
}

impl<'v, 'a> Report<'v, 'a> {
    /// Compares and inspects, and gives the verdict of `gate` over the findings.
    pub fn new(
        manifest: &'v Manifest<'a>,
        lock: &'v Lockfile<'a>,
        gate: Gate,
        signature: SignatureState,
        inputs: Inputs<'_>,
    ) -> Self {
        let mut findings = compare::compare(manifest, lock);
        findings.extend(inspect::inspect(manifest));
        let rank = |f: &Finding<'_, '_>| f.policy.map_or(0, |p| 1 + p as usize);
        findings.sort_by_key(|f| rank(f));
        let status = Status::of(&findings, &gate);
        Report {
            notes: notes(manifest, lock, &findings),
            gate,
            lock_path: inputs.lock_path.to_string(),
            manifest_path: inputs.manifest_path.to_string(),
            lock,
            manifest,
            signature,
            findings,
            status,
        }
    }

    /// The number of findings of each kind that fail the gate.
    pub fn gated_count(&self, kind: Kind) -> usize {
        self.findings
            .iter()
            .filter(|f| f.kind == kind && f.gated(&self.gate))
            .count()
    }
}

/// What a capture's readings were, in words: `complete`; `NOT complete` when something approved
/// is missing from a capture that cannot prove it removed (an unseen finding); otherwise what was
/// read, and that nothing approved is missing from it. A listing read once (as the proxy reads
/// one) is not an alarm in itself: it is incomplete only where it lacks something.
pub fn reading(manifest: &Manifest<'_>, findings: &[Finding<'_, '_>]) -> String {
    if manifest.complete {
        return "complete".to_string();
    }
    if findings.iter().any(|f| f.kind == Kind::Unseen) {
        return "NOT complete".to_string();
    }
    let once = manifest.servers.iter().all(|s| s.passes < 2);
    let tools: usize = manifest.servers.iter().map(|s| s.tools.len()).sum();
    let prompts: usize = manifest.servers.iter().map(|s| s.prompts.len()).sum();
    format!(
        "{} {tools} tool(s) and {prompts} prompt(s); nothing approved is missing from it",
        if once {
            "read once:"
        } else {
            "a listing changed between readings:"
        }
    )
}

fn notes(
    manifest: &Manifest<'_>,
    lock: &Lockfile<'_>,
    findings: &[Finding<'_, '_>],
) -> Vec<String> {
    let mut notes = Vec::new();
    if lock.schema_version == 1 {
        notes.push(
            "the lockfile is version 1: it pins tool digests only, so a changed tool is shown by \
             its two digests, and prompts and instructions were not compared; `pinlog lock` \
             writes version 2 once the surface is reviewed"
                .to_string(),
        );
    }
    // Said where it limits something: an approved item the capture lacks.
    if !manifest.complete && findings.iter().any(|f| f.kind == Kind::Unseen) {
        notes.push(
            "the capture is not complete (a listing changed between readings, or was read once): \
             an approved tool or prompt it lacks is unseen, not proven removed"
                .to_string(),
        );
    }
    if manifest.scope.is_some() {
        let outside = lock
            .servers
            .iter()
            .filter(|s| !manifest.servers.iter().any(|m| m.id == s.id))
            .count();
        if outside > 0 {
            notes.push(format!(
                "the manifest is scoped to {} server(s); {outside} approved server(s) outside it \
                 were not examined",
                manifest.servers.len()
            ));
        }
    }
    notes
}
