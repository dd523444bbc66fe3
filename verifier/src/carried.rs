//! What pinlog's entry rules carry from one `--state` run to the next: each server's last entry
//! and the latest observation time, as they stood at the remembered checkpoint. With it, a later
//! run checks the entries added since and no others (docs/VERIFYING.md, section 5).
//!
//! The file is the user's own, written by a run that verified everything it records. A file that
//! is missing, damaged, or of another checkpoint is not an error: the run then checks every entry
//! again, which proves more, not less.

use std::collections::HashMap;
use std::path::Path;

use pinlog_core::files::{read_bounded, write_public};
use pinlog_core::Digest;
use pinlog_log::entry::Timestamp;
use pinlog_log::Hash;

/// The first line, naming the format.
const HEADER: &str = "pinlog verify-log entry rules v1";
/// The largest file read: about two million servers.
const MAX_FILE: u64 = 256 << 20;

/// The entry rules' memory of a log of `size` entries with `root`.
#[derive(Debug, PartialEq, Eq)]
pub struct Carried {
    pub size: u64,
    pub root: Hash,
    /// The latest `observed_at` so far.
    pub last_time: Option<Timestamp>,
    /// Each server's last entry: index and surface digest.
    pub servers: HashMap<String, (u64, Digest)>,
}

impl Carried {
    /// The file's text: the header, the tree it belongs to, the time, then one line per server,
    /// `<index> <surface> <server>`, in the order of the servers' names.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{HEADER}\nsize {}\nroot {}\ntime {}\n",
            self.size,
            self.root,
            self.last_time.as_ref().map_or("-", |t| t.as_str())
        );
        let mut servers: Vec<_> = self.servers.iter().collect();
        servers.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (server, (index, surface)) in servers {
            out.push_str(&format!("{index} {surface} {server}\n"));
        }
        out
    }

    /// Reads the text back; `None` for anything but exactly what [`Carried::to_text`] writes.
    pub fn parse(text: &str) -> Option<Carried> {
        let mut lines = text.strip_suffix('\n')?.split('\n');
        if lines.next()? != HEADER {
            return None;
        }
        let size = lines.next()?.strip_prefix("size ")?.parse().ok()?;
        let root = Hash::from_base64(lines.next()?.strip_prefix("root ")?)?;
        let last_time = match lines.next()?.strip_prefix("time ")? {
            "-" => None,
            t => Some(Timestamp::parse(t)?),
        };
        let mut servers = HashMap::new();
        for line in lines {
            let mut parts = line.splitn(3, ' ');
            let index: u64 = parts.next()?.parse().ok()?;
            let surface: Digest = parts.next()?.parse().ok()?;
            let server = parts.next()?;
            if index >= size
                || servers
                    .insert(server.to_string(), (index, surface))
                    .is_some()
            {
                return None;
            }
        }
        Some(Carried {
            size,
            root,
            last_time,
            servers,
        })
    }

    /// The memory in `path` if it belongs to the tree of `size` and `root`.
    pub fn load(path: &Path, size: u64, root: &Hash) -> Option<Carried> {
        let bytes = read_bounded(path, MAX_FILE).ok()?;
        let carried = Carried::parse(std::str::from_utf8(&bytes).ok()?)?;
        (carried.size == size && carried.root == *root).then_some(carried)
    }

    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        write_public(path, self.to_text().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Carried {
        let d = |b: &[u8]| Digest::of(b);
        Carried {
            size: 10,
            root: Hash::leaf(b"root"),
            last_time: Timestamp::parse("2026-12-01T12:00:00Z"),
            servers: HashMap::from([
                ("npm:b".to_string(), (9, d(b"b"))),
                ("remote:https://x.example/mcp".to_string(), (3, d(b"r"))),
            ]),
        }
    }

    #[test]
    fn round_trips_and_refuses_anything_else() {
        let c = sample();
        let text = c.to_text();
        assert!(text.starts_with(&format!("{HEADER}\nsize 10\nroot ")));
        assert_eq!(Carried::parse(&text), Some(c));
        let empty = Carried {
            size: 0,
            root: Hash::empty(),
            last_time: None,
            servers: HashMap::new(),
        };
        assert_eq!(Carried::parse(&empty.to_text()), Some(empty));
        for broken in [
            text.replace("size 10", "size ten"),
            text.replace("v1", "v2"),
            text.replace("\n9 ", "\n10 "),
            text.trim_end().to_string(),
            format!("{text}9 sha256:00 npm:c\n"),
            format!("{text}{}\n", text.lines().last().unwrap()),
        ] {
            assert_eq!(Carried::parse(&broken), None, "{broken}");
        }
    }

    #[test]
    fn only_the_remembered_tree_loads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.rules");
        let c = sample();
        c.save(&path).unwrap();
        assert_eq!(Carried::load(&path, 10, &c.root), Some(sample()));
        assert_eq!(Carried::load(&path, 11, &c.root), None);
        assert_eq!(Carried::load(&path, 10, &Hash::leaf(b"other")), None);
        assert_eq!(Carried::load(&dir.path().join("none"), 10, &c.root), None);
    }
}
