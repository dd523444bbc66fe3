//! The record that makes an installed tree a cache entry: what was installed, from which registry
//! digest, and the tree's own digest, checked before every use. One small text file per key.

use std::time::SystemTime;

use pinlog_core::Digest;

/// The first line, naming the format.
const HEADER: &str = "pinlog install cache entry v1";

/// One entry as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// `npm` or `pypi`.
    pub registry: String,
    /// The registry's URL (npm's registry, PyPI's simple index).
    pub source: String,
    pub name: String,
    /// The version as the registry publishes it (the key's).
    pub version: String,
    /// The registry's digest of the package itself, as the installer recorded it.
    pub digest: String,
    /// The tree's digest and size when it was sealed.
    pub tree: Digest,
    pub bytes: u64,
    pub installed: String,
    /// The directory below `entries/`: 32 lowercase hex digits.
    pub entry: String,
    /// The registry digest of every package installed (the package and its dependencies).
    pub packages: Vec<String>,
}

impl Record {
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{HEADER}\nregistry {}\nsource {}\nname {}\nversion {}\ndigest {}\ntree {}\nbytes {}\ninstalled {}\nentry {}\n",
            self.registry,
            self.source,
            self.name,
            self.version,
            self.digest,
            self.tree,
            self.bytes,
            self.installed,
            self.entry
        );
        for p in &self.packages {
            out.push_str(&format!("package {p}\n"));
        }
        out
    }

    /// Reads the text back; `None` for anything but what [`Record::to_text`] writes for values
    /// [`Record::writable`] accepts.
    pub fn parse(text: &str) -> Option<Record> {
        let mut lines = text.strip_suffix('\n')?.split('\n');
        if lines.next()? != HEADER {
            return None;
        }
        let mut field = |name: &str| -> Option<String> {
            let v = lines.next()?.strip_prefix(name)?.strip_prefix(' ')?;
            token(v).then(|| v.to_string())
        };
        let mut record = Record {
            registry: field("registry")?,
            source: field("source")?,
            name: field("name")?,
            version: field("version")?,
            digest: field("digest")?,
            tree: field("tree")?.parse().ok()?,
            bytes: field("bytes")?.parse().ok()?,
            installed: field("installed")?,
            entry: field("entry")?,
            packages: Vec::new(),
        };
        for line in lines {
            let p = line.strip_prefix("package ")?;
            if !token(p) {
                return None;
            }
            record.packages.push(p.to_string());
        }
        (record.writable() && humantime::parse_rfc3339(&record.installed).is_ok()).then_some(record)
    }

    /// Whether every value can be written and read back as itself: the registry is known, the
    /// entry names a directory below `entries/` and nothing else, no value is empty or holds a
    /// space or a control character.
    pub fn writable(&self) -> bool {
        matches!(self.registry.as_str(), "npm" | "pypi")
            && is_entry_name(&self.entry)
            && [
                &self.source,
                &self.name,
                &self.version,
                &self.digest,
                &self.installed,
            ]
            .into_iter()
            .chain(&self.packages)
            .all(|v| token(v))
    }

    /// How long ago the tree was installed, zero for a time in the future.
    pub fn age(&self, now: SystemTime) -> std::time::Duration {
        humantime::parse_rfc3339(&self.installed)
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .unwrap_or_default()
    }
}

/// An entry directory's name: 32 lowercase hex digits, so that a record can name no other path.
pub fn is_entry_name(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn token(v: &str) -> bool {
    !v.is_empty() && v.len() <= 1024 && v.chars().all(|c| !c.is_whitespace() && !c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Record {
        Record {
            registry: "npm".into(),
            source: "https://registry.npmjs.org".into(),
            name: "@scope/server".into(),
            version: "1.2.3".into(),
            digest: "sha512-abc==".into(),
            tree: Digest::of(b"tree"),
            bytes: 4096,
            installed: "2026-12-01T10:00:00Z".into(),
            entry: "0123456789abcdef0123456789abcdef".into(),
            packages: vec!["sha512-abc==".into(), "sha512-dep==".into()],
        }
    }

    #[test]
    fn round_trips_and_refuses_anything_else() {
        let r = sample();
        let text = r.to_text();
        assert_eq!(Record::parse(&text), Some(r.clone()));
        let no_packages = Record {
            packages: vec![],
            ..r.clone()
        };
        assert_eq!(Record::parse(&no_packages.to_text()), Some(no_packages));
        for broken in [
            text.replace("v1", "v2"),
            text.replace("registry npm", "registry cargo"),
            text.replace("entry 0123456789abcdef0123456789abcdef", "entry ../../etc"),
            text.replace(
                "entry 0123456789abcdef0123456789abcdef",
                "entry 0123456789ABCDEF0123456789abcdef",
            ),
            text.replace("bytes 4096", "bytes -1"),
            text.replace("installed 2026-12-01T10:00:00Z", "installed yesterday"),
            text.replace("tree sha256:", "tree sha1:"),
            text.replace("version 1.2.3", "version 1.2.3 "),
            text.replace("version 1.2.3", "version"),
            text.replace("name @scope/server\n", ""),
            text.replace("package sha512-dep==", "packages sha512-dep=="),
            text.trim_end().to_string(),
            format!("{text}extra\n"),
        ] {
            assert_eq!(Record::parse(&broken), None, "{broken}");
        }
    }
}
