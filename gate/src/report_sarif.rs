//! The SARIF 2.1.0 report: for code scanning. One rule per policy (its token is the rule id, a
//! contract) and one for servers left unexamined; one result per finding, located in the
//! lockfile (the file a repository commits) at the server or item it concerns, with the server,
//! tool or prompt as a logical location. Messages are the text report's lines, rendered safe:
//! a code-scanning page obeys what it is shown as much as a terminal does.

use pinlog_core::json::write_string;
use pinlog_core::render::safe;
use pinlog_core::Digest;

use crate::finding::{Finding, Kind, Subject};
use crate::policy::Policy;
use crate::report_text::finding_body;
use crate::Report;

/// The rule for an approved server outside the manifest's scope.
pub const UNEXAMINED_RULE: &str = "unexamined";

fn default_level(p: Policy) -> &'static str {
    if p.gates_by_default() {
        "error"
    } else if p.compares() {
        "note"
    } else {
        "warning"
    }
}

struct Out(Vec<u8>);

impl Out {
    fn raw(&mut self, s: &str) -> &mut Self {
        self.0.extend_from_slice(s.as_bytes());
        self
    }

    fn str(&mut self, s: &str) -> &mut Self {
        write_string(&mut self.0, s);
        self
    }
}

/// `path` as a relative URI reference: every byte outside the unreserved set and `/` escaped.
fn uri(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The 1-based line of the lockfile where the finding's server (and item or package, when it is
/// there) is written; 1 when neither is found.
fn line_of(lock_text: &str, f: &Finding<'_, '_>) -> usize {
    let quoted = |s: &str| {
        let mut out = Vec::new();
        write_string(&mut out, s);
        String::from_utf8(out).expect("the writer writes UTF-8")
    };
    let Some(server_at) = lock_text.find(&format!("\"id\": {}", quoted(f.server))) else {
        return 1;
    };
    let mut at = server_at;
    let member = match (f.subject.name(), f.policy) {
        (Some(name), _) => Some(format!("\"name\": {}", quoted(name))),
        (None, Some(Policy::PackageChanged)) => Some("\"package\": ".to_string()),
        (None, _) => None,
    };
    if let Some(member) = member {
        let next_server = lock_text[server_at + 1..]
            .find("\"id\": ")
            .map_or(lock_text.len(), |n| server_at + 1 + n);
        if let Some(n) = lock_text[server_at..next_server].find(&member) {
            at = server_at + n;
        }
    }
    1 + lock_text[..at].bytes().filter(|b| *b == b'\n').count()
}

/// Renders the report. `lock_text` is the lockfile as read, to place results on lines.
pub fn render(report: &Report<'_, '_>, lock_text: &str) -> Vec<u8> {
    let mut o = Out(Vec::new());
    o.raw("{\"$schema\":\"https://json.schemastore.org/sarif-2.1.0.json\",\"version\":\"2.1.0\",\"runs\":[{");
    o.raw("\"tool\":{\"driver\":{\"name\":\"pinlog\",\"semanticVersion\":")
        .str(env!("CARGO_PKG_VERSION"))
        .raw(",\"informationUri\":\"https://github.com/pinlog/pinlog/blob/main/docs/GATE.md\",\"rules\":[");
    for (i, p) in Policy::ALL.into_iter().enumerate() {
        if i > 0 {
            o.raw(",");
        }
        rule(&mut o, p.as_str(), p.summary(), default_level(p));
    }
    o.raw(",");
    rule(
        &mut o,
        UNEXAMINED_RULE,
        "an approved server lies outside the manifest's scope, so nothing about it was compared",
        "warning",
    );
    o.raw("]}},");
    o.raw("\"invocations\":[{\"executionSuccessful\":true,\"exitCode\":")
        .raw(&report.status.exit_code().to_string())
        .raw("}],");
    o.raw("\"properties\":{\"status\":")
        .str(report.status.as_str())
        .raw("},");
    o.raw("\"results\":[");
    for (i, f) in report.findings.iter().enumerate() {
        if i > 0 {
            o.raw(",");
        }
        result(&mut o, report, f, lock_text);
    }
    o.raw("]}]}\n");
    o.0
}

/// What a reviewer does about a finding of the rule.
fn help(id: &str) -> &'static str {
    match Policy::from_token(id) {
        Some(Policy::PackageChanged) => {
            "Compare the two packages in the text report. If the new version or digest is \
             approved (review what changed in the package itself: its tools may read the same and \
             do otherwise), run `pinlog lock` on a manifest that records it and commit the \
             lockfile; otherwise run the approved version again. A capture that records no \
             package cannot be compared with one that is locked."
        }
        Some(p) if p.compares() => {
            "Review the change in the text report (`pinlog verify`), which shows each changed JSON \
             pointer with the approved and the served value. If the new surface is approved, run \
             `pinlog lock` and commit the lockfile; otherwise find out why the server changed."
        }
        Some(_) => {
            "Look at the named tool or prompt in the text report, which writes every hidden or \
             unusual character as <U+XXXX>. The finding describes the served surface, whatever \
             was approved."
        }
        None => {
            "Capture every server the lockfile approves (export without -server), or accept that \
             the servers outside the scope were not checked."
        }
    }
}

/// GitHub code scanning's `security-severity` (0.1–10): how much a finding of the rule can
/// change what an agent is told. A fixed classification of the rule, never of the text.
fn security_severity(id: &str) -> &'static str {
    match Policy::from_token(id) {
        Some(Policy::ToolChanged | Policy::InstructionsChanged | Policy::HiddenCharacters) => "8.0",
        // Another package is other code running under the approval, whatever it describes.
        Some(
            Policy::ToolAdded
            | Policy::PromptChanged
            | Policy::PromptAdded
            | Policy::PackageChanged,
        ) => "7.0",
        Some(Policy::ServerRenamed | Policy::NameCollision | Policy::MixedScriptName) => "5.0",
        Some(Policy::ToolRemoved | Policy::PromptRemoved) | None => "4.0",
        Some(Policy::ProtocolChanged | Policy::InvalidToolName) => "2.0",
    }
}

fn rule(o: &mut Out, id: &str, summary: &str, level: &str) {
    o.raw("{\"id\":").str(id);
    o.raw(",\"shortDescription\":{\"text\":").str(summary);
    o.raw("},\"fullDescription\":{\"text\":")
        .str(&format!("{id}: {summary}."));
    o.raw("},\"help\":{\"text\":").str(help(id));
    o.raw("},\"helpUri\":").str(&format!(
        "https://github.com/pinlog/pinlog/blob/main/docs/GATE.md#{id}"
    ));
    o.raw(",\"defaultConfiguration\":{\"level\":").str(level);
    o.raw("},\"properties\":{\"tags\":[\"security\",\"mcp\"],\"precision\":\"very-high\",\"security-severity\":")
        .str(security_severity(id))
        .raw("}}");
}

fn result(o: &mut Out, report: &Report<'_, '_>, f: &Finding<'_, '_>, lock_text: &str) {
    let (rule_id, rule_index) = match f.policy {
        Some(p) => (p.as_str(), p as usize),
        None => (UNEXAMINED_RULE, Policy::ALL.len()),
    };
    let gated = f.gated(&report.gate);
    // Only a proven violation is a failure; what could not be compared is a warning when it
    // holds the gate up, as it does the exit code.
    let level = match (f.kind, gated) {
        (Kind::Violation, true) => "error",
        (Kind::Violation, false) => f.policy.map_or("warning", default_level),
        (_, true) => "warning",
        (_, false) => "note",
    };
    let level = if level == "error" && !gated {
        "warning"
    } else {
        level
    };
    let mut message = format!(
        "{}{}\n",
        f.kind.as_str().to_uppercase(),
        f.policy.map_or(String::new(), |p| format!(" {p}"))
    );
    message.push_str(&finding_body(f, false));
    o.raw("{\"ruleId\":").str(rule_id);
    o.raw(",\"ruleIndex\":").raw(&rule_index.to_string());
    o.raw(",\"level\":").str(level);
    o.raw(",\"message\":{\"text\":").str(message.trim_end());
    o.raw("},\"locations\":[{\"physicalLocation\":{\"artifactLocation\":{\"uri\":")
        .str(&uri(&report.lock_path));
    o.raw("},\"region\":{\"startLine\":")
        .raw(&line_of(lock_text, f).to_string());
    o.raw("}},\"logicalLocations\":[");
    let server = safe(f.server);
    match (&f.subject, f.subject.name()) {
        (_, Some(name)) => {
            let kind = if matches!(f.subject, Subject::Tool(_)) {
                "function"
            } else {
                "member"
            };
            let name = safe(name);
            o.raw("{\"name\":").str(&name);
            o.raw(",\"fullyQualifiedName\":")
                .str(&format!("{server}/{name}"));
            o.raw(",\"kind\":").str(kind).raw("}");
        }
        (Subject::Instructions, None) => {
            o.raw("{\"name\":\"instructions\",\"fullyQualifiedName\":")
                .str(&format!("{server}/instructions"))
                .raw(",\"kind\":\"text\"}");
        }
        _ => {
            o.raw("{\"name\":")
                .str(&server)
                .raw(",\"kind\":\"module\"}");
        }
    }
    o.raw("]}]");
    // Stable across runs, so that code scanning tracks one alert per finding.
    let identity = format!(
        "{rule_id}\n{}\n{}\n{}",
        f.server,
        f.subject.kind(),
        f.subject.name().unwrap_or_default()
    );
    o.raw(",\"partialFingerprints\":{\"pinlogFinding/v1\":")
        .str(&Digest::of(identity.as_bytes()).hex());
    o.raw("},\"properties\":{\"kind\":").str(f.kind.as_str());
    o.raw(",\"gated\":")
        .raw(if gated { "true" } else { "false" });
    o.raw(",\"labels\":[");
    for (i, l) in f.labels.iter().enumerate() {
        if i > 0 {
            o.raw(",");
        }
        o.str(l.as_str());
    }
    o.raw("]}}");
}
