//! A unified diff of two versions of a configuration file, for `--dry-run`: the changed lines with
//! one line of context (computed by `similar`), every line rendered safe.

use pinlog_core::render::safe;
use similar::{ChangeTag, TextDiff};

fn show(out: &mut String, mark: char, line: &str) {
    let body = line.strip_suffix('\n').unwrap_or(line);
    let body = body.strip_suffix('\r').unwrap_or(body);
    out.push(mark);
    // Tabs are layout in a configuration file: kept; every other control is escaped.
    for (i, part) in body.split('\t').enumerate() {
        if i > 0 {
            out.push('\t');
        }
        out.push_str(&safe(part));
    }
    out.push('\n');
}

/// `--- old` / `+++ new` and a hunk per group of changes, with one line of context; empty when
/// the texts are equal.
pub fn unified(old: &[u8], new: &[u8], old_name: &str, new_name: &str) -> String {
    if old == new {
        return String::new();
    }
    let (old, new) = (String::from_utf8_lossy(old), String::from_utf8_lossy(new));
    let diff = TextDiff::from_lines(old.as_ref(), new.as_ref());
    let mut out = format!("--- {}\n+++ {}\n", safe(old_name), safe(new_name));
    for group in diff.grouped_ops(1) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (a0, a1) = (first.old_range().start, last.old_range().end);
        let (b0, b1) = (first.new_range().start, last.new_range().end);
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            a0 + 1,
            a1 - a0,
            b0 + 1,
            b1 - b0
        ));
        for op in &group {
            for change in diff.iter_changes(op) {
                let mark = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                show(&mut out, mark, change.value());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks() {
        let d = unified(b"a\nb\nc\nd\ne\nf\n", b"a\nB\nc\nd\ne\nF\n", "x", "y");
        assert_eq!(
            d,
            "--- x\n+++ y\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -5,2 +5,2 @@\n e\n-f\n+F\n"
        );
        assert_eq!(unified(b"same", b"same", "x", "y"), "");
        let d = unified(b"", b"new\n", "x", "y");
        assert!(d.contains("+new"));
        let d = unified(b"a\n\x1b[2J\n", b"a\n", "x", "y");
        assert!(d.contains("-<U+001B>[2J"), "{d}");
    }
}
