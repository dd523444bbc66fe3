//! RFC 6901 JSON pointers: how pinlog says where in a document something is.

use std::fmt;

use crate::json::Value;

/// One step into a value: an object member by name or an array item by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment<'a> {
    Name(&'a str),
    Index(usize),
}

/// A JSON pointer, held as its unescaped reference tokens.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JsonPointer {
    tokens: Vec<String>,
}

/// A string that is not a JSON pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PointerError {
    /// Byte offset into the pointer's text.
    pub offset: usize,
    pub detail: &'static str,
}

impl fmt::Display for PointerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid JSON pointer: {} at byte {}",
            self.detail, self.offset
        )
    }
}

impl std::error::Error for PointerError {}

impl JsonPointer {
    /// The pointer to the whole document (the empty string).
    pub fn root() -> Self {
        JsonPointer::default()
    }

    pub fn from_segments(path: &[Segment<'_>]) -> Self {
        JsonPointer {
            tokens: path
                .iter()
                .map(|s| match s {
                    Segment::Name(n) => (*n).to_string(),
                    Segment::Index(i) => i.to_string(),
                })
                .collect(),
        }
    }

    /// This pointer extended by one member name.
    pub fn join_name(&self, name: &str) -> Self {
        let mut p = self.clone();
        p.tokens.push(name.to_string());
        p
    }

    /// This pointer extended by one array index.
    pub fn join_index(&self, index: usize) -> Self {
        let mut p = self.clone();
        p.tokens.push(index.to_string());
        p
    }

    /// The unescaped reference tokens.
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// Reads the RFC 6901 string form: empty, or `/`-separated tokens with `~0` for `~` and `~1`
    /// for `/`.
    pub fn parse(text: &str) -> Result<Self, PointerError> {
        if text.is_empty() {
            return Ok(JsonPointer::root());
        }
        let Some(rest) = text.strip_prefix('/') else {
            return Err(PointerError {
                offset: 0,
                detail: "a non-empty pointer starts with '/'",
            });
        };
        let mut tokens = Vec::new();
        let mut offset = 1;
        for raw in rest.split('/') {
            let mut token = String::with_capacity(raw.len());
            let mut chars = raw.char_indices();
            while let Some((i, c)) = chars.next() {
                if c != '~' {
                    token.push(c);
                    continue;
                }
                match chars.next() {
                    Some((_, '0')) => token.push('~'),
                    Some((_, '1')) => token.push('/'),
                    _ => {
                        return Err(PointerError {
                            offset: offset + i,
                            detail: "'~' must be followed by '0' or '1'",
                        })
                    }
                }
            }
            offset += raw.len() + 1;
            tokens.push(token);
        }
        Ok(JsonPointer { tokens })
    }

    /// The value this pointer refers to in `root`, if it refers to one.
    pub fn resolve<'v, 'a>(&self, root: &'v Value<'a>) -> Option<&'v Value<'a>> {
        self.tokens.iter().try_fold(root, |v, token| match v {
            Value::Object(o) => o.get(token),
            Value::Array(items) => array_index(token).and_then(|i| items.get(i)),
            _ => None,
        })
    }
}

/// An RFC 6901 array index: `0`, or digits without a leading zero.
fn array_index(token: &str) -> Option<usize> {
    let canonical = token == "0"
        || (!token.is_empty()
            && !token.starts_with('0')
            && token.bytes().all(|b| b.is_ascii_digit()));
    if canonical {
        token.parse().ok()
    } else {
        None
    }
}

impl fmt::Display for JsonPointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for token in &self.tokens {
            f.write_str("/")?;
            for c in token.chars() {
                match c {
                    '~' => f.write_str("~0")?,
                    '/' => f.write_str("~1")?,
                    c => fmt::Write::write_char(f, c)?,
                }
            }
        }
        Ok(())
    }
}
