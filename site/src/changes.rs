//! What changed between two surfaces, as the site shows it (JSON pointers with old and new
//! values, rendered safe) and as the monthly report counts it (tools changed, added, removed).

use std::collections::BTreeMap;

use pinlog_core::diff::{self, diff};
use pinlog_core::json::{self, Value};
use pinlog_core::render;

/// The longest value shown whole; longer ones are cut.
const MAX_SHOWN: usize = 400;
/// The most changes shown for one entry.
pub const MAX_CHANGES: usize = 200;

/// One changed place, ready to print.
pub struct Shown {
    pub pointer: String,
    pub kind: &'static str,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// The changes from `old` to `new`, at most [`MAX_CHANGES`], and how many more there were.
pub fn shown(old: &Value<'_>, new: &Value<'_>) -> (Vec<Shown>, usize) {
    let all = diff(old, new);
    let more = all.len().saturating_sub(MAX_CHANGES);
    let list = all
        .into_iter()
        .take(MAX_CHANGES)
        .map(|c| Shown {
            pointer: render::safe(&c.pointer.to_string()).into_owned(),
            kind: c.kind(),
            old: c.old.map(show),
            new: c.new.map(show),
        })
        .collect();
    (list, more)
}

/// A value as one line: its canonical JSON (as served when it has none), hidden characters
/// written by code point, cut after [`MAX_SHOWN`] characters.
pub fn show(v: &Value<'_>) -> String {
    let mut bytes = Vec::new();
    json::write_as_served(v, &mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let cut: String = text.chars().take(MAX_SHOWN).collect();
    let mut out = render::safe(&cut).into_owned();
    if cut.len() < text.len() {
        out.push('…');
    }
    out
}

/// Tool counts for the monthly report.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ToolCounts {
    pub changed: u64,
    pub added: u64,
    pub removed: u64,
    /// Changed tools whose only changed members are `inputSchema` or `outputSchema`.
    pub schema_only: u64,
}

impl ToolCounts {
    pub fn add(&mut self, o: ToolCounts) {
        self.changed += o.changed;
        self.added += o.added;
        self.removed += o.removed;
        self.schema_only += o.schema_only;
    }
}

/// The tools of a surface by name (a tool without a string name is left out of the counts).
fn tools<'v, 'a>(surface: &'v Value<'a>) -> BTreeMap<&'v str, &'v Value<'a>> {
    surface
        .as_object()
        .and_then(|o| o.get("tools"))
        .and_then(Value::as_array)
        .unwrap_or(&[])
        .iter()
        .filter_map(|t| Some((t.as_object()?.get("name")?.as_str()?, t)))
        .collect()
}

/// How the tools of `new` differ from those of `old` (all added when there is no `old`).
pub fn tool_counts(old: Option<&Value<'_>>, new: &Value<'_>) -> ToolCounts {
    let after = tools(new);
    let before = old.map(tools).unwrap_or_default();
    let mut c = ToolCounts::default();
    for (name, t) in &after {
        match before.get(name) {
            None => c.added += 1,
            Some(b) if !diff::equal(b, t) => {
                c.changed += 1;
                let members = diff(b, t);
                let schema = |p: &str| {
                    ["/inputSchema", "/outputSchema"]
                        .iter()
                        .any(|m| p == *m || p.strip_prefix(m).is_some_and(|r| r.starts_with('/')))
                };
                if members.iter().all(|m| schema(&m.pointer.to_string())) {
                    c.schema_only += 1;
                }
            }
            Some(_) => {}
        }
    }
    c.removed = before.keys().filter(|n| !after.contains_key(*n)).count() as u64;
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use pinlog_core::json::{parse, Limits};

    fn v(s: &str) -> Value<'_> {
        parse(s.as_bytes(), Limits::default()).unwrap()
    }

    #[test]
    fn tools_are_counted_by_name_and_schema_only_changes_apart() {
        let old = v(
            r#"{"tools":[{"name":"a","description":"x"},{"name":"b","inputSchema":{"type":"object"}},{"name":"c"}]}"#,
        );
        let new = v(
            r#"{"tools":[{"name":"a","description":"y"},{"name":"b","inputSchema":{"type":"object","required":[]}},{"name":"d"}]}"#,
        );
        assert_eq!(
            tool_counts(Some(&old), &new),
            ToolCounts {
                changed: 2,
                added: 1,
                removed: 1,
                schema_only: 1
            }
        );
        assert_eq!(tool_counts(None, &new).added, 3);
    }

    #[test]
    fn shown_values_hide_nothing_and_are_cut() {
        let old = v(r#"{"d":"plain"}"#);
        let new = v("{\"d\":\"plain \u{202e}evil\"}");
        let (list, more) = shown(&old, &new);
        assert_eq!(more, 0);
        assert_eq!(list[0].pointer, "/d");
        assert_eq!(list[0].new.as_deref(), Some("\"plain <U+202E>evil\""));
        let long = format!("\"{}\"", "x".repeat(1000));
        assert!(show(&v(&long)).ends_with('…'));
    }
}
