//! Digests: of a canonical value, of instructions, and of a whole listing (the set hash).

use std::fmt;
use std::str::FromStr;

use sha2::{Digest as _, Sha256};

use crate::json::{self, cmp_utf16, Limits, ReadError, Undecidable, Value};

/// A SHA-256 digest, written `sha256:<64 lowercase hex>`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest([u8; 32]);

impl Digest {
    /// The digest of some bytes.
    pub fn of(bytes: &[u8]) -> Self {
        Digest(Sha256::digest(bytes).into())
    }

    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Digest(bytes)
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The 64 lowercase hex digits, without the `sha256:` prefix.
    pub fn hex(&self) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut s = String::with_capacity(64);
        for b in self.0 {
            s.push(HEX[usize::from(b >> 4)] as char);
            s.push(HEX[usize::from(b & 0xf)] as char);
        }
        s
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Text that is not `sha256:` followed by 64 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DigestParseError;

impl fmt::Display for DigestParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a digest is written sha256: followed by 64 lowercase hex digits")
    }
}

impl std::error::Error for DigestParseError {}

impl FromStr for Digest {
    type Err = DigestParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let hex = s
            .strip_prefix("sha256:")
            .ok_or(DigestParseError)?
            .as_bytes();
        if hex.len() != 64 {
            return Err(DigestParseError);
        }
        let nibble = |c: u8| match c {
            b'0'..=b'9' => Ok(c - b'0'),
            b'a'..=b'f' => Ok(c - b'a' + 10),
            _ => Err(DigestParseError),
        };
        let mut out = [0u8; 32];
        for (i, pair) in hex.chunks_exact(2).enumerate() {
            out[i] = nibble(pair[0])? << 4 | nibble(pair[1])?;
        }
        Ok(Digest(out))
    }
}

/// The digest of a value's canonical bytes: what a tool, a prompt or any document is pinned by.
pub fn value_digest(value: &Value<'_>) -> Result<Digest, Undecidable> {
    json::to_canonical(value).map(|bytes| Digest::of(&bytes))
}

/// The digest of a server's instructions: SHA-256 of the UTF-8 string as served, not
/// canonicalised; none when the server gives none.
pub fn instructions_digest(instructions: Option<&str>) -> Option<Digest> {
    instructions.map(|s| Digest::of(s.as_bytes()))
}

/// The set hash of (name, digest) pairs: SHA-256 of the lines `name:hex`, sorted by name in
/// UTF-16 order and then by hex, joined by `\n` with no newline after the last.
pub fn set_hash<'n>(pairs: impl IntoIterator<Item = (&'n str, Digest)>) -> Digest {
    let mut pairs: Vec<(&str, Digest)> = pairs.into_iter().collect();
    pairs.sort_by(|a, b| cmp_utf16(a.0, b.0).then(a.1.cmp(&b.1)));
    let mut h = Sha256::new();
    for (i, (name, digest)) in pairs.iter().enumerate() {
        if i > 0 {
            h.update(b"\n");
        }
        h.update(name.as_bytes());
        h.update(b":");
        h.update(digest.hex().as_bytes());
    }
    Digest(h.finalize().into())
}

/// One tool or prompt of a listing, and its digest if it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub name: String,
    pub digest: Result<Digest, Undecidable>,
}

/// The tools (or prompts) of one listing, in set-hash order: by name in UTF-16 order, then by
/// digest, undecidable ones last among those of their name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    items: Vec<Listed>,
}

/// Why a listing has no digests at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListingError {
    /// The document was refused by the strict reader.
    Read(ReadError),
    /// An item is not an object with a string `name` member.
    NoStringName { index: usize, found: &'static str },
}

impl fmt::Display for ListingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListingError::Read(e) => e.fmt(f),
            ListingError::NoStringName { index, found } => write!(
                f,
                "no-string-name: item {index} of the listing has no string \"name\" member ({found})"
            ),
        }
    }
}

impl std::error::Error for ListingError {}

impl From<ReadError> for ListingError {
    fn from(e: ReadError) -> Self {
        ListingError::Read(e)
    }
}

impl Listing {
    /// Reads a JSON array of tool or prompt objects and digests each, one item in memory at a time.
    pub fn read(input: &[u8], limits: Limits) -> Result<Listing, ListingError> {
        Listing::from_items(json::array_items(input, limits)?)
    }

    /// Digests items as they come (the pages of a paginated listing may simply be chained).
    pub fn from_items<'a, E>(
        items: impl IntoIterator<Item = Result<Value<'a>, E>>,
    ) -> Result<Listing, ListingError>
    where
        ListingError: From<E>,
    {
        let mut canonical = Vec::new();
        let mut listed = Vec::new();
        for (index, item) in items.into_iter().enumerate() {
            let item = item?;
            let name = match item.as_object().map(|o| o.get("name")) {
                Some(Some(Value::String(name))) => name.to_string(),
                Some(Some(other)) => {
                    return Err(ListingError::NoStringName {
                        index,
                        found: other.kind(),
                    })
                }
                Some(None) => {
                    return Err(ListingError::NoStringName {
                        index,
                        found: "no name member",
                    })
                }
                None => {
                    return Err(ListingError::NoStringName {
                        index,
                        found: item.kind(),
                    })
                }
            };
            canonical.clear();
            let digest =
                json::write_canonical(&item, &mut canonical).map(|()| Digest::of(&canonical));
            listed.push(Listed { name, digest });
        }
        listed.sort_by(|a, b| {
            cmp_utf16(&a.name, &b.name).then_with(|| match (&a.digest, &b.digest) {
                (Ok(x), Ok(y)) => x.cmp(y),
                (x, y) => x.is_err().cmp(&y.is_err()),
            })
        });
        Ok(Listing { items: listed })
    }

    pub fn items(&self) -> &[Listed] {
        &self.items
    }

    /// The set hash, when every item has a digest.
    pub fn set_hash(&self) -> Option<Digest> {
        self.items
            .iter()
            .map(|l| l.digest.as_ref().ok().map(|d| (l.name.as_str(), *d)))
            .collect::<Option<Vec<_>>>()
            .map(set_hash)
    }
}
