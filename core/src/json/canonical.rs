//! The RFC 8785 (JCS) canonical writer.

use std::cmp::Ordering;
use std::fmt;

use super::number::{self, Undecidability};
use super::scan::skip_plain;
use super::value::{Object, Value};
use crate::pointer::{JsonPointer, Segment};
use crate::render;

/// A value with literals that no double stands for unambiguously; it has no canonical form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undecidable {
    /// Such literals, in document order: the first 64, fewer if their text and pointers run past
    /// 64 KiB, so that a document of many cannot make its report larger than itself many times over.
    pub literals: Vec<UndecidableLiteral>,
    /// How many more there are, after those listed.
    pub more: usize,
}

/// Gathers the undecidable literals of one value, within the bounds [`Undecidable`] states.
#[derive(Debug, Default)]
pub(super) struct Findings {
    literals: Vec<UndecidableLiteral>,
    bytes: usize,
    more: usize,
}

impl Findings {
    const MAX_LITERALS: usize = 64;
    const MAX_BYTES: usize = 64 << 10;

    /// Records one literal; `pointer` is only called for literals that are kept.
    pub(super) fn add(
        &mut self,
        literal: &str,
        reason: Undecidability,
        pointer: impl FnOnce() -> JsonPointer,
    ) {
        if self.literals.len() >= Self::MAX_LITERALS || self.bytes >= Self::MAX_BYTES {
            self.more += 1;
            return;
        }
        let pointer = pointer();
        self.bytes += literal.len() + pointer.tokens().iter().map(|t| t.len() + 1).sum::<usize>();
        self.literals.push(UndecidableLiteral {
            pointer,
            literal: literal.to_string(),
            reason,
        });
    }

    pub(super) fn is_empty(&self) -> bool {
        self.literals.is_empty() && self.more == 0
    }

    pub(super) fn clear(&mut self) {
        self.literals.clear();
        self.bytes = 0;
        self.more = 0;
    }

    /// The findings so far as an error, leaving this empty.
    pub(super) fn take(&mut self) -> Undecidable {
        let found = Undecidable {
            literals: std::mem::take(&mut self.literals),
            more: self.more,
        };
        self.clear();
        found
    }
}

/// One number literal without a canonical form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndecidableLiteral {
    /// Where it is, from the root of the value that was canonicalised.
    pub pointer: JsonPointer,
    /// The literal exactly as written.
    pub literal: String,
    pub reason: Undecidability,
}

impl fmt::Display for UndecidableLiteral {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at {} is {}",
            self.literal,
            render::safe(&self.pointer.to_string()),
            self.reason
        )
    }
}

impl fmt::Display for Undecidable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("undecidable number literal")?;
        if self.literals.len() > 1 {
            f.write_str("s")?;
        }
        for (i, l) in self.literals.iter().enumerate() {
            f.write_str(if i == 0 { ": " } else { "; " })?;
            l.fmt(f)?;
        }
        if self.more > 0 {
            write!(f, "; and {} more", self.more)?;
        }
        Ok(())
    }
}

impl std::error::Error for Undecidable {}

/// The canonical bytes of a value.
pub fn to_canonical(value: &Value<'_>) -> Result<Vec<u8>, Undecidable> {
    let mut out = Vec::new();
    write_canonical(value, &mut out)?;
    Ok(out)
}

/// Appends the canonical bytes of a value to `out`. On error, `out` holds partial output.
pub fn write_canonical(value: &Value<'_>, out: &mut Vec<u8>) -> Result<(), Undecidable> {
    let mut w = Writer {
        out,
        undecidable: false,
        keep_literals: false,
    };
    w.value(value);
    if !w.undecidable {
        return Ok(());
    }
    // The rare case: walk again, in document order, to name each literal where it is.
    let mut found = Findings::default();
    collect_undecidable(value, &mut Vec::new(), &mut found);
    Err(found.take())
}

/// Appends a value in canonical form, except that a number with no canonical form is written as
/// the literal it was read as: for documents that carry what a server served (manifests), where
/// an undecidable number must stay visible rather than fail the whole document.
pub fn write_as_served(value: &Value<'_>, out: &mut Vec<u8>) {
    Writer {
        out,
        undecidable: false,
        keep_literals: true,
    }
    .value(value);
}

struct Writer<'o> {
    out: &'o mut Vec<u8>,
    undecidable: bool,
    keep_literals: bool,
}

impl Writer<'_> {
    // Recursion is bounded by the depth of the value; read values are at most 256 deep.
    fn value(&mut self, v: &Value<'_>) {
        match v {
            Value::Null => self.out.extend_from_slice(b"null"),
            Value::Bool(true) => self.out.extend_from_slice(b"true"),
            Value::Bool(false) => self.out.extend_from_slice(b"false"),
            Value::Number(n) => {
                if write_number(self.out, n.literal()).is_err() {
                    self.undecidable = true;
                    if self.keep_literals {
                        self.out.extend_from_slice(n.literal().as_bytes());
                    }
                }
            }
            Value::String(s) => write_string(self.out, s),
            Value::Array(items) => {
                self.out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.value(item);
                }
                self.out.push(b']');
            }
            Value::Object(o) => self.object(o),
        }
    }

    fn object(&mut self, o: &Object<'_>) {
        let mut members: Vec<(&str, &Value<'_>)> = o.iter().collect();
        // Input that is already canonical, or written by a sorting encoder, needs no sort.
        if !members.is_sorted_by(|a, b| cmp_utf16(a.0, b.0).is_lt()) {
            members.sort_unstable_by(|a, b| cmp_utf16(a.0, b.0));
        }
        self.out.push(b'{');
        for (i, (name, v)) in members.into_iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            write_string(self.out, name);
            self.out.push(b':');
            self.value(v);
        }
        self.out.push(b'}');
    }
}

/// Every undecidable literal in `v`, in document order, with where it is.
fn collect_undecidable<'v>(v: &'v Value<'_>, path: &mut Vec<Segment<'v>>, found: &mut Findings) {
    match v {
        Value::Number(n) => {
            if let Err(reason) = number::to_f64(n.literal()) {
                found.add(n.literal(), reason, || JsonPointer::from_segments(path));
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(Segment::Index(i));
                collect_undecidable(item, path, found);
                path.pop();
            }
        }
        Value::Object(o) => {
            for (name, item) in o.iter() {
                path.push(Segment::Name(name));
                collect_undecidable(item, path, found);
                path.pop();
            }
        }
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
}

/// Appends the canonical form of a number literal, or says why it has none (and appends nothing).
pub(super) fn write_number(out: &mut Vec<u8>, literal: &str) -> Result<(), Undecidability> {
    // Integers of at most 15 digits are below 2^53 and already in ECMAScript form, but for -0.
    let digits = literal.strip_prefix('-').unwrap_or(literal);
    if digits.len() <= 15 && digits.bytes().all(|b| b.is_ascii_digit()) {
        if digits == "0" {
            out.push(b'0');
        } else {
            out.extend_from_slice(literal.as_bytes());
        }
        return Ok(());
    }
    number::to_f64(literal).map(|v| number::write_es(out, v))
}

/// Appends a JSON array of strings, each in RFC 8785 form, in the order given.
pub fn write_strings<'s>(out: &mut Vec<u8>, items: impl IntoIterator<Item = &'s str>) {
    out.push(b'[');
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_string(out, item);
    }
    out.push(b']');
}

/// Appends a string in RFC 8785 form: `"` and `\` escaped, controls as short or `\u00xx`
/// escapes, everything else as UTF-8.
pub fn write_string(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.push(b'"');
    let mut from = 0;
    loop {
        let stop = skip_plain(bytes, from);
        out.extend_from_slice(&bytes[from..stop]);
        let Some(&b) = bytes.get(stop) else { break };
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\x08' => out.extend_from_slice(b"\\b"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\x0c' => out.extend_from_slice(b"\\f"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0xf)]);
            }
        }
        from = stop + 1;
    }
    out.push(b'"');
}

/// Orders two strings by their UTF-16 code units, as RFC 8785 sorts member names.
///
/// UTF-8 byte order is code point order, which differs from UTF-16 order in one case only: a
/// character above U+FFFF (UTF-16 D800–DBFF first; UTF-8 lead byte F0–F4) against one in
/// U+E000–U+FFFF (lead byte EE or EF). So the first differing byte decides, unless it is that pair
/// of lead bytes. A differing continuation byte follows equal lead bytes, where the orders agree.
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    match a.iter().zip(b).position(|(x, y)| x != y) {
        None => a.len().cmp(&b.len()),
        Some(i) => {
            let (x, y) = (a[i], b[i]);
            let supplementary = |lead: u8| lead >= 0xF0;
            let upper_bmp = |lead: u8| lead == 0xEE || lead == 0xEF;
            if (supplementary(x) && upper_bmp(y)) || (upper_bmp(x) && supplementary(y)) {
                y.cmp(&x)
            } else {
                x.cmp(&y)
            }
        }
    }
}
