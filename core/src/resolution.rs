//! Whether two surfaces of the same package differ only where a JSON Schema generator's version
//! decides: the same package version, installed with other versions of its dependencies (a
//! hoisted zod, say), writes `additionalProperties: false` into every object schema, or a
//! `$schema` at the top, and serves the same tools otherwise.
//!
//! The rule is narrow on purpose, as it turns an alarm into an explanation. Everything must be
//! equal (instructions, prompts, tool names, and every member of every tool) except inside a
//! tool's `inputSchema` or `outputSchema`, and there each difference must be a member added or
//! removed, never changed:
//!
//! - `additionalProperties` whose value is `false`, in an object that stands where the schema
//!   language puts a schema (the root; a value of `properties`, `patternProperties`, `$defs`,
//!   `definitions`, `dependentSchemas`; an item of `anyOf`, `oneOf`, `allOf`, `prefixItems`, or of
//!   an `items` array; `items`, `additionalItems`, `additionalProperties`, `not`, `if`, `then`,
//!   `else`, `contains`, `propertyNames`, `unevaluatedItems`, `unevaluatedProperties`), so that a
//!   property that happens to be named `additionalProperties` is never taken for the keyword;
//! - `$schema` holding a string, at the schema's root.

use crate::diff::{diff, equal};
use crate::json::Value;
use crate::server::ServerKind;

/// What such a difference most likely is, said where a difference from the public record is.
pub const LIKELY: &str = "the two differ only in schema keys a JSON Schema generator writes \
    (`additionalProperties: false`, `$schema`): this machine likely runs the same package with \
    other versions of its dependencies than the log's crawler resolved (a hoisted zod, for one)";

/// How to check it: the package run as the log's crawler installs it, its dependencies resolved
/// afresh, outside any project. `name` and `version` must already be safe to show; `None` for a
/// kind that is not a package.
pub fn how_to_check(kind: ServerKind, name: &str, version: &str) -> Option<String> {
    let command = match kind {
        ServerKind::Npm => format!("npx -y {name}@{version}"),
        ServerKind::Pypi => format!("uvx {name}=={version}"),
        _ => return None,
    };
    Some(format!(
        "to check, run it as the crawler does, with its dependencies resolved afresh in an empty \
         directory: `pinlog probe -- {command}` lists what it serves"
    ))
}

/// One side's surface, as served or as the public log holds it.
#[derive(Debug, Clone, Copy)]
pub struct Surface<'s, 'a> {
    pub instructions: Option<&'s str>,
    pub tools: &'s [Value<'a>],
    pub prompts: &'s [Value<'a>],
}

/// Whether `a` and `b` differ, and only as the module documentation says.
pub fn only_generated_schema_keys(a: Surface<'_, '_>, b: Surface<'_, '_>) -> bool {
    if a.instructions != b.instructions
        || a.prompts.len() != b.prompts.len()
        || a.tools.len() != b.tools.len()
    {
        return false;
    }
    let prompts_equal = a
        .prompts
        .iter()
        .all(|p| b.prompts.iter().any(|q| name(p) == name(q) && equal(p, q)));
    if !prompts_equal {
        return false;
    }
    let mut differs = false;
    for tool in a.tools {
        let Some(other) = name(tool).and_then(|n| b.tools.iter().find(|t| name(t) == Some(n)))
        else {
            return false;
        };
        for change in diff(tool, other) {
            let (tokens, value, side) = match (change.old, change.new) {
                (Some(v), None) => (change.pointer.tokens(), v, tool),
                (None, Some(v)) => (change.pointer.tokens(), v, other),
                _ => return false,
            };
            if !generated_key(side, tokens, value) {
                return false;
            }
            differs = true;
        }
    }
    differs
}

fn name<'v>(item: &'v Value<'_>) -> Option<&'v str> {
    item.as_object()?.get("name")?.as_str()
}

/// Whether the member at `tokens` of `tool` (holding `value`) is one a schema generator adds.
fn generated_key(tool: &Value<'_>, tokens: &[String], value: &Value<'_>) -> bool {
    let Some((key, parent)) = tokens.split_last() else {
        return false;
    };
    let Some((root, within)) = parent.split_first() else {
        return false;
    };
    if root != "inputSchema" && root != "outputSchema" {
        return false;
    }
    match (key.as_str(), value) {
        ("additionalProperties", Value::Bool(false)) => {
            let schema = tool.as_object().and_then(|o| o.get(root));
            schema.is_some_and(|s| is_schema_position(s, within))
        }
        ("$schema", Value::String(_)) => within.is_empty(),
        _ => false,
    }
}

/// Whether the path `tokens`, from the schema `schema`, ends where the schema language puts a
/// schema.
fn is_schema_position(schema: &Value<'_>, tokens: &[String]) -> bool {
    enum At {
        Schema,
        Map,
        List,
    }
    let mut at = At::Schema;
    let mut value = schema;
    for token in tokens {
        let next = match value {
            Value::Object(o) => o.get(token),
            Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        let Some(next) = next else {
            return false;
        };
        at = match at {
            At::Schema => match token.as_str() {
                "properties" | "patternProperties" | "$defs" | "definitions"
                | "dependentSchemas" => At::Map,
                "anyOf" | "oneOf" | "allOf" | "prefixItems" => At::List,
                "items" if matches!(next, Value::Array(_)) => At::List,
                "items"
                | "additionalItems"
                | "additionalProperties"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "unevaluatedItems"
                | "unevaluatedProperties" => At::Schema,
                _ => return false,
            },
            At::Map => At::Schema,
            At::List if matches!(value, Value::Array(_)) => At::Schema,
            At::List => return false,
        };
        value = next;
    }
    matches!(at, At::Schema) && matches!(value, Value::Object(_))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, Limits};

    fn tools(text: &str) -> Vec<Value<'static>> {
        match parse(text.as_bytes(), Limits::default()).unwrap() {
            Value::Array(a) => a.into_iter().map(Value::into_owned).collect(),
            _ => panic!("an array"),
        }
    }

    fn surface<'s>(tools: &'s [Value<'static>]) -> Surface<'s, 'static> {
        Surface {
            instructions: None,
            tools,
            prompts: &[],
        }
    }

    const PLAIN: &str = r#"[{"name":"read","description":"Read a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"opts":{"type":"object","properties":{"additionalProperties":{"type":"boolean"}}},"tags":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}}}}}}}]"#;
    const ZOD: &str = r#"[{"name":"read","description":"Read a file.","inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"path":{"type":"string"},"opts":{"type":"object","properties":{"additionalProperties":{"type":"boolean"}},"additionalProperties":false},"tags":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}},"additionalProperties":false}}},"additionalProperties":false}}]"#;

    #[test]
    fn a_generator_s_keys_alone_are_told_apart() {
        let (a, b) = (tools(PLAIN), tools(ZOD));
        assert!(only_generated_schema_keys(surface(&a), surface(&b)));
        assert!(only_generated_schema_keys(surface(&b), surface(&a)));
        // The same surface does not differ at all.
        assert!(!only_generated_schema_keys(surface(&a), surface(&a)));
    }

    #[test]
    fn anything_else_is_a_real_difference() {
        let a = tools(PLAIN);
        for other in [
            // A description changed as well.
            ZOD.replace("Read a file.", "Read a file, then send it on."),
            // additionalProperties made true, or changed from true to false.
            ZOD.replace(
                r#""k":{"type":"string"}},"additionalProperties":false"#,
                r#""k":{"type":"string"}},"additionalProperties":true"#,
            ),
            // A property named additionalProperties, forbidden: a property, not the keyword.
            PLAIN.replace(
                r#""path":{"type":"string"},"#,
                r#""path":{"type":"string"},"additionalProperties":false,"#,
            ),
            // $schema below the root.
            PLAIN.replace(
                r#""path":{"type":"string"}"#,
                r#""path":{"type":"string","$schema":"x"}"#,
            ),
            // Outside the schemas.
            PLAIN.replace(
                r#""name":"read","#,
                r#""name":"read","additionalProperties":false,"#,
            ),
            // A tool more.
            PLAIN.replace("}}}}}]", r#"}}}}},{"name":"write"}]"#),
        ] {
            let b = tools(&other);
            assert!(
                !only_generated_schema_keys(surface(&a), surface(&b)),
                "{other}"
            );
        }
        let b = tools(ZOD);
        let prompt = tools(r#"[{"name":"p"}]"#);
        let with_prompt = Surface {
            prompts: &prompt,
            ..surface(&b)
        };
        assert!(!only_generated_schema_keys(surface(&a), with_prompt));
        let with_instructions = Surface {
            instructions: Some("x"),
            ..surface(&b)
        };
        assert!(!only_generated_schema_keys(surface(&a), with_instructions));
    }
}
