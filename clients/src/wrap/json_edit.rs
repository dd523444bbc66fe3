//! JSON (and JSONC) configuration files, edited in place: a reader that records the byte span of
//! every value, and splices that replace only the `command` and `args` values of the servers
//! wrapped. Every other byte of the file (key order, indentation, comments, line endings, the
//! rest of a server entry) is left as it was.
//!
//! The reader takes JSON with what JSONC adds (`//` and `/* */` comments, trailing commas, as VS
//! Code writes them) and a UTF-8 byte order mark. Anything else is refused, and the file is left
//! untouched.

use pinlog_core::json::write_string;
use pinlog_core::render::quoted;

use super::command::{self, Field, Proxy, UnwrapPlan, View, WrapPlan};
use super::splice::{apply, array_separator, Splice};
use super::{Op, Outcome, Planned, ServerReport};
use crate::wrapped::WrappedCommand;

/// Nesting deeper than this is refused rather than risk the stack.
const MAX_DEPTH: usize = 256;

/// A value and the bytes it spans in the file (`start..end`, the value's own text only).
#[derive(Debug)]
pub struct Node {
    pub start: usize,
    pub end: usize,
    pub val: Val,
}

#[derive(Debug)]
pub enum Val {
    Null,
    Bool(bool),
    Number,
    Str(String),
    /// The items, and the offset of a trailing comma after the last one.
    Array(Vec<Node>, Option<usize>),
    Object(Vec<Member>),
}

impl Val {
    /// What kind of value it is, as an error names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Val::Null => "null",
            Val::Bool(_) => "boolean",
            Val::Number => "number",
            Val::Str(_) => "string",
            Val::Array(..) => "array",
            Val::Object(_) => "object",
        }
    }
}

#[derive(Debug)]
pub struct Member {
    pub key: String,
    /// Where the member's name is: its opening quote, and just after its closing one.
    pub key_start: usize,
    pub key_end: usize,
    pub value: Node,
}

/// Where a file stops being JSON.
#[derive(Debug)]
pub struct ParseError {
    pub offset: usize,
    pub what: String,
}

impl ParseError {
    /// `line L, column C: what` (1-based; the column counts characters).
    pub fn describe(&self, src: &[u8]) -> String {
        let upto = &src[..self.offset.min(src.len())];
        let line = upto.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = upto.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        let column = String::from_utf8_lossy(&upto[line_start..]).chars().count() + 1;
        format!("line {line}, column {column}: {}", self.what)
    }
}

struct Reader<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl<'a> Reader<'a> {
    fn err<T>(&self, what: impl Into<String>) -> Result<T, ParseError> {
        Err(ParseError {
            offset: self.i,
            what: what.into(),
        })
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// Whitespace and comments.
    fn skip(&mut self) -> Result<(), ParseError> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.i += 1,
                Some(b'/') if self.s.get(self.i + 1) == Some(&b'/') => {
                    while self.peek().is_some_and(|b| b != b'\n') {
                        self.i += 1;
                    }
                }
                Some(b'/') if self.s.get(self.i + 1) == Some(&b'*') => {
                    let from = self.i;
                    self.i += 2;
                    loop {
                        match self.peek() {
                            None => {
                                self.i = from;
                                return self.err("a comment that is never closed");
                            }
                            Some(b'*') if self.s.get(self.i + 1) == Some(&b'/') => {
                                self.i += 2;
                                break;
                            }
                            Some(_) => self.i += 1,
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self) -> Result<Node, ParseError> {
        let start = self.i;
        let val = match self.peek() {
            None => return self.err("the document ends where a value was expected"),
            Some(b'{') => self.object()?,
            Some(b'[') => self.array()?,
            Some(b'"') => Val::Str(self.string()?),
            Some(b't') => self.literal("true", Val::Bool(true))?,
            Some(b'f') => self.literal("false", Val::Bool(false))?,
            Some(b'n') => self.literal("null", Val::Null)?,
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(_) => return self.err("a value was expected"),
        };
        Ok(Node {
            start,
            end: self.i,
            val,
        })
    }

    fn literal(&mut self, word: &str, val: Val) -> Result<Val, ParseError> {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(val)
        } else {
            self.err("a value was expected")
        }
    }

    fn digits(&mut self) -> usize {
        let from = self.i;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.i += 1;
        }
        self.i - from
    }

    fn number(&mut self) -> Result<Val, ParseError> {
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return self.err("a number was expected"),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return self.err("a digit was expected after the decimal point");
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return self.err("a digit was expected in the exponent");
            }
        }
        Ok(Val::Number)
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let Some(h) = self.s.get(self.i..self.i + 4) else {
            return self.err("a \\u escape needs four hex digits");
        };
        let text = std::str::from_utf8(h).unwrap_or("");
        match u32::from_str_radix(text, 16) {
            Ok(v) if text.bytes().all(|b| b.is_ascii_hexdigit()) => {
                self.i += 4;
                Ok(v)
            }
            _ => self.err("a \\u escape needs four hex digits"),
        }
    }

    fn string(&mut self) -> Result<String, ParseError> {
        self.i += 1; // the opening quote
        let mut out = String::new();
        loop {
            let run = self.i;
            while self
                .peek()
                .is_some_and(|b| b != b'"' && b != b'\\' && b >= 0x20)
            {
                self.i += 1;
            }
            // The whole input was checked to be UTF-8, and runs stop only at ASCII bytes.
            out.push_str(std::str::from_utf8(&self.s[run..self.i]).expect("checked UTF-8"));
            match self.peek() {
                None => return self.err("a string that is never closed"),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    let c = match self.peek() {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.i += 1;
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi) {
                                if !self.s[self.i..].starts_with(b"\\u") {
                                    return self.err("an unpaired surrogate");
                                }
                                self.i += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return self.err("an unpaired surrogate");
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else if (0xDC00..0xE000).contains(&hi) {
                                return self.err("an unpaired surrogate");
                            } else {
                                hi
                            };
                            out.push(char::from_u32(code).expect("a scalar value"));
                            continue;
                        }
                        _ => return self.err("an invalid escape"),
                    };
                    self.i += 1;
                    out.push(c);
                }
                Some(_) => return self.err("a control character in a string"),
            }
        }
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.err("nested too deeply");
        }
        self.i += 1;
        self.skip()
    }

    fn array(&mut self) -> Result<Val, ParseError> {
        self.enter()?;
        let mut items = Vec::new();
        let mut trailing = None;
        loop {
            if self.peek() == Some(b']') {
                break;
            }
            items.push(self.value()?);
            self.skip()?;
            match self.peek() {
                Some(b',') => {
                    let comma = self.i;
                    self.i += 1;
                    self.skip()?;
                    if self.peek() == Some(b']') {
                        trailing = Some(comma);
                        break;
                    }
                }
                Some(b']') => break,
                _ => return self.err("',' or ']' was expected"),
            }
        }
        self.i += 1;
        self.depth -= 1;
        Ok(Val::Array(items, trailing))
    }

    fn object(&mut self) -> Result<Val, ParseError> {
        self.enter()?;
        let mut members = Vec::new();
        loop {
            if self.peek() == Some(b'}') {
                break;
            }
            if self.peek() != Some(b'"') {
                return self.err("a member name was expected");
            }
            let key_start = self.i;
            let key = self.string()?;
            let key_end = self.i;
            self.skip()?;
            if self.peek() != Some(b':') {
                return self.err("':' was expected");
            }
            self.i += 1;
            self.skip()?;
            let value = self.value()?;
            members.push(Member {
                key,
                key_start,
                key_end,
                value,
            });
            self.skip()?;
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.skip()?;
                }
                Some(b'}') => break,
                _ => return self.err("',' or '}' was expected"),
            }
        }
        self.i += 1;
        self.depth -= 1;
        Ok(Val::Object(members))
    }
}

/// Reads a JSON or JSONC document, recording where every value is.
pub fn parse(src: &[u8]) -> Result<Node, ParseError> {
    if let Err(e) = std::str::from_utf8(src) {
        return Err(ParseError {
            offset: e.valid_up_to(),
            what: "not UTF-8".into(),
        });
    }
    let mut r = Reader {
        s: src,
        i: if src.starts_with(b"\xEF\xBB\xBF") {
            3
        } else {
            0
        },
        depth: 0,
    };
    r.skip()?;
    let root = r.value()?;
    r.skip()?;
    if r.i != src.len() {
        return r.err("more after the document");
    }
    Ok(root)
}

/// Where a client keeps its servers in its JSON file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `mcpServers` at the top (Claude Desktop, Cursor, Gemini CLI, Windsurf, Cline, `.mcp.json`).
    McpServers,
    /// `mcpServers` at the top and in each of `projects.*` (Claude Code's `~/.claude.json`).
    ClaudeCode,
    /// `servers` at the top (VS Code's `mcp.json`).
    VsCode,
    /// Any of these (a file given with `--config`).
    Any,
}

pub(crate) fn members(node: &Node) -> Option<&[Member]> {
    match &node.val {
        Val::Object(m) => Some(m),
        _ => None,
    }
}

/// The member `key`, refusing an object that names it twice (which one a client reads is not
/// something to guess).
pub(crate) fn get<'n>(ms: &'n [Member], key: &str) -> Result<Option<&'n Member>, String> {
    let mut found = ms.iter().filter(|m| m.key == key);
    let first = found.next();
    if found.next().is_some() {
        return Err(format!("the member {} appears twice", quoted(key, 64)));
    }
    Ok(first)
}

struct Found<'n> {
    scope: Option<String>,
    name: String,
    node: &'n Node,
}

fn server_map<'n>(
    ms: &'n [Member],
    key: &str,
    scope: Option<String>,
    out: &mut Vec<Found<'n>>,
) -> Result<(), String> {
    let Some(map) = get(ms, key)?.and_then(|m| members(&m.value)) else {
        return Ok(());
    };
    for (i, m) in map.iter().enumerate() {
        if map[..i].iter().any(|p| p.key == m.key) {
            return Err(format!("the server {} appears twice", quoted(&m.key, 64)));
        }
        out.push(Found {
            scope: scope.clone(),
            name: m.key.clone(),
            node: &m.value,
        });
    }
    Ok(())
}

fn find(root: &Node, layout: Layout) -> Result<Vec<Found<'_>>, String> {
    let Some(top) = members(root) else {
        return Err("the document is not a JSON object".into());
    };
    let mut out = Vec::new();
    if layout != Layout::VsCode {
        server_map(top, "mcpServers", None, &mut out)?;
    }
    if matches!(layout, Layout::VsCode | Layout::Any) {
        server_map(top, "servers", None, &mut out)?;
    }
    if matches!(layout, Layout::ClaudeCode | Layout::Any) {
        if let Some(projects) = get(top, "projects")?.and_then(|m| members(&m.value)) {
            for p in projects {
                if let Some(pm) = members(&p.value) {
                    server_map(pm, "mcpServers", Some(p.key.clone()), &mut out)?;
                }
            }
        }
    }
    Ok(out)
}

fn view(ms: &[Member]) -> Result<View, String> {
    let mut remote = false;
    for k in command::URL_KEYS {
        remote |= get(ms, k)?.is_some();
    }
    let mut kind = None;
    for k in ["type", "transport"] {
        if let Some(Val::Str(t)) = get(ms, k)?.map(|m| &m.value.val) {
            remote |= command::is_remote_type(t);
            kind.get_or_insert_with(|| t.clone());
        }
    }
    let command = match get(ms, "command")?.map(|m| &m.value.val) {
        None => Field::Absent,
        Some(Val::Str(c)) => Field::Ok(c.clone()),
        Some(_) => Field::Bad,
    };
    let args = match get(ms, "args")?.map(|m| &m.value.val) {
        None => Field::Absent,
        Some(Val::Array(items, _)) => items
            .iter()
            .map(|n| match &n.val {
                Val::Str(s) => Some(s.clone()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .map_or(Field::Bad, Field::Ok),
        Some(_) => Field::Bad,
    };
    Ok(View {
        remote,
        kind,
        command,
        args,
    })
}

/// Whether the file holds nothing but whitespace (and a byte order mark): no servers, and
/// nothing to refuse.
fn blank(src: &[u8]) -> bool {
    src.strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(src)
        .iter()
        .all(u8::is_ascii_whitespace)
}

/// Every server in the file, and what wrap would do with it.
pub fn plans(src: &[u8], layout: Layout, proxy: &Proxy) -> Result<Vec<Planned>, String> {
    if blank(src) {
        return Ok(Vec::new());
    }
    let root = parse(src).map_err(|e| e.describe(src))?;
    let mut out = Vec::new();
    for f in find(&root, layout)? {
        let (plan, argv) = match members(f.node) {
            Some(ms) => {
                let v = view(ms)?;
                (command::plan_wrap(&v, proxy), v.argv())
            }
            None => (WrapPlan::Skip("its entry is not an object".into()), None),
        };
        out.push(Planned {
            scope: f.scope,
            name: f.name,
            plan,
            argv,
        });
    }
    Ok(out)
}

fn encode(s: &str) -> Vec<u8> {
    let mut out = Vec::new();
    write_string(&mut out, s);
    out
}

/// The line break and indentation before the member whose name starts at `key_start`, or, when
/// it shares its line with what comes before it, a space (none in a file written without spaces,
/// as `spaced` says).
fn member_lead(src: &[u8], key_start: usize, spaced: bool) -> Vec<u8> {
    let mut i = key_start;
    while i > 0 && matches!(src[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    if i > 0 && src[i - 1] == b'\n' {
        let mut lead = Vec::new();
        if i > 1 && src[i - 2] == b'\r' {
            lead.push(b'\r');
        }
        lead.push(b'\n');
        lead.extend_from_slice(&src[i..key_start]);
        lead
    } else if spaced {
        b" ".to_vec()
    } else {
        Vec::new()
    }
}

/// Writes `wrapped` over the entry: its program over `command`, its prefix before the first of
/// `args`; the server's command keeps its bytes as the file has them.
fn wrap_splices(src: &[u8], ms: &[Member], wrapped: &WrappedCommand) -> Vec<Splice> {
    let command_member = get(ms, "command")
        .ok()
        .flatten()
        .expect("planned with a command");
    let command = &command_member.value;
    let mut items: Vec<Vec<u8>> = wrapped.prefix().iter().map(|s| encode(s)).collect();
    items.push(src[command.start..command.end].to_vec());
    let mut splices = vec![Splice {
        start: command.start,
        end: command.end,
        text: encode(&wrapped.program),
    }];
    match get(ms, "args").ok().flatten().map(|m| &m.value) {
        Some(Node {
            start,
            val: Val::Array(existing, _),
            ..
        }) => {
            if let Some(first) = existing.first() {
                let between = existing.get(1).map(|second| &src[first.end..second.start]);
                let sep = array_separator(&src[start + 1..first.start], between);
                let mut text = Vec::new();
                for item in items {
                    text.extend_from_slice(&item);
                    text.extend_from_slice(&sep);
                }
                splices.push(Splice {
                    start: first.start,
                    end: first.start,
                    text,
                });
            } else {
                splices.push(Splice {
                    start: start + 1,
                    end: start + 1,
                    text: items.join(b", ".as_slice()),
                });
            }
        }
        _ => {
            // `"args"`, written as `"command"` is: the same lead, the same colon.
            let colon = &src[command_member.key_end..command.start];
            let colon = if colon.iter().all(|b| matches!(b, b':' | b' ' | b'\t')) {
                colon
            } else {
                b": ".as_slice()
            };
            let spaced = colon.len() > 1;
            let mut text = b",".to_vec();
            text.extend(member_lead(src, command_member.key_start, spaced));
            text.extend_from_slice(b"\"args\"");
            text.extend_from_slice(colon);
            text.push(b'[');
            text.extend(items.join(if spaced {
                b", ".as_slice()
            } else {
                b",".as_slice()
            }));
            text.push(b']');
            splices.push(Splice {
                start: command.end,
                end: command.end,
                text,
            });
        }
    }
    splices
}

/// Takes `wrapped`'s prefix off the entry: the server's command over `command`, its arguments
/// alone left in `args`.
fn unwrap_splices(src: &[u8], ms: &[Member], wrapped: &WrappedCommand) -> Vec<Splice> {
    let at = wrapped.command_at();
    let command = &get(ms, "command")
        .ok()
        .flatten()
        .expect("planned with a command")
        .value;
    let Some(Val::Array(items, trailing)) = get(ms, "args").ok().flatten().map(|m| &m.value.val)
    else {
        unreachable!("planned with args");
    };
    let inner = &items[at];
    let end = match items.get(at + 1) {
        Some(next) => next.start,
        None => trailing.map_or(inner.end, |c| c + 1),
    };
    vec![
        Splice {
            start: command.start,
            end: command.end,
            text: src[inner.start..inner.end].to_vec(),
        },
        Splice {
            start: items[0].start,
            end,
            text: Vec::new(),
        },
    ]
}

/// Wraps or unwraps every local server in the file; the new bytes (the same when nothing
/// changed) and what was done with each server.
pub fn edit(
    src: &[u8],
    layout: Layout,
    proxy: &Proxy,
    op: Op,
) -> Result<(Vec<ServerReport>, Vec<u8>), String> {
    if blank(src) {
        return Ok((Vec::new(), src.to_vec()));
    }
    let root = parse(src).map_err(|e| e.describe(src))?;
    let mut reports = Vec::new();
    let mut splices = Vec::new();
    for f in find(&root, layout)? {
        let Some(ms) = members(f.node) else {
            reports.push(ServerReport::new(
                f.scope,
                f.name,
                Outcome::Skipped("its entry is not an object".into()),
                None,
            ));
            continue;
        };
        let v = view(ms)?;
        let (outcome, unpinned) = match op {
            Op::Wrap => match command::plan_wrap(&v, proxy) {
                WrapPlan::Remote => (Outcome::Remote, None),
                WrapPlan::Skip(why) => (Outcome::Skipped(why), None),
                WrapPlan::Already(wrapped) => {
                    (Outcome::AlreadyWrapped, command::unpinned(&wrapped.server))
                }
                WrapPlan::Wrap { argv } => {
                    let wrapped = proxy.wrap(&f.name, argv);
                    splices.extend(wrap_splices(src, ms, &wrapped));
                    (Outcome::Wrapped, command::unpinned(&wrapped.server))
                }
            },
            Op::Unwrap => match command::plan_unwrap(&v, proxy) {
                UnwrapPlan::Remote => (Outcome::Remote, None),
                UnwrapPlan::Skip(why) => (Outcome::Skipped(why), None),
                UnwrapPlan::NotWrapped { argv } => (Outcome::NotWrapped, command::unpinned(&argv)),
                UnwrapPlan::Cannot(why) => (Outcome::CannotUnwrap(why), None),
                UnwrapPlan::Unwrap(wrapped) => {
                    splices.extend(unwrap_splices(src, ms, &wrapped));
                    (Outcome::Unwrapped, command::unpinned(&wrapped.server))
                }
            },
        };
        reports.push(ServerReport::new(f.scope, f.name, outcome, unpinned));
    }
    Ok((reports, apply(src, splices)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_jsonc_and_records_spans() {
        let src = b"\xEF\xBB\xBF// c\n{\"a\": [1, \"x\\u00e9\", /* c */ true,], \"b\": {},}";
        let root = parse(src).unwrap();
        let Val::Object(ms) = &root.val else { panic!() };
        let Val::Array(items, trailing) = &ms[0].value.val else {
            panic!()
        };
        assert_eq!(&src[items[1].start..items[1].end], b"\"x\\u00e9\"");
        assert!(matches!(&items[1].val, Val::Str(s) if s == "x\u{e9}"));
        assert!(trailing.is_some());
        for bad in [
            &b"{\"a\": 1"[..],
            b"{\"a\" 1}",
            b"{\"a\": 01}",
            b"[\"\\ud800\"]",
            b"{} x",
            b"/* open",
            b"",
            b"[\"a\nb\"]",
            b"\xff",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        let e = parse(b"{\n  \"a\": ,\n}").unwrap_err();
        assert_eq!(
            e.describe(b"{\n  \"a\": ,\n}"),
            "line 2, column 8: a value was expected"
        );
    }

    #[test]
    fn member_leads() {
        assert_eq!(member_lead(b"{\n  \"command\"", 4, true), b"\n  ");
        assert_eq!(member_lead(b"{\"command\"", 1, true), b" ");
        assert_eq!(member_lead(b"{\"command\"", 1, false), b"");
    }
}
