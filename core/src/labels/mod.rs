//! Change labels: fixed rules over two versions of a server's surface, never a model.
//!
//! A label says *what kind* of change a reviewer is looking at, so that the one that matters is
//! not lost among typo fixes. It never says a change is safe, and nothing in pinlog lets a label
//! unblock anything: a changed digest is a changed digest. The tokens ([`Label::as_str`]) go into
//! signed public log entries, so they are a contract; docs/LABELS.md states every rule.
//!
//! The surface is the surface blob document (docs/SPEC-log.md, 4.4):
//! `{"instructions": <string|null>, "prompts": [..], "tools": [..]}`. Items are matched across
//! versions by their `name`. The functions never fail: a part that is missing or of the wrong
//! kind reads as absent (lists as empty), so whatever was served still gets labels.
//!
//! This file holds the label list and the entry points; each kind of rule has its own file:
//! tools and prompts (`item`), JSON Schema mutations (`schema`), what text says (`text`, with the
//! addresses it holds in `address`), and how items are matched across versions (`matching`).

mod address;
mod item;
mod matching;
mod schema;
mod text;

use std::collections::BTreeSet;
use std::fmt;

use crate::diff::equal;
use crate::json::Value;
use crate::unicode::has_hidden;
use item::{item_labels, Kind};
use matching::{member, named_items, pair};
use text::text_labels;

pub use text::{IMPERATIVE_PHRASES, SECRET_PHRASES};

/// A change label. Ordered by its token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Label {
    AdditionalPropertiesOpened,
    ConstraintRelaxed,
    EnumWidened,
    FieldRemoved,
    FieldTypeChanged,
    HiddenCharacters,
    InstructionsRemoved,
    MentionsSecrets,
    NewField,
    NewInstruction,
    NewLink,
    NewPrompt,
    NewServer,
    NewTool,
    OutputSchemaChanged,
    PermissionHintChanged,
    PromptChanged,
    PromptRemoved,
    RequiredRemoved,
    ToolChanged,
    ToolRemoved,
    TypeBroadened,
    WordingOnly,
}

impl Label {
    /// Every label, in token order.
    pub const ALL: [Label; 23] = [
        Label::AdditionalPropertiesOpened,
        Label::ConstraintRelaxed,
        Label::EnumWidened,
        Label::FieldRemoved,
        Label::FieldTypeChanged,
        Label::HiddenCharacters,
        Label::InstructionsRemoved,
        Label::MentionsSecrets,
        Label::NewField,
        Label::NewInstruction,
        Label::NewLink,
        Label::NewPrompt,
        Label::NewServer,
        Label::NewTool,
        Label::OutputSchemaChanged,
        Label::PermissionHintChanged,
        Label::PromptChanged,
        Label::PromptRemoved,
        Label::RequiredRemoved,
        Label::ToolChanged,
        Label::ToolRemoved,
        Label::TypeBroadened,
        Label::WordingOnly,
    ];

    /// The stable token, `[a-z0-9-]{1,64}`, as written in log entries and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Label::AdditionalPropertiesOpened => "additional-properties-opened",
            Label::ConstraintRelaxed => "constraint-relaxed",
            Label::EnumWidened => "enum-widened",
            Label::FieldRemoved => "field-removed",
            Label::FieldTypeChanged => "field-type-changed",
            Label::HiddenCharacters => "hidden-characters",
            Label::InstructionsRemoved => "instructions-removed",
            Label::MentionsSecrets => "mentions-secrets",
            Label::NewField => "new-field",
            Label::NewInstruction => "new-instruction",
            Label::NewLink => "new-link",
            Label::NewPrompt => "new-prompt",
            Label::NewServer => "new-server",
            Label::NewTool => "new-tool",
            Label::OutputSchemaChanged => "output-schema-changed",
            Label::PermissionHintChanged => "permission-hint-changed",
            Label::PromptChanged => "prompt-changed",
            Label::PromptRemoved => "prompt-removed",
            Label::RequiredRemoved => "required-removed",
            Label::ToolChanged => "tool-changed",
            Label::ToolRemoved => "tool-removed",
            Label::TypeBroadened => "type-broadened",
            Label::WordingOnly => "wording-only",
        }
    }

    /// The label a token names, if any.
    pub fn from_token(token: &str) -> Option<Label> {
        Label::ALL.into_iter().find(|l| l.as_str() == token)
    }
}

impl Ord for Label {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for Label {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

type Labels = BTreeSet<Label>;

/// The labels of a change from surface `old` to surface `new`, sorted and unique. `old: None` is a
/// server seen for the first time: `[new-server]`, plus `hidden-characters` if anything in `new`
/// holds one. Equal surfaces have no labels.
pub fn surface_labels(old: Option<&Value<'_>>, new: &Value<'_>) -> Vec<Label> {
    let mut labels = Labels::new();
    let Some(old) = old else {
        labels.insert(Label::NewServer);
        if has_hidden(new) {
            labels.insert(Label::HiddenCharacters);
        }
        return labels.into_iter().collect();
    };
    match (instructions(old), instructions(new)) {
        (Some(_), None) => {
            labels.insert(Label::InstructionsRemoved);
        }
        (o, Some(n)) if o.is_none_or(|o| !equal(o, n)) => {
            labels.insert(Label::NewInstruction);
            text_labels(o, n, &mut labels);
        }
        _ => {}
    }
    for kind in [Kind::Tool, Kind::Prompt] {
        let (before, after) = (list(old, kind.list()), list(new, kind.list()));
        for (o, n) in pair(named_items(before), named_items(after)) {
            item_labels(kind, o, n, &mut labels);
        }
    }
    // Wording only means nothing else: one label of any other kind anywhere overrides it.
    if labels.len() > 1 {
        labels.remove(&Label::WordingOnly);
    }
    labels.into_iter().collect()
}

/// The labels of a change to one tool (`None`: absent in that version), sorted and unique.
pub fn tool_labels(old: Option<&Value<'_>>, new: Option<&Value<'_>>) -> Vec<Label> {
    let mut labels = Labels::new();
    item_labels(Kind::Tool, old, new, &mut labels);
    labels.into_iter().collect()
}

/// The labels of a change to a server's instructions (`None`: it gives none), sorted and unique:
/// the instruction labels [`surface_labels`] gives, for the instructions alone.
pub fn instructions_labels(old: Option<&str>, new: Option<&str>) -> Vec<Label> {
    let mut labels = Labels::new();
    match (old, new) {
        (Some(_), None) => {
            labels.insert(Label::InstructionsRemoved);
        }
        (o, Some(n)) if o != Some(n) => {
            labels.insert(Label::NewInstruction);
            let old = o.map(|o| Value::String(o.into()));
            text_labels(old.as_ref(), &Value::String(n.into()), &mut labels);
        }
        _ => {}
    }
    labels.into_iter().collect()
}

/// The labels of a change to one prompt (`None`: absent in that version), sorted and unique.
pub fn prompt_labels(old: Option<&Value<'_>>, new: Option<&Value<'_>>) -> Vec<Label> {
    let mut labels = Labels::new();
    item_labels(Kind::Prompt, old, new, &mut labels);
    labels.into_iter().collect()
}

/// The surface's instructions; `null` and absent are the same thing: none.
fn instructions<'v, 'a>(surface: &'v Value<'a>) -> Option<&'v Value<'a>> {
    member(surface, "instructions").filter(|i| !matches!(i, Value::Null))
}

/// A list of the surface, or nothing.
fn list<'v, 'a>(surface: &'v Value<'a>, key: &str) -> &'v [Value<'a>] {
    member(surface, key)
        .and_then(Value::as_array)
        .unwrap_or(&[])
}
