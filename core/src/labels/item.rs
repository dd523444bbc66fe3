//! Tool and prompt labels: an item added, removed or changed, its members, a tool's schemas and
//! permission hints, a prompt's arguments; and, when nothing else was found, wording only.

use super::matching::{member, named_items, named_members, pair};
use super::schema::schema;
use super::text::text_labels;
use super::{Label, Labels};
use crate::diff::{diff, equal};
use crate::json::{Object, Value};

/// The two kinds of item a surface lists, labelled by the same rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Tool,
    Prompt,
}

impl Kind {
    /// The surface member that lists this kind.
    pub(super) fn list(self) -> &'static str {
        match self {
            Kind::Tool => "tools",
            Kind::Prompt => "prompts",
        }
    }
}

/// The labels of a change to one item (`None`: absent in that version), added to `labels`.
pub(super) fn item_labels(
    kind: Kind,
    old: Option<&Value<'_>>,
    new: Option<&Value<'_>>,
    labels: &mut Labels,
) {
    let (old, new) = match (old, new) {
        (None, None) => return,
        (Some(_), None) => {
            labels.insert(match kind {
                Kind::Tool => Label::ToolRemoved,
                Kind::Prompt => Label::PromptRemoved,
            });
            return;
        }
        (None, Some(new)) => {
            labels.insert(match kind {
                Kind::Tool => Label::NewTool,
                Kind::Prompt => Label::NewPrompt,
            });
            // Everything a new item says is new: its text is held against nothing.
            text_labels(None, new, labels);
            return;
        }
        (Some(old), Some(new)) if equal(old, new) => return,
        (Some(old), Some(new)) => (old, new),
    };
    let mut found = Labels::new();
    if let (Some(o), Some(n)) = (old.as_object(), new.as_object()) {
        members(o, n, &mut found);
        match kind {
            Kind::Tool => tool_parts(o, n, &mut found),
            Kind::Prompt => prompt_arguments(o, n, &mut found),
        }
    }
    text_labels(Some(old), new, &mut found);
    if found.is_empty() {
        let wording = diff(old, new).iter().all(|c| {
            c.pointer
                .tokens()
                .last()
                .is_some_and(|t| t == "description")
                && matches!(
                    (c.old, c.new),
                    (Some(Value::String(_)), Some(Value::String(_)))
                )
        });
        found.insert(match (wording, kind) {
            (true, _) => Label::WordingOnly,
            (false, Kind::Tool) => Label::ToolChanged,
            (false, Kind::Prompt) => Label::PromptChanged,
        });
    }
    labels.append(&mut found);
}

/// The item's own members: added, removed, or now of another JSON kind.
fn members(old: &Object<'_>, new: &Object<'_>, labels: &mut Labels) {
    for pair in pair(named_members(old), named_members(new)) {
        match pair {
            (None, Some(_)) => labels.insert(Label::NewField),
            (Some(_), None) => labels.insert(Label::FieldRemoved),
            (Some(o), Some(n)) if o.kind() != n.kind() => labels.insert(Label::FieldTypeChanged),
            _ => false,
        };
    }
}

/// MCP's defaults for the tool annotations that describe what a tool may do.
const HINTS: [(&str, bool); 4] = [
    ("readOnlyHint", false),
    ("destructiveHint", true),
    ("idempotentHint", false),
    ("openWorldHint", true),
];

fn tool_parts(old: &Object<'_>, new: &Object<'_>, labels: &mut Labels) {
    if let (Some(o), Some(n)) = (old.get("inputSchema"), new.get("inputSchema")) {
        schema(o, n, labels);
    }
    match (old.get("outputSchema"), new.get("outputSchema")) {
        (None, None) => {}
        (Some(o), Some(n)) if equal(o, n) => {}
        _ => {
            labels.insert(Label::OutputSchemaChanged);
        }
    }
    // A hint left out means its default, so writing the default out is not a change.
    let (before, after) = (annotations(old), annotations(new));
    let changed = |&(hint, default): &(&str, bool)| {
        let default = Value::Bool(default);
        let (x, y) = (
            before.and_then(|a| a.get(hint)),
            after.and_then(|a| a.get(hint)),
        );
        !equal(x.unwrap_or(&default), y.unwrap_or(&default))
    };
    if HINTS.iter().any(changed) {
        labels.insert(Label::PermissionHintChanged);
    }
}

/// A prompt's arguments, matched by name: added, removed, or no longer required.
fn prompt_arguments(old: &Object<'_>, new: &Object<'_>, labels: &mut Labels) {
    let args = |o| named_items(array_member(o, "arguments"));
    let required = |arg: &Value<'_>| matches!(member(arg, "required"), Some(Value::Bool(true)));
    for pair in pair(args(old), args(new)) {
        match pair {
            (None, Some(_)) => labels.insert(Label::NewField),
            (Some(_), None) => labels.insert(Label::FieldRemoved),
            (Some(o), Some(n)) if required(o) && !required(n) => {
                labels.insert(Label::RequiredRemoved)
            }
            _ => false,
        };
    }
}

/// An array member of an object, or nothing.
fn array_member<'v, 'a>(o: &'v Object<'a>, key: &str) -> &'v [Value<'a>] {
    o.get(key).and_then(Value::as_array).unwrap_or(&[])
}

fn annotations<'v, 'a>(tool: &'v Object<'a>) -> Option<&'v Object<'a>> {
    tool.get("annotations").and_then(Value::as_object)
}
