//! An install refused for the package's size, remembered: the same bytes under the same caps are
//! refused again without being downloaded again. One small text file per key, in `refused/`.

use std::time::SystemTime;

const HEADER: &str = "pinlog install cache refusal v1";

/// What was refused, and for which bytes and caps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub registry: String,
    pub source: String,
    pub name: String,
    pub version: String,
    /// The digests the registry gave for the version, sorted: a refusal holds for these bytes.
    pub digests: Vec<String>,
    /// The caps the install ran under (`<unpacked bytes>/<file bytes>`).
    pub caps: String,
    pub refused: String,
    /// The installer's message, one line.
    pub reason: String,
}

impl Refusal {
    pub fn to_text(&self) -> String {
        format!(
            "{HEADER}\nregistry {}\nsource {}\nname {}\nversion {}\ndigests {}\ncaps {}\nrefused {}\nreason {}\n",
            self.registry,
            self.source,
            self.name,
            self.version,
            self.digests.join(" "),
            self.caps,
            self.refused,
            self.reason
        )
    }

    /// Reads the text back; `None` for anything but what [`Refusal::to_text`] writes.
    pub fn parse(text: &str) -> Option<Refusal> {
        let mut lines = text.strip_suffix('\n')?.split('\n');
        if lines.next()? != HEADER {
            return None;
        }
        let mut field = |name: &str| -> Option<String> {
            Some(
                lines
                    .next()?
                    .strip_prefix(name)?
                    .strip_prefix(' ')?
                    .to_string(),
            )
        };
        let r = Refusal {
            registry: field("registry")?,
            source: field("source")?,
            name: field("name")?,
            version: field("version")?,
            digests: field("digests")?.split(' ').map(str::to_string).collect(),
            caps: field("caps")?,
            refused: field("refused")?,
            reason: field("reason")?,
        };
        (lines.next().is_none() && humantime::parse_rfc3339(&r.refused).is_ok()).then_some(r)
    }

    /// How long ago the install was refused, zero for a time in the future.
    pub fn age(&self, now: SystemTime) -> std::time::Duration {
        humantime::parse_rfc3339(&self.refused)
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .unwrap_or_default()
    }
}

/// `reason` as one printable line of at most 1,000 characters.
pub fn one_line(reason: &str) -> String {
    pinlog_core::render::safe(reason)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(1000)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_anything_else() {
        let r = Refusal {
            registry: "npm".into(),
            source: "https://registry.npmjs.org".into(),
            name: "huge".into(),
            version: "1.0.0".into(),
            digests: vec!["sha512-a".into(), "sha512-b".into()],
            caps: "268435456/134217728".into(),
            refused: "2026-12-02T10:00:00Z".into(),
            reason: one_line("npm install failed:\n\u{1b}[31mENOSPC\u{1b}[0m no space left"),
        };
        assert!(!r.reason.contains('\n') && !r.reason.contains('\u{1b}'));
        let text = r.to_text();
        assert_eq!(Refusal::parse(&text), Some(r));
        for broken in [
            text.replace("v1", "v2"),
            text.replace("refused 2026", "refused yesterday 2026"),
            text.replace("caps ", "cap "),
            format!("{text}more\n"),
            text.trim_end().to_string(),
        ] {
            assert_eq!(Refusal::parse(&broken), None, "{broken}");
        }
    }
}
