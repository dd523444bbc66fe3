//! The text report: for people and CI logs. Every string from the lockfile or the manifest is
//! rendered safe (`<U+XXXX>` for what a terminal would hide or obey), so the report cannot be
//! edited by what it reports on.

use std::borrow::Cow;
use std::fmt::Write;

use pinlog_core::json::write_as_served;
use pinlog_core::package::Package;
use pinlog_core::render::{safe, safe_ascii};
use pinlog_core::unicode::HiddenText;
use pinlog_core::Value;

use crate::finding::{Detail, Finding, Kind, Status, Subject};
use crate::policy::Policy;
use crate::{Report, SignatureState};

/// The longest value shown in a diff line, in characters; the JSON report has it whole.
const MAX_SHOWN: usize = 2000;

struct Text {
    ascii: bool,
}

impl Text {
    fn safe<'s>(&self, s: &'s str) -> Cow<'s, str> {
        if self.ascii {
            safe_ascii(s)
        } else {
            safe(s)
        }
    }

    /// A name, quoted when it is not plain, so that an empty or spaced name is still visible.
    fn name(&self, s: &str) -> String {
        let plain = !s.is_empty() && s.bytes().all(|b| b.is_ascii_graphic() && b != b'"');
        match plain {
            true => s.to_string(),
            false => format!("\"{}\"", self.safe(s)),
        }
    }

    /// A value on a diff line: a string as its text, anything else as JSON; cut when long.
    fn value(&self, v: &Value<'_>, as_text: bool) -> String {
        let raw: Cow<'_, str> = match v {
            Value::String(s) if as_text => Cow::Borrowed(s),
            _ => {
                let mut out = Vec::new();
                write_as_served(v, &mut out);
                Cow::Owned(String::from_utf8(out).expect("the writer writes UTF-8"))
            }
        };
        let total = raw.chars().count();
        if total <= MAX_SHOWN {
            return self.safe(&raw).into_owned();
        }
        let cut: String = raw.chars().take(MAX_SHOWN).collect();
        format!(
            "{}… ({} more characters; -format json has the whole value)",
            self.safe(&cut),
            total - MAX_SHOWN
        )
    }

    /// A package as `registry:name@version` and its registry digest, when recorded.
    fn package(&self, p: &Package) -> String {
        let digest = p
            .digest
            .as_deref()
            .map_or("(no digest)".into(), |d| self.safe(d));
        format!("{} {digest}", self.safe(&p.to_string()))
    }

    fn subject(&self, s: &Subject) -> String {
        match s {
            Subject::Tool(n) => format!("tool {}", self.name(n)),
            Subject::Prompt(n) => format!("prompt {}", self.name(n)),
            Subject::Instructions => "the instructions".to_string(),
            Subject::Server => "the server".to_string(),
        }
    }
}

/// Renders the report. `ascii` writes every non-ASCII character as `<U+XXXX>` too.
pub fn render(report: &Report<'_, '_>, ascii: bool) -> String {
    let t = Text { ascii };
    let mut out = String::new();
    for f in &report.findings {
        finding(&t, report, f, &mut out);
        out.push('\n');
    }
    summary(&t, report, &mut out);
    out
}

fn finding(t: &Text, report: &Report<'_, '_>, f: &Finding<'_, '_>, out: &mut String) {
    let policy = f.policy.map_or(String::new(), |p| format!(" {p}"));
    let gated = if f.gated(&report.gate) {
        ""
    } else {
        " (not gated)"
    };
    let _ = writeln!(out, "{}{policy}{gated}", f.kind.as_str().to_uppercase());
    body(t, f, out);
}

/// What one finding says, without its headline: indented lines, each ending in a newline,
/// every string from outside rendered safe.
pub fn finding_body(f: &Finding<'_, '_>, ascii: bool) -> String {
    let mut out = String::new();
    body(&Text { ascii }, f, &mut out);
    out
}

/// Renders findings on their own, headline and body, for commands that report without a gate.
pub fn render_findings(findings: &[Finding<'_, '_>], ascii: bool) -> String {
    let t = Text { ascii };
    let mut out = String::new();
    for f in findings {
        let policy = f.policy.map_or(String::new(), |p| format!(" {p}"));
        let _ = writeln!(out, "{}{policy}", f.kind.as_str().to_uppercase());
        body(&t, f, &mut out);
    }
    out
}

fn body(t: &Text, f: &Finding<'_, '_>, out: &mut String) {
    let server = t.name(f.server);
    let what = t.subject(&f.subject);
    let line = |out: &mut String, text: String| {
        let _ = writeln!(out, "  {text}");
    };
    match &f.detail {
        Detail::Changed(changes) => {
            line(out, format!("{server}: {what} changed since approval, in {} place(s)", changes.len()));
            for c in changes {
                let _ = writeln!(out, "    {}", t.safe(&c.pointer.to_string()));
                let as_text = [c.old, c.new].iter().all(|v| matches!(v, None | Some(Value::String(_))));
                if let Some(old) = c.old {
                    let _ = writeln!(out, "    - {}", t.value(old, as_text));
                }
                if let Some(new) = c.new {
                    let _ = writeln!(out, "    + {}", t.value(new, as_text));
                }
            }
        }
        Detail::DigestMoved { approved, served } => {
            line(out, format!("{server}: {what} changed since approval (a version 1 lockfile keeps digests only)"));
            let _ = writeln!(out, "    - {approved}\n    + {served}");
        }
        Detail::Added(v) => {
            let kind = f.subject.kind();
            line(out, format!("{server}: {what} is offered, and no {kind} of that name was approved"));
            let _ = writeln!(out, "    + {}", t.value(v, false));
        }
        Detail::Removed(_) => line(out, format!("{server}: {what} was approved and is no longer offered")),
        Detail::Text { approved, served } => {
            let say = |s: &Option<&str>| s.map_or("(none)".to_string(), |s| t.value(&Value::String(s.into()), true));
            let headline = match f.policy {
                Some(Policy::ServerRenamed) => "reports another name than when it was approved",
                Some(Policy::ProtocolChanged) => "negotiated another protocol revision than it was approved over",
                _ => "gives other instructions than were approved",
            };
            line(out, format!("{server}: {headline}"));
            let _ = writeln!(out, "    - {}\n    + {}", say(approved), say(served));
        }
        Detail::Package { approved, served: Some(served) } if f.kind == Kind::Violation => {
            line(out, format!("{server}: runs another package than was approved"));
            let _ = writeln!(out, "    - {}\n    + {}", t.package(approved), t.package(served));
        }
        Detail::Package { approved, served: Some(served) } => {
            let missing: Vec<&str> = [
                (approved.version.is_some() && served.version.is_none(), "version"),
                (approved.digest.is_some() && served.digest.is_none(), "registry digest"),
            ]
            .into_iter()
            .filter_map(|(missing, what)| missing.then_some(what))
            .collect();
            line(
                out,
                format!(
                    "{server}: the lockfile pins {}, and the manifest records {} without its {}: \
                     the package was not compared",
                    t.package(approved),
                    t.package(served),
                    missing.join(" or ")
                ),
            )
        }
        Detail::Package { approved, served: None } => line(
            out,
            format!(
                "{server}: the lockfile pins {}, and the manifest does not record what the server \
                 runs: the package was not compared",
                t.package(approved)
            ),
        ),
        Detail::Undecidable(literals) => line(
            out,
            format!(
                "{server}: {what} holds number literals no double identifies ({}), and nothing \
                 else differs: it cannot be compared, and is never reported as matching",
                t.safe(&literals.join(", "))
            ),
        ),
        Detail::None if f.kind == Kind::Unexamined && f.subject == Subject::Server => line(
            out,
            format!("{server}: approved, and outside the manifest's scope: nothing about it was compared"),
        ),
        Detail::None if f.kind == Kind::Unexamined => line(
            out,
            format!(
                "{server}: {what} is served, and the version 1 lockfile does not pin it: it was \
                 not compared (lock again, after review, to pin it)"
            ),
        ),
        Detail::None => line(
            out,
            format!("{server}: {what}, approved, is missing from a capture that is not complete: its removal cannot be proven"),
        ),
        Detail::Collision(offers) => {
            let by: Vec<String> = offers.iter().map(|(s, n)| format!("{} ({})", t.name(s), t.name(n))).collect();
            line(out, format!("{what} is offered by several servers: {}", by.join(", ")));
        }
        Detail::Hidden(found) => {
            for h in found {
                line(out, format!("{server}: {what}: {}", hidden(t, h)));
            }
        }
        Detail::MixedScript(scripts) => {
            line(out, format!("{server}: the name of {what} mixes writing systems: {}", scripts.join(", ")))
        }
        Detail::InvalidName(problem) => line(out, format!("{server}: {what}: {problem}")),
    }
    if !f.labels.is_empty() {
        let labels: Vec<&str> = f.labels.iter().map(|l| l.as_str()).collect();
        let _ = writeln!(out, "    labels: {}", labels.join(", "));
    }
}

fn hidden(t: &Text, h: &HiddenText) -> String {
    let pointer = h.pointer.to_string();
    let place = if pointer.is_empty() {
        "the text".to_string()
    } else {
        format!("the text at {}", t.safe(&pointer))
    };
    let place = if h.in_member_name {
        format!("the member name at {}", t.safe(&pointer))
    } else {
        place
    };
    let mut chars: Vec<String> = h
        .chars
        .iter()
        .map(|c| format!("U+{:04X}", c.code_point as u32))
        .collect();
    chars.dedup();
    let mut s = format!(
        "{place} carries characters that occupy no visible space: {}",
        chars.join(" ")
    );
    for m in &h.tag_messages {
        let _ = write!(s, "; tag characters spell \"{}\"", t.safe(&m.text));
    }
    s
}

fn summary(t: &Text, report: &Report<'_, '_>, out: &mut String) {
    for note in &report.notes {
        let _ = writeln!(out, "note: {note}");
    }
    let _ = writeln!(
        out,
        "lockfile: {} (version {}, approval {}); {}",
        t.safe(&report.lock_path),
        report.lock.schema_version,
        report.lock.approval_serial,
        match &report.signature {
            SignatureState::Verified {
                public_key_fingerprint,
                signed_at,
            } => {
                format!("signature verified (key {public_key_fingerprint}, signed {signed_at})")
            }
            SignatureState::Unchecked => {
                "a signature is present and was NOT checked: give -pubkey to check it".to_string()
            }
            SignatureState::Absent => "not signed".to_string(),
        }
    );
    let _ = writeln!(
        out,
        "manifest: {} (captured {} by {}, {})",
        t.safe(&report.manifest_path),
        t.safe(&report.manifest.captured_at),
        t.safe(&report.manifest.captured_by),
        crate::reading(report.manifest, &report.findings)
    );
    out.push('\n');
    for p in Policy::ALL {
        let status = Status::of_policy(&report.findings, p);
        let n = |kind| {
            report
                .findings
                .iter()
                .filter(|f| f.kind == kind && f.concerns(p))
                .count()
        };
        let mut counts = Vec::new();
        for (kind, word) in [
            (Kind::Violation, "violation"),
            (Kind::Undecidable, "undecidable"),
            (Kind::Unseen, "unseen"),
            (Kind::Unexamined, "server(s) unexamined"),
        ] {
            if n(kind) > 0 {
                counts.push(format!("{} {word}", n(kind)));
            }
        }
        let gated = if report.gate.gates(p) {
            "gated"
        } else {
            "not gated"
        };
        let row = format!(
            "  {:<21}{:<8}{:<10}{}",
            p.as_str(),
            status.as_str(),
            gated,
            counts.join(", ")
        );
        let _ = writeln!(out, "{}", row.trim_end());
    }
    out.push('\n');
    let (violations, open) = (
        report.gated_count(Kind::Violation),
        report
            .findings
            .iter()
            .filter(|f| f.kind != Kind::Violation && f.gated(&report.gate))
            .count(),
    );
    let verdict = match report.status {
        Status::Fail if open > 0 => {
            format!("{violations} gated violation(s) proven; {open} more could not be compared")
        }
        Status::Fail => format!("{violations} gated violation(s) proven"),
        Status::Partial => format!(
            "nothing gated was proven broken, and {open} gated finding(s) could not be compared"
        ),
        Status::Pass if report.gate.is_empty() => format!(
            "nothing is gated (-fail-on none); {} finding(s) reported",
            report.findings.len()
        ),
        Status::Pass => "every gated policy holds".to_string(),
    };
    let _ = writeln!(
        out,
        "{}: {verdict} (exit {})",
        report.status.as_str(),
        report.status.exit_code()
    );
}
