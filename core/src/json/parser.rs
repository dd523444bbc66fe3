//! The strict JSON grammar: tokens, nesting, and every refusal. What is read goes to a
//! [`Builder`]; the reader decides what is JSON, the builder only what to make of it.

use std::borrow::Cow;

use super::build::Builder;
use super::error::{ReadError, Rule};
use super::names::NameSet;
use super::reader::Limits;
use super::scan::skip_plain;
use crate::render;

/// An array or object still open while the reader works inside it.
enum Frame<'a, B: Builder<'a>> {
    Array(B::Array),
    Object(B::Object, NameSet<'a>),
}

#[derive(Clone)]
pub(super) struct Parser<'a> {
    src: &'a str,
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
    max_depth: usize,
    /// Name sets of closed objects, emptied, for the next objects to reuse.
    spare_names: Vec<NameSet<'a>>,
}

impl<'a> Parser<'a> {
    pub(super) fn new(input: &'a [u8], limits: Limits) -> Result<Self, ReadError> {
        if input.len() > limits.max_bytes {
            return Err(ReadError {
                rule: Rule::TooLarge,
                offset: limits.max_bytes,
                detail: format!(
                    "the document is larger than the limit of {} bytes",
                    limits.max_bytes
                ),
            });
        }
        let src = std::str::from_utf8(input).map_err(|e| ReadError {
            rule: Rule::InvalidUtf8,
            offset: e.valid_up_to(),
            detail: "bytes that are not UTF-8".into(),
        })?;
        if src.starts_with('\u{feff}') {
            return Err(ReadError {
                rule: Rule::ByteOrderMark,
                offset: 0,
                detail: "a byte order mark before the document; save the file without one".into(),
            });
        }
        Ok(Parser {
            src,
            bytes: input,
            pos: 0,
            max_depth: limits.max_depth.min(super::reader::MAX_DEPTH),
            spare_names: Vec::new(),
        })
    }

    pub(super) fn error(&self, rule: Rule, detail: impl Into<String>) -> ReadError {
        self.error_at(rule, self.pos, detail)
    }

    pub(super) fn error_at(
        &self,
        rule: Rule,
        offset: usize,
        detail: impl Into<String>,
    ) -> ReadError {
        ReadError {
            rule,
            offset,
            detail: detail.into(),
        }
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    pub(super) fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// After the document: only whitespace may follow.
    pub(super) fn end(&mut self) -> Result<(), ReadError> {
        self.skip_ws();
        if self.pos < self.bytes.len() {
            return Err(self.error(
                Rule::TrailingData,
                "more data after the end of the document",
            ));
        }
        Ok(())
    }

    /// After an item of the top-level array: `true` at a comma, `false` at the closing bracket.
    pub(super) fn after_item(&mut self) -> Result<bool, ReadError> {
        self.skip_ws();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(b']') => {
                self.pos += 1;
                Ok(false)
            }
            Some(_) => Err(self.unexpected("',' or ']' after an array item")),
            None => Err(self.error(Rule::UnexpectedEnd, "the document ends inside an array")),
        }
    }

    pub(super) fn unexpected(&self, wanted: &str) -> ReadError {
        let found = self.src[self.pos..].chars().next().unwrap_or(' ');
        self.error(
            Rule::Syntax,
            format!("expected {wanted}, found {}", render::quoted_char(found)),
        )
    }

    /// Reads one value whose outermost container, if any, sits at `base_depth + 1`, handing what
    /// it reads to `builder`.
    pub(super) fn drive<B: Builder<'a>>(
        &mut self,
        builder: &mut B,
        base_depth: usize,
    ) -> Result<B::Value, ReadError> {
        let mut stack: Vec<Frame<'a, B>> = Vec::new();
        loop {
            // Read the start of a value: a scalar completes it, a non-empty container opens a frame.
            self.skip_ws();
            let mut done = match self.peek() {
                Some(open @ (b'[' | b'{')) => {
                    if base_depth + stack.len() + 1 > self.max_depth {
                        return Err(self.error(
                            Rule::TooDeep,
                            format!("nesting deeper than {} levels", self.max_depth),
                        ));
                    }
                    self.pos += 1;
                    self.skip_ws();
                    if open == b'[' {
                        let mut array = builder.open_array();
                        if self.peek() == Some(b']') {
                            self.pos += 1;
                            builder.close_array(array)
                        } else {
                            builder.item_start(&mut array);
                            stack.push(Frame::Array(array));
                            continue;
                        }
                    } else {
                        let mut object = builder.open_object();
                        if self.peek() == Some(b'}') {
                            self.pos += 1;
                            builder.close_object(object)
                        } else {
                            let mut names = self.spare_names.pop().unwrap_or_default();
                            let name = self.member_name(&mut names)?;
                            builder.member_start(&mut object, name);
                            stack.push(Frame::Object(object, names));
                            continue;
                        }
                    }
                }
                Some(b'"') => {
                    let s = self.string()?;
                    builder.string(s)
                }
                Some(b't') => {
                    self.literal("true")?;
                    builder.boolean(true)
                }
                Some(b'f') => {
                    self.literal("false")?;
                    builder.boolean(false)
                }
                Some(b'n') => {
                    self.literal("null")?;
                    builder.null()
                }
                Some(b'-' | b'0'..=b'9') => {
                    let n = self.number()?;
                    builder.number(n)
                }
                Some(_) => return Err(self.unexpected("a JSON value")),
                None => {
                    return Err(self.error(
                        Rule::UnexpectedEnd,
                        "the document ends where a value should start",
                    ))
                }
            };
            // Hand the finished value to the open containers, closing those that end here.
            loop {
                match stack.last_mut() {
                    None => return Ok(done),
                    Some(Frame::Array(array)) => {
                        builder.item_end(array, done);
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                builder.item_start(array);
                                break;
                            }
                            Some(b']') => {
                                self.pos += 1;
                                let Some(Frame::Array(array)) = stack.pop() else {
                                    unreachable!("the top frame is an array")
                                };
                                done = builder.close_array(array);
                            }
                            Some(_) => {
                                return Err(self.unexpected("',' or ']' after an array item"))
                            }
                            None => {
                                return Err(self.error(
                                    Rule::UnexpectedEnd,
                                    "the document ends inside an array",
                                ))
                            }
                        }
                    }
                    Some(Frame::Object(object, names)) => {
                        builder.member_end(object, done);
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                self.skip_ws();
                                let name = self.member_name(names)?;
                                builder.member_start(object, name);
                                break;
                            }
                            Some(b'}') => {
                                self.pos += 1;
                                let Some(Frame::Object(object, mut names)) = stack.pop() else {
                                    unreachable!("the top frame is an object")
                                };
                                names.clear();
                                self.spare_names.push(names);
                                done = builder.close_object(object);
                            }
                            Some(_) => {
                                return Err(self.unexpected("',' or '}' after an object member"))
                            }
                            None => {
                                return Err(self.error(
                                    Rule::UnexpectedEnd,
                                    "the document ends inside an object",
                                ))
                            }
                        }
                    }
                }
            }
        }
    }

    /// Reads `"name":` and checks the name against the object's earlier names.
    fn member_name(&mut self, names: &mut NameSet<'a>) -> Result<Cow<'a, str>, ReadError> {
        if self.peek() != Some(b'"') {
            return Err(match self.peek() {
                None => self.error(Rule::UnexpectedEnd, "the document ends inside an object"),
                Some(_) => self.unexpected("a member name in double quotes"),
            });
        }
        let at = self.pos;
        let name = self.string()?;
        if let Some(earlier) = names.insert(name.clone()) {
            let (rule, what) = if earlier == name {
                (Rule::DuplicateMember, "is repeated in one object")
            } else {
                (
                    Rule::NfcEqualMembers,
                    "is the same name as an earlier member after Unicode NFC",
                )
            };
            return Err(self.error_at(
                rule,
                at,
                format!("member name {} {what}", render::quoted(&name, 64)),
            ));
        }
        self.skip_ws();
        match self.peek() {
            Some(b':') => self.pos += 1,
            Some(_) => return Err(self.unexpected("':' after a member name")),
            None => {
                return Err(self.error(Rule::UnexpectedEnd, "the document ends inside an object"))
            }
        }
        Ok(name)
    }

    fn literal(&mut self, word: &'static str) -> Result<(), ReadError> {
        let rest = &self.bytes[self.pos..];
        if rest.starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(())
        } else if word.as_bytes().starts_with(rest) {
            Err(self.error_at(
                Rule::UnexpectedEnd,
                self.bytes.len(),
                format!("the document ends inside `{word}`"),
            ))
        } else {
            Err(self.unexpected("a JSON value"))
        }
    }

    /// Reads a number literal, checked against RFC 8259's grammar, and keeps its text.
    fn number(&mut self) -> Result<&'a str, ReadError> {
        let start = self.pos;
        let b = self.bytes;
        let mut i = start;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        let digits = |mut i: usize| {
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            i
        };
        // `expected` is where a digit had to be: past the end, the document was cut short.
        let bad = |expected: usize, what: &str| {
            if expected >= b.len() {
                self.error_at(
                    Rule::UnexpectedEnd,
                    b.len(),
                    "the document ends inside a number",
                )
            } else {
                self.error_at(Rule::InvalidNumber, start, what)
            }
        };
        match b.get(i) {
            Some(b'0') => {
                i += 1;
                if b.get(i).is_some_and(u8::is_ascii_digit) {
                    return Err(bad(i, "a number with a leading zero"));
                }
            }
            Some(b'1'..=b'9') => i = digits(i),
            _ => return Err(bad(i, "a minus sign without digits")),
        }
        if b.get(i) == Some(&b'.') {
            let after = digits(i + 1);
            if after == i + 1 {
                return Err(bad(i + 1, "a decimal point without digits after it"));
            }
            i = after;
        }
        if let Some(b'e' | b'E') = b.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = b.get(i) {
                i += 1;
            }
            let after = digits(i);
            if after == i {
                return Err(bad(i, "an exponent without digits"));
            }
            i = after;
        }
        self.pos = i;
        Ok(&self.src[start..i])
    }

    /// Reads a string; borrows from the input unless it holds escapes.
    fn string(&mut self) -> Result<Cow<'a, str>, ReadError> {
        let open = self.pos;
        self.pos += 1;
        let start = self.pos;
        let mut owned: Option<String> = None;
        let mut chunk = start;
        loop {
            self.pos = skip_plain(self.bytes, self.pos);
            match self.peek() {
                Some(b'"') => {
                    let text = &self.src[chunk..self.pos];
                    self.pos += 1;
                    return Ok(match owned {
                        None => Cow::Borrowed(text),
                        Some(mut s) => {
                            s.push_str(text);
                            Cow::Owned(s)
                        }
                    });
                }
                Some(b'\\') => {
                    let s = owned.get_or_insert_with(String::new);
                    s.push_str(&self.src[chunk..self.pos]);
                    let c = self.escape(open)?;
                    owned.get_or_insert_with(String::new).push(c);
                    chunk = self.pos;
                }
                Some(c) => {
                    return Err(self.error(
                        Rule::ControlCharacter,
                        format!("control character U+{c:04X} written raw in a string; escape it"),
                    ))
                }
                None => {
                    return Err(self.error_at(
                        Rule::UnexpectedEnd,
                        open,
                        "a string that is never closed",
                    ))
                }
            }
        }
    }

    /// Reads one escape sequence, starting at its backslash, in the string opened at `open`.
    fn escape(&mut self, open: usize) -> Result<char, ReadError> {
        let at = self.pos;
        let c = match self.bytes.get(at + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let first = self.hex4(at, open)?;
                self.pos = at + 6;
                return match first {
                    0xD800..=0xDBFF => self.low_surrogate(first, at, open),
                    0xDC00..=0xDFFF => Err(self.error_at(
                        Rule::UnpairedSurrogate,
                        at,
                        format!(
                            "\\u{first:04X} is a low surrogate with no high surrogate before it"
                        ),
                    )),
                    _ => Ok(char::from_u32(first)
                        .expect("a non-surrogate BMP code point is a scalar value")),
                };
            }
            None => return Err(self.unclosed(open)),
            Some(_) => {
                let found = self.src[at + 1..].chars().next().unwrap_or(' ');
                return Err(self.error_at(
                    Rule::InvalidEscape,
                    at,
                    format!("\\{} is not a JSON escape", render::quoted_char(found)),
                ));
            }
        };
        self.pos = at + 2;
        Ok(c)
    }

    /// After the high surrogate `high` escaped at `at`: its low surrogate, which must follow as
    /// a `\u` escape.
    fn low_surrogate(&mut self, high: u32, at: usize, open: usize) -> Result<char, ReadError> {
        let rest = &self.bytes[self.pos..];
        let low = if rest.starts_with(b"\\u") {
            Some(self.hex4(self.pos, open)?)
        } else if rest.is_empty() || rest == b"\\" {
            return Err(self.unclosed(open));
        } else {
            None
        };
        match low {
            Some(low @ 0xDC00..=0xDFFF) => {
                self.pos += 6;
                let cp = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                Ok(char::from_u32(cp).expect("a surrogate pair decodes to a scalar value"))
            }
            _ => Err(self.error_at(
                Rule::UnpairedSurrogate,
                at,
                format!("\\u{high:04X} is a high surrogate with no low surrogate after it"),
            )),
        }
    }

    /// The document ended inside the string opened at `open`.
    fn unclosed(&self, open: usize) -> ReadError {
        self.error_at(Rule::UnexpectedEnd, open, "a string that is never closed")
    }

    /// The four hex digits of the `\u` escape at `at`, in the string opened at `open`. A digit
    /// that is not hex is an invalid escape; the end of the document before four, an unclosed
    /// string.
    fn hex4(&self, at: usize, open: usize) -> Result<u32, ReadError> {
        let mut value = 0;
        for i in at + 2..at + 6 {
            let Some(&d) = self.bytes.get(i) else {
                return Err(self.unclosed(open));
            };
            let digit = (d as char).to_digit(16).ok_or_else(|| {
                self.error_at(
                    Rule::InvalidEscape,
                    at,
                    "\\u must be followed by four hex digits",
                )
            })?;
            value = value * 16 + digit;
        }
        Ok(value)
    }
}
