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

use std::collections::BTreeSet;
use std::fmt;

use unicode_normalization::UnicodeNormalization;

use crate::diff::{diff, equal};
use crate::json::{to_f64, write_as_served, Object, Value};
use crate::unicode::{classify, has_hidden, scan_str, strings, HiddenClass};

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tool,
    Prompt,
}

impl Kind {
    fn list(self) -> &'static str {
        match self {
            Kind::Tool => "tools",
            Kind::Prompt => "prompts",
        }
    }
}

fn item_labels(kind: Kind, old: Option<&Value<'_>>, new: Option<&Value<'_>>, labels: &mut Labels) {
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

// --- JSON Schema ---------------------------------------------------------------------------------

/// Keywords that bound a value from above (a larger value, or none, allows more) …
const UPPER: [&str; 6] = [
    "maxLength",
    "maxItems",
    "maxProperties",
    "maxContains",
    "maximum",
    "exclusiveMaximum",
];
/// … from below (a smaller value, or none, allows more) …
const LOWER: [&str; 6] = [
    "minLength",
    "minItems",
    "minProperties",
    "minContains",
    "minimum",
    "exclusiveMinimum",
];
/// … and those where no fixed rule can tell a new value is no looser, so any change counts.
const OPAQUE: [&str; 3] = ["pattern", "format", "multipleOf"];

/// Keywords whose value is one sub-schema, compared with the same rules.
const SUBSCHEMA: [&str; 7] = [
    "items",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
];
/// Keywords whose value is an array of sub-schemas, compared index by index.
const SUBSCHEMA_LIST: [&str; 5] = ["items", "prefixItems", "anyOf", "oneOf", "allOf"];
/// Keywords whose value maps names to sub-schemas, compared name by name.
const SUBSCHEMA_MAP: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// A JSON Schema: an object of keywords, or `true` (anything) / `false` (nothing).
enum Schema<'v, 'a> {
    Keywords(&'v Object<'a>),
    Bool(bool),
}

impl<'v, 'a> Schema<'v, 'a> {
    fn of(v: &'v Value<'a>) -> Option<Self> {
        match v {
            Value::Object(o) => Some(Schema::Keywords(o)),
            Value::Bool(b) => Some(Schema::Bool(*b)),
            _ => None,
        }
    }

    fn get(&self, keyword: &str) -> Option<&'v Value<'a>> {
        match self {
            Schema::Keywords(o) => o.get(keyword),
            Schema::Bool(_) => None,
        }
    }

    /// The members of an object keyword; none when it is absent or not an object.
    fn members_of(&self, keyword: &str) -> Vec<(Option<&'v str>, &'v Value<'a>)> {
        match self.get(keyword) {
            Some(Value::Object(m)) => named_members(m),
            _ => Vec::new(),
        }
    }
}

/// The seven JSON Schema types as bits; `number` includes `integer`.
const TYPES: [(&str, u8); 7] = [
    ("array", 1),
    ("boolean", 2),
    ("integer", 4),
    ("null", 8),
    ("number", 16 | 4),
    ("object", 32),
    ("string", 64),
];
const ANY_TYPE: u8 = 127;

/// The types a schema allows, or `None` when its `type` is not one or more of the seven names.
fn types(s: &Schema<'_, '_>) -> Option<u8> {
    let bits = |v: &Value<'_>| {
        let name = v.as_str()?;
        TYPES.iter().find(|(t, _)| *t == name).map(|&(_, b)| b)
    };
    match (s, s.get("type")) {
        (Schema::Bool(false), _) => Some(0),
        (_, None) => Some(ANY_TYPE),
        (_, Some(Value::Array(names))) => names.iter().try_fold(0, |acc, n| Some(acc | bits(n)?)),
        (_, Some(single)) => bits(single),
    }
}

/// The values a schema allows by `enum` or `const`, as canonical bytes; `None` when unbounded.
fn allowed(s: &Schema<'_, '_>) -> Option<BTreeSet<Vec<u8>>> {
    // Canonical bytes equal exactly when `diff::equal` holds (undecidable numbers keep their
    // literal), so set membership is value equality without comparing every pair.
    let key = |v: &Value<'_>| {
        let mut out = Vec::new();
        write_as_served(v, &mut out);
        out
    };
    match (s.get("enum"), s.get("const")) {
        (Some(Value::Array(values)), _) => Some(values.iter().map(key).collect()),
        (_, Some(c)) => Some(BTreeSet::from([key(c)])),
        _ => None,
    }
}

/// Labels the changes from schema `old` to schema `new`, and then those of their sub-schemas.
/// Recurses once per schema nesting level, which the strict reader caps.
fn schema(old: &Value<'_>, new: &Value<'_>, labels: &mut Labels) {
    let (Some(o), Some(n)) = (Schema::of(old), Schema::of(new)) else {
        return; // not schemas: any change is left to the fallback label
    };
    if matches!(n, Schema::Bool(false)) {
        return; // now allows nothing: nothing about it can be looser
    }
    match (types(&o), types(&n)) {
        (Some(a), Some(b)) if a == b => {}
        (Some(a), Some(b)) if a & b == a => {
            labels.insert(Label::TypeBroadened);
        }
        (Some(_), Some(_)) => {
            labels.insert(Label::FieldTypeChanged);
        }
        _ => {
            // A `type` outside the seven names: only sameness can be told.
            if !same(o.get("type"), n.get("type")) {
                labels.insert(Label::FieldTypeChanged);
            }
        }
    }
    if let Some(before) = allowed(&o) {
        if allowed(&n).is_none_or(|after| !after.is_subset(&before)) {
            labels.insert(Label::EnumWidened);
        }
    }
    required(&o, &n, labels);
    if relaxed(&o, &n) {
        labels.insert(Label::ConstraintRelaxed);
    }
    let mut opened_here = Vec::new();
    for keyword in ["additionalProperties", "unevaluatedProperties"] {
        if opened(o.get(keyword), n.get(keyword)) {
            labels.insert(Label::AdditionalPropertiesOpened);
            opened_here.push(keyword);
        }
    }
    // Sub-schemas. One that was opened is labelled as that, not again as a broadened schema.
    for keyword in SUBSCHEMA {
        if let (Some(a), Some(b)) = (o.get(keyword), n.get(keyword)) {
            if !opened_here.contains(&keyword) {
                schema(a, b, labels);
            }
        }
    }
    for keyword in SUBSCHEMA_LIST {
        if let (Some(Value::Array(a)), Some(Value::Array(b))) = (o.get(keyword), n.get(keyword)) {
            for (x, y) in a.iter().zip(b) {
                schema(x, y, labels);
            }
        }
    }
    for keyword in SUBSCHEMA_MAP {
        // A map that is absent (or not an object) has no names: removing `properties` whole
        // removes every field in it.
        for pair in pair(o.members_of(keyword), n.members_of(keyword)) {
            match pair {
                (Some(x), Some(y)) => schema(x, y, labels),
                // A property is a field; a pattern or a definition is not.
                (None, Some(_)) if keyword == "properties" => {
                    labels.insert(Label::NewField);
                }
                (Some(_), None) if keyword == "properties" => {
                    labels.insert(Label::FieldRemoved);
                }
                _ => {}
            }
        }
    }
}

/// `required-removed`: a name in the old `required` is not in the new one, unless the property
/// itself was removed from `properties` too (that is `field-removed`).
fn required(old: &Schema<'_, '_>, new: &Schema<'_, '_>, labels: &mut Labels) {
    let (before, after) = (name_set(old, "required"), name_set(new, "required"));
    let (props_before, props_after) = (name_set(old, "properties"), name_set(new, "properties"));
    let dropped_property = |p: &&str| props_before.contains(p) && !props_after.contains(p);
    if before
        .iter()
        .any(|r| !after.contains(r) && !dropped_property(r))
    {
        labels.insert(Label::RequiredRemoved);
    }
}

/// The strings of an array keyword, or the member names of an object keyword.
fn name_set<'v>(s: &Schema<'v, '_>, keyword: &str) -> BTreeSet<&'v str> {
    match s.get(keyword) {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        Some(Value::Object(o)) => o.iter().map(|(k, _)| k).collect(),
        _ => BTreeSet::new(),
    }
}

/// `constraint-relaxed`: a bound removed or loosened, an opaque constraint removed or changed, or
/// `uniqueItems: true` dropped. A bound that cannot be compared as two numbers counts as loosened
/// when it changed at all.
fn relaxed(old: &Schema<'_, '_>, new: &Schema<'_, '_>) -> bool {
    let bound =
        |keyword: &str, looser: fn(f64, f64) -> bool| match (old.get(keyword), new.get(keyword)) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(Value::Number(a)), Some(Value::Number(b))) => {
                match (to_f64(a.literal()), to_f64(b.literal())) {
                    (Ok(x), Ok(y)) => looser(x, y),
                    _ => a.literal() != b.literal(),
                }
            }
            (Some(a), Some(b)) => !equal(a, b),
        };
    UPPER.iter().any(|k| bound(k, |x, y| y > x))
        || LOWER.iter().any(|k| bound(k, |x, y| y < x))
        || OPAQUE
            .iter()
            .any(|k| old.get(k).is_some() && !same(old.get(k), new.get(k)))
        || (matches!(old.get("uniqueItems"), Some(Value::Bool(true)))
            && !matches!(new.get("uniqueItems"), Some(Value::Bool(true))))
}

/// `additional-properties-opened`: `false` became anything else, or a schema that constrains
/// became one that allows anything (absent, `true` or `{}`).
fn opened(old: Option<&Value<'_>>, new: Option<&Value<'_>>) -> bool {
    let anything = |v: Option<&Value<'_>>| match v {
        None | Some(Value::Bool(true)) => true,
        Some(Value::Object(o)) => o.is_empty(),
        Some(_) => false,
    };
    match old {
        Some(Value::Bool(false)) => !matches!(new, Some(Value::Bool(false))),
        _ => !anything(old) && anything(new),
    }
}

fn same(a: Option<&Value<'_>>, b: Option<&Value<'_>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => equal(x, y),
        _ => false,
    }
}

// --- Text ----------------------------------------------------------------------------------------

/// Phrases that address the model with an order. Written as normalised text reads
/// (docs/LABELS.md, "Text rules").
pub const IMPERATIVE_PHRASES: &[&str] = &[
    "ignore previous",
    "ignore all previous",
    "ignore any previous",
    "ignore the above",
    "disregard previous",
    "disregard all previous",
    "disregard the above",
    "forget previous",
    "forget all previous",
    "you must",
    "you should always",
    "you are required to",
    "always call",
    "always use",
    "always run",
    "before using",
    "before calling",
    "before any other",
    "do not tell the user",
    "don't tell the user",
    "do not inform the user",
    "do not mention",
    "without telling",
    "without asking",
    "without informing",
    "<important>",
    "<system>",
    "<instructions>",
];

/// Words that name secrets or private files and records. Written as normalised text reads
/// (docs/LABELS.md, "Text rules"): `api key` also matches `API_KEY` and `api-key`. A bare "token"
/// is not listed: in the tools models use, "max tokens" is everyday language; the kinds of token
/// that are secrets are.
pub const SECRET_PHRASES: &[&str] = &[
    "~/.ssh",
    ".ssh/",
    "id rsa",
    "id ed25519",
    "id ecdsa",
    "authorized keys",
    ".env",
    "/etc/passwd",
    "/etc/shadow",
    ".netrc",
    ".npmrc",
    ".pypirc",
    "password",
    "passwd",
    "passphrase",
    "api key",
    "apikey",
    "api token",
    "access token",
    "auth token",
    "bearer token",
    "refresh token",
    "session token",
    "oauth token",
    "secret",
    "credential",
    "private key",
    "seed phrase",
    "mnemonic",
    "keychain",
    "cookie",
    "conversation history",
    "chat history",
    "message history",
    "previous messages",
    "your notes",
    "private notes",
    "personal notes",
];

/// The labels that depend on what text says: `new-instruction`, `mentions-secrets`, `new-link`
/// (each when the new text has something the old has not), and `hidden-characters` (when the new
/// version has any).
fn text_labels(old: Option<&Value<'_>>, new: &Value<'_>, labels: &mut Labels) {
    let (before, after) = (Text::of(old), Text::of(Some(new)));
    let newly = |phrases: &[&str]| {
        phrases
            .iter()
            .any(|p| after.mentions(p) && !before.mentions(p))
    };
    if newly(IMPERATIVE_PHRASES) {
        labels.insert(Label::NewInstruction);
    }
    if newly(SECRET_PHRASES) {
        labels.insert(Label::MentionsSecrets);
    }
    if !after.addresses().is_subset(&before.addresses()) {
        labels.insert(Label::NewLink);
    }
    if has_hidden(new) {
        labels.insert(Label::HiddenCharacters);
    }
}

/// Every string and member name of a value, normalised so that a phrase is found however it is
/// dressed. One line per string, plus one line per decoded tag message (tag characters are an
/// invisible copy of ASCII that a model may still read).
struct Text {
    /// Hidden characters removed (so `ig<U+200B>nore` reads `ignore`), then NFKC (full-width and
    /// other compatibility forms fold to plain letters), lower case, every run of white space one
    /// space. Addresses are looked for here.
    plain: String,
    /// `plain` with `_` and `-` also read as spaces, so that `API_KEY`, `api-key` and `api key`
    /// are one phrase. Phrases are looked for here.
    words: String,
}

impl Text {
    fn of(value: Option<&Value<'_>>) -> Text {
        let mut text = Text {
            plain: String::new(),
            words: String::new(),
        };
        if let Some(value) = value {
            strings(value, &mut Vec::new(), &mut |_, _, s| {
                text.push_line(s);
                if s.chars().any(|c| classify(c) == Some(HiddenClass::Tag)) {
                    for message in scan_str(s).1 {
                        text.push_line(&message.text);
                    }
                }
                true
            });
        }
        text
    }

    fn push_line(&mut self, s: &str) {
        let visible = s.chars().filter(|&c| classify(c).is_none());
        let plain: String = visible.nfkc().flat_map(char::to_lowercase).collect();
        let space = |c: char| c.is_whitespace();
        push_collapsed(&mut self.plain, &plain, space);
        push_collapsed(&mut self.words, &plain, |c| {
            space(c) || c == '_' || c == '-'
        });
    }

    /// Whether `phrase` occurs at word boundaries: no letter or digit touches either end of it,
    /// except that a plural `s` may follow. An end that is itself punctuation (`~/.ssh`, `.env`)
    /// needs no boundary there.
    fn mentions(&self, phrase: &str) -> bool {
        let text = &self.words;
        let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        let open = word(phrase.chars().next());
        let close = word(phrase.chars().next_back());
        let mut from = 0;
        while let Some(i) = text[from..].find(phrase) {
            let (at, end) = (from + i, from + i + phrase.len());
            let rest = &text[end..];
            let rest = rest.strip_prefix('s').unwrap_or(rest);
            let glued_before = open && word(text[..at].chars().next_back());
            let glued_after = close && word(rest.chars().next());
            if !glued_before && !glued_after {
                return true;
            }
            from = at + text[at..].chars().next().map_or(1, char::len_utf8);
        }
        false
    }

    /// The URLs, e-mail addresses and IP addresses in the text.
    fn addresses(&self) -> BTreeSet<&str> {
        let mut found = BTreeSet::new();
        for line in self.plain.lines() {
            for word in line.split(' ') {
                addresses_in(word, &mut found);
            }
        }
        found
    }
}

/// Appends `s` as one line, each run of characters `space` accepts written as one space and none
/// at the start.
fn push_collapsed(out: &mut String, s: &str, space: impl Fn(char) -> bool) {
    let line_start = out.len();
    for c in s.chars() {
        if !space(c) {
            out.push(c);
        } else if out.len() > line_start && !out.ends_with(' ') {
            out.push(' ');
        }
    }
    out.push('\n');
}

/// Addresses in one space-free word of normalised text: `scheme://…` and `www.…` URLs, `a@b.cd`
/// e-mail addresses, IPv4 addresses (with or without a port) and IPv6 addresses. Surrounding
/// punctuation is not part of an address.
fn addresses_in<'t>(word: &'t str, found: &mut BTreeSet<&'t str>) {
    const EDGE: &[char] = &[
        '.', ',', ';', ':', '!', '?', '(', ')', '[', ']', '{', '}', '<', '>', '"', '\'', '`', '*',
    ];
    let host_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-');
    let trimmed = |s: &'t str| s.trim_matches(EDGE);
    // URLs: a scheme of letters, digits, `+`, `.`, `-` starting with a letter, then `://`.
    if let Some(i) = word.find("://") {
        let start = word[..i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-')))
            .map_or(0, |j| j + 1);
        let url = trimmed(&word[start..]);
        if word[start..i].starts_with(|c: char| c.is_ascii_alphabetic())
            && url.len() > i - start + 3
        {
            found.insert(url);
        }
    }
    if let Some(i) = word.find("www.") {
        let url = trimmed(&word[i..]);
        if url.len() > 4 && (i == 0 || !word[..i].ends_with(|c: char| c.is_alphanumeric())) {
            found.insert(url);
        }
    }
    // E-mail: local part of letters, digits and `._%+-`, then a host with a dot and a TLD of two
    // or more letters.
    for (at, _) in word.match_indices('@') {
        let local_start = word[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "._%+-".contains(c)))
            .map_or(0, |j| j + 1);
        let host_end = word[at + 1..]
            .find(|c: char| !host_char(c))
            .map_or(word.len(), |j| at + 1 + j);
        let host = word[at + 1..host_end].trim_end_matches(['.', '-']);
        let tld = host.rsplit('.').next().unwrap_or("");
        if local_start < at
            && host.contains('.')
            && tld.len() >= 2
            && tld.bytes().all(|b| b.is_ascii_alphabetic())
        {
            found.insert(&word[local_start..at + 1 + host.len()]);
        }
    }
    // IP addresses: a run of hex digits, `.` and `:` not touching a letter or digit.
    let ip_char = |c: char| c.is_ascii_hexdigit() || matches!(c, '.' | ':');
    let touches = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut start = None;
    // A sentinel space after the last character ends the last run.
    for (i, c) in word.char_indices().chain([(word.len(), ' ')]) {
        match (ip_char(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                start = None;
                if !touches(word[..s].chars().next_back())
                    && !touches(Some(c).filter(|_| i < word.len()))
                {
                    let run = word[s..i].trim_end_matches(['.', ':']);
                    if is_ip(run) {
                        found.insert(run);
                    }
                }
            }
            _ => {}
        }
    }
}

/// An IPv4 address (optionally `:port`), or an IPv6 address with at least two colons and a
/// decimal digit (so `::` alone and `a::b` are not taken for addresses).
fn is_ip(run: &str) -> bool {
    use std::net::{Ipv4Addr, Ipv6Addr};
    let v4 = |s: &str| s.parse::<Ipv4Addr>().is_ok();
    let port = |s: &str| !s.is_empty() && s.len() <= 5 && s.bytes().all(|b| b.is_ascii_digit());
    v4(run)
        || run
            .rsplit_once(':')
            .is_some_and(|(host, p)| v4(host) && port(p))
        || (run.matches(':').count() >= 2
            && run.bytes().any(|b| b.is_ascii_digit())
            && run.parse::<Ipv6Addr>().is_ok())
}

// --- Helpers -------------------------------------------------------------------------------------

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

/// An array member of an object, or nothing.
fn array_member<'v, 'a>(o: &'v Object<'a>, key: &str) -> &'v [Value<'a>] {
    o.get(key).and_then(Value::as_array).unwrap_or(&[])
}

fn annotations<'v, 'a>(tool: &'v Object<'a>) -> Option<&'v Object<'a>> {
    tool.get("annotations").and_then(Value::as_object)
}

fn named_items<'v, 'a>(items: &'v [Value<'a>]) -> Vec<(Option<&'v str>, &'v Value<'a>)> {
    items.iter().map(|i| (name(i), i)).collect()
}

fn named_members<'v, 'a>(o: &'v Object<'a>) -> Vec<(Option<&'v str>, &'v Value<'a>)> {
    o.iter().map(|(k, v)| (Some(k), v)).collect()
}

fn member<'v, 'a>(v: &'v Value<'a>, name: &str) -> Option<&'v Value<'a>> {
    v.as_object().and_then(|o| o.get(name))
}

/// An item's identity: its `name` when that is a string.
fn name<'v>(item: &'v Value<'_>) -> Option<&'v str> {
    member(item, "name").and_then(Value::as_str)
}

/// Pairs the entries of two keyed lists: equal keys pair up in the order they were listed (so a
/// name listed twice pairs with the same name's second listing), the rest are added or removed.
/// Sorting makes it linear-logarithmic whatever the size.
fn pair<'k, T: Copy>(
    mut old: Vec<(Option<&'k str>, T)>,
    mut new: Vec<(Option<&'k str>, T)>,
) -> Vec<(Option<T>, Option<T>)> {
    old.sort_by_key(|e| e.0);
    new.sort_by_key(|e| e.0);
    let (mut old, mut new) = (old.into_iter().peekable(), new.into_iter().peekable());
    let mut pairs = Vec::new();
    loop {
        let order = match (old.peek(), new.peek()) {
            (None, None) => return pairs,
            (Some(a), Some(b)) => a.0.cmp(&b.0),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
        };
        pairs.push(match order {
            std::cmp::Ordering::Less => (old.next().map(|e| e.1), None),
            std::cmp::Ordering::Greater => (None, new.next().map(|e| e.1)),
            std::cmp::Ordering::Equal => (old.next().map(|e| e.1), new.next().map(|e| e.1)),
        });
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    /// A phrase that is not already in normalised form could never match.
    #[test]
    fn phrases_are_written_normalised() {
        for phrase in IMPERATIVE_PHRASES.iter().chain(SECRET_PHRASES) {
            let text = Text::of(Some(&Value::String(Cow::Borrowed(phrase))));
            assert_eq!(text.words, format!("{phrase}\n"), "{phrase}");
        }
    }
}
