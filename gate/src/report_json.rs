//! The JSON report: for programs. Values are carried exactly as served (a number without a
//! canonical form keeps its literal), and the run's verdict is in it, as `status` and
//! `exit_code`, so that a reader never re-derives the rule. Its shape is versioned
//! (`schema_version`) and specified in docs/GATE.md.

use pinlog_core::json::{write_as_served, write_string};
use pinlog_core::package::Package;
use pinlog_core::Value;

use crate::finding::{Detail, Finding, Kind, Status};
use crate::policy::Policy;
use crate::{Report, SignatureState};

/// The report's own schema version.
pub const SCHEMA_VERSION: u32 = 1;

/// A compact JSON writer: a comma goes before every member or item that does not open its
/// container.
struct Json(Vec<u8>);

impl Json {
    fn sep(&mut self) {
        if !matches!(self.0.last(), Some(b'{' | b'[') | None) {
            self.0.push(b',');
        }
    }

    fn key(&mut self, name: &str) -> &mut Self {
        self.sep();
        write_string(&mut self.0, name);
        self.0.push(b':');
        self
    }

    fn item(&mut self) -> &mut Self {
        self.sep();
        self
    }

    fn str(&mut self, s: &str) {
        write_string(&mut self.0, s);
    }

    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => self.str(s),
            None => self.raw("null"),
        }
    }

    fn raw(&mut self, s: &str) {
        self.0.extend_from_slice(s.as_bytes());
    }

    fn value(&mut self, v: &Value<'_>) {
        write_as_served(v, &mut self.0);
    }

    fn package(&mut self, p: Option<&Package>) {
        match p {
            Some(p) => p.write(&mut self.0),
            None => self.raw("null"),
        }
    }

    fn strings<'s>(&mut self, items: impl IntoIterator<Item = &'s str>) {
        self.raw("[");
        for s in items {
            self.item().str(s);
        }
        self.raw("]");
    }
}

/// Renders the report as one line of JSON and a newline.
pub fn render(report: &Report<'_, '_>) -> Vec<u8> {
    render_with(report, &[])
}

/// Renders the report with `members` added at its end: each a name and its value, already JSON.
/// A reader of the report as specified skips members it does not know.
pub fn render_with(report: &Report<'_, '_>, members: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut j = Json(Vec::new());
    j.raw("{");
    j.key("schema").str("pinlog-verify-report");
    j.key("schema_version").raw(&SCHEMA_VERSION.to_string());
    j.key("status").str(report.status.as_str());
    j.key("exit_code")
        .raw(&report.status.exit_code().to_string());
    j.key("gate")
        .strings(report.gate.policies().iter().map(|p| p.as_str()));
    j.key("lockfile").raw("{");
    j.key("path").str(&report.lock_path);
    j.key("schema_version")
        .raw(&report.lock.schema_version.to_string());
    j.key("approval_serial")
        .raw(&report.lock.approval_serial.to_string());
    j.key("signature").raw("{");
    match &report.signature {
        SignatureState::Verified {
            public_key_fingerprint,
            signed_at,
        } => {
            j.key("state").str("verified");
            j.key("public_key_fingerprint")
                .str(&public_key_fingerprint.to_string());
            j.key("signed_at").str(signed_at);
        }
        SignatureState::Unchecked => j.key("state").str("unchecked"),
        SignatureState::Absent => j.key("state").str("absent"),
    }
    j.raw("}}");
    let m = report.manifest;
    j.key("manifest").raw("{");
    j.key("path").str(&report.manifest_path);
    j.key("complete")
        .raw(if m.complete { "true" } else { "false" });
    j.key("captured_at").str(&m.captured_at);
    j.key("captured_by").str(&m.captured_by);
    j.key("scope");
    match &m.scope {
        Some(scope) => j.strings(scope.iter().map(String::as_str)),
        None => j.raw("null"),
    }
    j.raw("}");
    j.key("policies").raw("[");
    for p in Policy::ALL {
        let count = |kind| {
            report
                .findings
                .iter()
                .filter(|f| f.kind == kind && f.concerns(p))
                .count()
                .to_string()
        };
        j.item().raw("{");
        j.key("policy").str(p.as_str());
        j.key("gated").raw(if report.gate.gates(p) {
            "true"
        } else {
            "false"
        });
        j.key("status")
            .str(Status::of_policy(&report.findings, p).as_str());
        for kind in [
            Kind::Violation,
            Kind::Undecidable,
            Kind::Unseen,
            Kind::Unexamined,
        ] {
            j.key(kind.as_str()).raw(&count(kind));
        }
        j.raw("}");
    }
    j.raw("]");
    j.key("findings").raw("[");
    for f in &report.findings {
        j.item();
        finding(&mut j, Some(f.gated(&report.gate)), f);
    }
    j.raw("]");
    j.key("notes")
        .strings(report.notes.iter().map(String::as_str));
    for (name, value) in members {
        j.key(name);
        j.0.extend_from_slice(value);
    }
    j.raw("}\n");
    j.0
}

/// Findings on their own, as a JSON array of the report's finding objects without `gated`, for
/// commands that report without a gate.
pub fn render_findings(findings: &[Finding<'_, '_>]) -> Vec<u8> {
    let mut j = Json(Vec::new());
    j.raw("[");
    for f in findings {
        j.item();
        finding(&mut j, None, f);
    }
    j.raw("]");
    j.0
}

fn finding(j: &mut Json, gated: Option<bool>, f: &Finding<'_, '_>) {
    j.raw("{");
    j.key("kind").str(f.kind.as_str());
    j.key("policy").opt_str(f.policy.map(Policy::as_str));
    if let Some(gated) = gated {
        j.key("gated").raw(if gated { "true" } else { "false" });
    }
    j.key("server").str(f.server);
    j.key("subject").str(f.subject.kind());
    j.key("name").opt_str(f.subject.name());
    j.key("labels").strings(f.labels.iter().map(|l| l.as_str()));
    match &f.detail {
        Detail::Changed(changes) => {
            j.key("changes").raw("[");
            for c in changes {
                j.item().raw("{");
                j.key("pointer").str(&c.pointer.to_string());
                if let Some(old) = c.old {
                    j.key("old").value(old);
                }
                if let Some(new) = c.new {
                    j.key("new").value(new);
                }
                j.raw("}");
            }
            j.raw("]");
        }
        Detail::DigestMoved { approved, served } => {
            j.key("approved_digest").str(&approved.to_string());
            j.key("served_digest").str(&served.to_string());
        }
        Detail::Added(v) => j.key("served").value(v),
        Detail::Removed(v) => match v {
            Some(v) => j.key("approved").value(v),
            None => j.key("approved").raw("null"),
        },
        Detail::Text { approved, served } => {
            j.key("approved").opt_str(*approved);
            j.key("served").opt_str(*served);
        }
        Detail::Package { approved, served } => {
            j.key("approved").package(Some(approved));
            j.key("served").package(*served);
        }
        Detail::Undecidable(literals) => j
            .key("literals")
            .strings(literals.iter().map(String::as_str)),
        Detail::None => {}
        Detail::Collision(offers) => {
            j.key("offered_by").raw("[");
            for (server, name) in offers {
                j.item().raw("{");
                j.key("server").str(server);
                j.key("name").str(name);
                j.raw("}");
            }
            j.raw("]");
        }
        Detail::Hidden(found) => {
            j.key("hidden").raw("[");
            for h in found {
                j.item().raw("{");
                j.key("pointer").str(&h.pointer.to_string());
                j.key("in_member_name")
                    .raw(if h.in_member_name { "true" } else { "false" });
                let points: Vec<String> = h
                    .chars
                    .iter()
                    .map(|c| format!("U+{:04X}", c.code_point as u32))
                    .collect();
                j.key("code_points")
                    .strings(points.iter().map(String::as_str));
                j.key("tag_messages")
                    .strings(h.tag_messages.iter().map(|m| m.text.as_str()));
                j.raw("}");
            }
            j.raw("]");
        }
        Detail::MixedScript(scripts) => j.key("scripts").strings(scripts.iter().copied()),
        Detail::InvalidName(problem) => j.key("problem").str(&problem.to_string()),
    }
    j.raw("}");
}
