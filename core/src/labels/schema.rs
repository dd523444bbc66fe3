//! Schema mutation labels: what became looser from one JSON Schema to the next, keyword by
//! keyword and down every sub-schema.

use std::collections::BTreeSet;

use super::matching::{named_members, pair};
use super::{Label, Labels};
use crate::diff::equal;
use crate::json::{to_f64, write_as_served, Object, Value};

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
pub(super) fn schema(old: &Value<'_>, new: &Value<'_>, labels: &mut Labels) {
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
