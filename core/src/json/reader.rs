//! The strict JSON reader.
//!
//! It accepts exactly RFC 8259 JSON and refuses, with the rule and the byte offset, everything two
//! honest parsers could read differently: repeated member names (also after NFC), unpaired
//! surrogate escapes, invalid UTF-8, trailing data. Nesting is tracked on an explicit stack, so a
//! document of a million `[` is refused at the limit without growing the call stack.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::mpsc;

use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

use super::error::{ReadError, Rule};
use super::scan::{self, skip_plain};
use super::value::{Number, Object, Value};
use crate::render;

/// Bounds on what the reader accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest document, in bytes.
    pub max_bytes: usize,
    /// The deepest nesting of arrays and objects; the outermost container is depth 1.
    pub max_depth: usize,
}

/// The nesting limit every pinlog input is held to.
pub const MAX_DEPTH: usize = 256;

impl Limits {
    /// The default depth limit with the given size limit.
    pub fn with_max_bytes(max_bytes: usize) -> Self {
        Limits {
            max_bytes,
            max_depth: MAX_DEPTH,
        }
    }
}

impl Default for Limits {
    /// 64 MiB and a depth of 256.
    fn default() -> Self {
        Limits::with_max_bytes(64 << 20)
    }
}

/// Reads one JSON document.
pub fn parse(input: &[u8], limits: Limits) -> Result<Value<'_>, ReadError> {
    let mut p = Parser::new(input, limits)?;
    let value = p.value(0)?;
    p.end()?;
    Ok(value)
}

/// Reads a document that must be one top-level array, yielding its items one at a time.
///
/// The whole document is held to the same rules as [`parse`]; only one item is materialised at a
/// time, so a listing of any size is digested in memory proportional to its largest item.
pub fn array_items(input: &[u8], limits: Limits) -> Result<ArrayItems<'_>, ReadError> {
    let mut p = Parser::new(input, limits)?;
    p.skip_ws();
    match p.peek() {
        Some(b'[') => {}
        Some(_) => return Err(p.error(Rule::Syntax, "expected a JSON array at the top level")),
        None => return Err(p.error(Rule::UnexpectedEnd, "empty document")),
    }
    p.pos += 1;
    p.skip_ws();
    let state = if p.peek() == Some(b']') {
        p.pos += 1;
        p.end()?;
        ItemsState::Done
    } else {
        ItemsState::First
    };
    Ok(ArrayItems {
        p,
        state,
        stop: Stop::End,
    })
}

/// The items of a top-level array; see [`array_items`].
pub struct ArrayItems<'a> {
    p: Parser<'a>,
    state: ItemsState,
    /// Where these items end.
    stop: Stop,
}

/// Where the items of a (possibly split) array end.
enum Stop {
    /// At the closing bracket.
    End,
    /// At the comma the other part's scan finds, the first item boundary at or after `at`; it is
    /// sent once found, and `None` (or a closed channel) means the array was not split after all.
    Split {
        at: usize,
        boundary: mpsc::Receiver<Option<usize>>,
    },
    /// At this comma.
    Comma(usize),
}

/// The second part of a split array, before its start is known; see [`ArrayItems::split_near`].
pub struct SecondPart<'a> {
    p: Parser<'a>,
    at: usize,
    boundary: mpsc::Sender<Option<usize>>,
}

impl<'a> SecondPart<'a> {
    /// Finds the first item boundary at or after the place asked for, tells the first part, and
    /// returns the items after it; `None` if there is no such boundary, and then the first part
    /// reads to the end.
    pub fn items(self) -> Option<ArrayItems<'a>> {
        let comma = scan::next_item_separator(self.p.bytes, self.p.pos, self.at);
        // The first part may have stopped early on a refused item and gone; nothing waits then.
        let _ = self.boundary.send(comma);
        let mut p = self.p;
        p.pos = comma? + 1;
        Some(ArrayItems {
            p,
            state: ItemsState::First,
            stop: Stop::End,
        })
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ItemsState {
    First,
    Next,
    Done,
}

impl<'a> ArrayItems<'a> {
    /// Splits the items not yet read in two, at the first item boundary at or after byte `at`,
    /// so that two threads can read them: this one keeps the items before the boundary, the
    /// returned part finds the boundary (a quick scan that follows only strings and brackets) and
    /// reads the items after it.
    ///
    /// Reading this part strictly confirms the boundary: its items must end exactly there, or
    /// reading them fails (rule `syntax`). Only when this part reads without a refusal is the
    /// other part's reading the same as a reading of the whole.
    pub fn split_near(&mut self, at: usize) -> Option<SecondPart<'a>> {
        if self.state != ItemsState::First || !matches!(self.stop, Stop::End) {
            return None;
        }
        let (tell, boundary) = mpsc::channel();
        self.stop = Stop::Split { at, boundary };
        Some(SecondPart {
            p: self.p.clone(),
            at,
            boundary: tell,
        })
    }

    /// Whether the comma just read at `comma` ends this part: `Some(Ok)` to stop there,
    /// `Some(Err)` when it lies past the boundary this part had to stop at.
    fn stops_at(&mut self, comma: usize) -> Option<Result<(), ReadError>> {
        if let Stop::Split { at, boundary } = &self.stop {
            if comma < *at {
                return None;
            }
            self.stop = match boundary.recv() {
                Ok(Some(b)) => Stop::Comma(b),
                _ => Stop::End,
            };
        }
        match self.stop {
            Stop::Comma(b) if comma == b => Some(Ok(())),
            Stop::Comma(b) if comma > b => Some(Err(self.p.error_at(
                Rule::Syntax,
                comma,
                "the listing was split at a place that is not between two items",
            ))),
            _ => None,
        }
    }
}

impl<'a> Iterator for ArrayItems<'a> {
    type Item = Result<Value<'a>, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.state {
            ItemsState::Done => None,
            ItemsState::First => {
                self.state = ItemsState::Next;
                Some(self.item())
            }
            ItemsState::Next => match self.p.after_item() {
                Ok(true) => match self.stops_at(self.p.pos - 1) {
                    None => Some(self.item()),
                    Some(stop) => {
                        self.state = ItemsState::Done;
                        stop.err().map(Err)
                    }
                },
                Ok(false) if matches!(self.stop, Stop::Comma(_)) => {
                    self.state = ItemsState::Done;
                    Some(Err(self.p.error(
                        Rule::Syntax,
                        "the listing was split at a place that is not between two items",
                    )))
                }
                Ok(false) => {
                    self.state = ItemsState::Done;
                    self.p.end().err().map(Err)
                }
                Err(e) => {
                    self.state = ItemsState::Done;
                    Some(Err(e))
                }
            },
        }
    }
}

impl<'a> ArrayItems<'a> {
    fn item(&mut self) -> Result<Value<'a>, ReadError> {
        let item = self.p.value(1);
        if item.is_err() {
            self.state = ItemsState::Done;
        }
        item
    }
}

/// An array or object still open while the reader works inside it.
enum Frame<'a> {
    Array(Vec<Value<'a>>),
    Object {
        members: Vec<(Cow<'a, str>, Value<'a>)>,
        names: NameSet<'a>,
        /// The name of the member whose value is being read.
        name: Cow<'a, str>,
    },
}

#[derive(Clone)]
struct Parser<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    max_depth: usize,
}

impl<'a> Parser<'a> {
    fn new(input: &'a [u8], limits: Limits) -> Result<Self, ReadError> {
        if input.len() > limits.max_bytes {
            return Err(ReadError {
                rule: Rule::TooLarge,
                offset: limits.max_bytes,
                detail: format!(
                    "the document has {} bytes, more than the limit of {}",
                    input.len(),
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
            max_depth: limits.max_depth,
        })
    }

    fn error(&self, rule: Rule, detail: impl Into<String>) -> ReadError {
        self.error_at(rule, self.pos, detail)
    }

    fn error_at(&self, rule: Rule, offset: usize, detail: impl Into<String>) -> ReadError {
        ReadError {
            rule,
            offset,
            detail: detail.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// After the document: only whitespace may follow.
    fn end(&mut self) -> Result<(), ReadError> {
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
    fn after_item(&mut self) -> Result<bool, ReadError> {
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

    fn unexpected(&self, wanted: &str) -> ReadError {
        let found = self.src[self.pos..].chars().next().unwrap_or(' ');
        self.error(
            Rule::Syntax,
            format!("expected {wanted}, found {}", render::quoted_char(found)),
        )
    }

    /// Reads one value whose outermost container, if any, sits at `base_depth + 1`.
    fn value(&mut self, base_depth: usize) -> Result<Value<'a>, ReadError> {
        let mut stack: Vec<Frame<'a>> = Vec::new();
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
                        if self.peek() == Some(b']') {
                            self.pos += 1;
                            Value::Array(Vec::new())
                        } else {
                            stack.push(Frame::Array(Vec::new()));
                            continue;
                        }
                    } else if self.peek() == Some(b'}') {
                        self.pos += 1;
                        Value::Object(Object::default())
                    } else {
                        let mut names = NameSet::default();
                        let members = Vec::new();
                        let name = self.member_name(&mut names, &members)?;
                        stack.push(Frame::Object {
                            members,
                            names,
                            name,
                        });
                        continue;
                    }
                }
                Some(b'"') => Value::String(self.string()?),
                Some(b't') => self.literal("true", Value::Bool(true))?,
                Some(b'f') => self.literal("false", Value::Bool(false))?,
                Some(b'n') => self.literal("null", Value::Null)?,
                Some(b'-' | b'0'..=b'9') => Value::Number(self.number()?),
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
                    Some(Frame::Array(items)) => {
                        items.push(done);
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                break;
                            }
                            Some(b']') => {
                                self.pos += 1;
                                let Some(Frame::Array(items)) = stack.pop() else {
                                    unreachable!("the top frame is an array")
                                };
                                done = Value::Array(items);
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
                    Some(Frame::Object {
                        members,
                        names,
                        name,
                    }) => {
                        members.push((std::mem::take(name), done));
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                self.skip_ws();
                                *name = self.member_name(names, members)?;
                                break;
                            }
                            Some(b'}') => {
                                self.pos += 1;
                                let Some(Frame::Object { members, .. }) = stack.pop() else {
                                    unreachable!("the top frame is an object")
                                };
                                done = Value::Object(Object::from_checked(members));
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
    fn member_name(
        &mut self,
        names: &mut NameSet<'a>,
        members: &[(Cow<'a, str>, Value<'a>)],
    ) -> Result<Cow<'a, str>, ReadError> {
        if self.peek() != Some(b'"') {
            return Err(match self.peek() {
                None => self.error(Rule::UnexpectedEnd, "the document ends inside an object"),
                Some(_) => self.unexpected("a member name in double quotes"),
            });
        }
        let at = self.pos;
        let name = self.string()?;
        if let Some(earlier) = names.insert(name.clone(), members) {
            let (rule, what) = if members[earlier].0 == name {
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

    fn literal(&mut self, word: &'static str, value: Value<'a>) -> Result<Value<'a>, ReadError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.unexpected("a JSON value"))
        }
    }

    /// Reads a number literal, checked against RFC 8259's grammar, and keeps its text.
    fn number(&mut self) -> Result<Number<'a>, ReadError> {
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
        let bad = |at: usize, what: &str| ReadError {
            rule: Rule::InvalidNumber,
            offset: at,
            detail: what.to_string(),
        };
        match b.get(i) {
            Some(b'0') => {
                i += 1;
                if b.get(i).is_some_and(u8::is_ascii_digit) {
                    return Err(bad(start, "a number with a leading zero"));
                }
            }
            Some(b'1'..=b'9') => i = digits(i),
            _ => return Err(bad(start, "a minus sign without digits")),
        }
        if b.get(i) == Some(&b'.') {
            let after = digits(i + 1);
            if after == i + 1 {
                return Err(bad(start, "a decimal point without digits after it"));
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
                return Err(bad(start, "an exponent without digits"));
            }
            i = after;
        }
        self.pos = i;
        Ok(Number::from_checked(&self.src[start..i]))
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
                    let c = self.escape()?;
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

    /// Reads one escape sequence, starting at its backslash.
    fn escape(&mut self) -> Result<char, ReadError> {
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
                let first = self.hex4(at)?;
                self.pos = at + 6;
                return match first {
                    0xD800..=0xDBFF => {
                        let low = if self.bytes[self.pos..].starts_with(b"\\u") {
                            Some(self.hex4(self.pos)?)
                        } else {
                            None
                        };
                        match low {
                            Some(low @ 0xDC00..=0xDFFF) => {
                                self.pos += 6;
                                let cp = 0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00);
                                Ok(char::from_u32(cp).expect("a surrogate pair decodes to a scalar value"))
                            }
                            _ => Err(self.error_at(
                                Rule::UnpairedSurrogate,
                                at,
                                format!("\\u{first:04X} is a high surrogate with no low surrogate after it"),
                            )),
                        }
                    }
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
            None => {
                return Err(self.error_at(
                    Rule::UnexpectedEnd,
                    at,
                    "the document ends inside an escape",
                ))
            }
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

    /// The four hex digits of the `\u` escape at `at`.
    fn hex4(&self, at: usize) -> Result<u32, ReadError> {
        let digits = self.bytes.get(at + 2..at + 6).ok_or_else(|| {
            self.error_at(
                Rule::UnexpectedEnd,
                at,
                "the document ends inside a \\u escape",
            )
        })?;
        digits.iter().try_fold(0u32, |acc, &d| {
            let v = (d as char).to_digit(16).ok_or_else(|| {
                self.error_at(
                    Rule::InvalidEscape,
                    at,
                    "\\u must be followed by four hex digits",
                )
            })?;
            Ok(acc * 16 + v)
        })
    }
}

/// Finds repeats among the member names of one object, compared after NFC.
///
/// Nearly every name is its own NFC form (all ASCII names are), so names are compared as they stand
/// in the object's member list; only the few that NFC changes keep their normal form here.
#[derive(Default)]
struct NameSet<'a> {
    /// The NFC forms of earlier names that NFC changes, by member index.
    changed: Vec<(usize, Cow<'a, str>)>,
    /// NFC form to member index, built once an object is large enough that a scan would be
    /// quadratic.
    index: Option<HashMap<Cow<'a, str>, usize>>,
}

/// Past this many members, names are found through a hash map rather than a scan.
const LINEAR_NAMES: usize = 16;

impl<'a> NameSet<'a> {
    /// The NFC form of member `i`, whose name as written is `raw`.
    fn normal<'s>(&'s self, i: usize, raw: &'s Cow<'a, str>) -> &'s Cow<'a, str> {
        self.changed
            .iter()
            .find(|(at, _)| *at == i)
            .map_or(raw, |(_, n)| n)
    }

    /// Checks the name of member number `members.len()`; returns the index of an earlier member
    /// with the same NFC form, if any.
    fn insert(
        &mut self,
        name: Cow<'a, str>,
        members: &[(Cow<'a, str>, Value<'a>)],
    ) -> Option<usize> {
        let position = members.len();
        let nfc = nfc_form(name.clone());
        if let Some(index) = &mut self.index {
            if let Some(&i) = index.get(&nfc) {
                return Some(i);
            }
            index.insert(nfc, position);
            return None;
        }
        let earlier = members
            .iter()
            .enumerate()
            .position(|(i, (raw, _))| *self.normal(i, raw) == *nfc);
        if earlier.is_some() {
            return earlier;
        }
        if nfc != name {
            self.changed.push((position, nfc.clone()));
        }
        if position + 1 == LINEAR_NAMES {
            let mut index: HashMap<Cow<'a, str>, usize> = members
                .iter()
                .enumerate()
                .map(|(i, (raw, _))| (self.normal(i, raw).clone(), i))
                .collect();
            index.insert(nfc, position);
            self.index = Some(index);
        }
        None
    }
}

/// The NFC form of a name, borrowing when it already is in NFC.
fn nfc_form(name: Cow<'_, str>) -> Cow<'_, str> {
    if name.is_ascii() || is_nfc_quick(name.chars()) == IsNormalized::Yes {
        return name;
    }
    let normal: String = name.nfc().collect();
    if normal == name {
        name
    } else {
        Cow::Owned(normal)
    }
}
