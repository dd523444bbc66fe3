//! The canonical form laid out for people: the same members in the same order, numbers and
//! strings written as the canonical writer writes them, with line breaks and two-space indents.
//! For files that are committed and reviewed as diffs (lockfiles); what is digested or signed is
//! always the canonical form, which this layout reads back to.

use super::canonical::{cmp_utf16, write_as_served, write_string};
use super::value::Value;

/// Appends `value` laid out one member or item per line, as served: a number without a canonical
/// form is written as the literal it was read as (see [`write_as_served`]).
pub fn write_pretty(value: &Value<'_>, out: &mut Vec<u8>) {
    pretty(value, 0, out);
}

// Recursion is bounded by the depth of the value; read values are at most 256 deep.
fn pretty(value: &Value<'_>, depth: usize, out: &mut Vec<u8>) {
    let indent = |out: &mut Vec<u8>, depth: usize| {
        out.push(b'\n');
        out.resize(out.len() + 2 * depth, b' ');
    };
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                indent(out, depth + 1);
                pretty(item, depth + 1, out);
            }
            indent(out, depth);
            out.push(b']');
        }
        Value::Object(o) if !o.is_empty() => {
            let mut members: Vec<_> = o.iter().collect();
            members.sort_unstable_by(|a, b| cmp_utf16(a.0, b.0));
            out.push(b'{');
            for (i, (name, v)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                indent(out, depth + 1);
                write_string(out, name);
                out.extend_from_slice(b": ");
                pretty(v, depth + 1, out);
            }
            indent(out, depth);
            out.push(b'}');
        }
        _ => write_as_served(value, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, Limits};

    #[test]
    fn lays_out_the_canonical_form_and_reads_back_to_it() {
        let doc = br#"{"b":[1.0,{"z":null,"a":"\u00e9\n"}],"a":{},"c":[],"n":9007199254740993}"#;
        let v = parse(doc, Limits::default()).unwrap();
        let mut out = Vec::new();
        write_pretty(&v, &mut out);
        assert_eq!(
            String::from_utf8(out.clone()).unwrap(),
            "{\n  \"a\": {},\n  \"b\": [\n    1,\n    {\n      \"a\": \"\u{e9}\\n\",\n      \"z\": null\n    }\n  ],\n  \"c\": [],\n  \"n\": 9007199254740993\n}"
        );
        let (mut again, mut served) = (Vec::new(), Vec::new());
        write_as_served(&parse(&out, Limits::default()).unwrap(), &mut again);
        write_as_served(&v, &mut served);
        assert_eq!(again, served);
    }
}
