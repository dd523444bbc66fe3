//! Digests: of a canonical value, of instructions, and of a whole listing (the set hash).

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use sha2::{Digest as _, Sha256};

use crate::json::{self, cmp_utf16, CanonicalBuilder, Limits, ReadError, Undecidable, Value};

/// A SHA-256 digest, written `sha256:<64 lowercase hex>`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest([u8; 32]);

impl Digest {
    /// The digest of some bytes.
    pub fn of(bytes: &[u8]) -> Self {
        Digest(Sha256::digest(bytes).into())
    }

    /// The 64 lowercase hex digits, without the `sha256:` prefix.
    pub fn hex(&self) -> String {
        String::from_utf8(self.hex_bytes().to_vec()).expect("hex digits are ASCII")
    }

    /// The 64 lowercase hex digits as bytes, for writing without formatting.
    pub fn hex_bytes(&self) -> [u8; 64] {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0u8; 64];
        for (i, b) in self.0.iter().enumerate() {
            out[2 * i] = HEX[usize::from(b >> 4)];
            out[2 * i + 1] = HEX[usize::from(b & 0xf)];
        }
        out
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hex = self.hex_bytes();
        f.write_str("sha256:")?;
        f.write_str(std::str::from_utf8(&hex).expect("hex digits are ASCII"))
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
        // Lowercase hex only: one spelling per digest.
        let nibble = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        };
        let mut out = [0u8; 32];
        let mut ok = true;
        for (o, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
            let (hi, lo) = (nibble(pair[0]), nibble(pair[1]));
            ok &= hi.is_some() & lo.is_some();
            *o = hi.unwrap_or(0) << 4 | lo.unwrap_or(0);
        }
        if !ok {
            return Err(DigestParseError);
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

/// The set hash of (name, digest) pairs already in set-hash order: SHA-256 of the lines
/// `name:hex`, sorted by name in UTF-16 order and then by hex, joined by `\n` with no newline
/// after the last.
fn hash_lines<'n>(sorted: impl IntoIterator<Item = (&'n str, Digest)>) -> Digest {
    let mut h = Sha256::new();
    for (i, (name, digest)) in sorted.into_iter().enumerate() {
        if i > 0 {
            h.update(b"\n");
        }
        h.update(name.as_bytes());
        h.update(b":");
        h.update(digest.hex_bytes());
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
    NoStringName {
        index: usize,
        /// What was found instead: the kind of the item or of its `name` member.
        found: &'static str,
        /// Where the item starts, when it was read from bytes.
        offset: Option<usize>,
    },
}

impl fmt::Display for ListingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListingError::Read(e) => e.fmt(f),
            ListingError::NoStringName {
                index,
                found,
                offset,
            } => {
                write!(
                    f,
                    "no-string-name: item {index} of the listing has no string \"name\" member ({found})"
                )?;
                match offset {
                    Some(at) => write!(f, " at byte {at}"),
                    None => Ok(()),
                }
            }
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
    ///
    /// A large listing is cut in two at an item boundary near its middle and the halves are read
    /// on two threads. If either half is refused, the whole is read again in one piece, so that the
    /// refusal reported is the first in the document, exactly as a single reading would find it.
    pub fn read(input: &[u8], limits: Limits) -> Result<Listing, ListingError> {
        const PARALLEL_FROM: usize = 1 << 20;
        let mut first = json::array_items(input, limits)?;
        if input.len() >= PARALLEL_FROM {
            // A little past the middle: the second thread first scans up to the boundary.
            if let Some(second) = first.split_near(input.len() / 100 * 53) {
                let (a, b) = std::thread::scope(|scope| {
                    let other = std::thread::Builder::new()
                        .spawn_scoped(scope, || second.items().map(read_items));
                    let mine = read_items(first);
                    let theirs = match other {
                        Ok(handle) => handle
                            .join()
                            .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                        // No thread to be had: its part was dropped unread, which told this one
                        // to read to the end.
                        Err(_) => None,
                    };
                    (mine, theirs)
                });
                return match (a, b) {
                    (Ok(a), Some(Ok(b))) => Ok(a.merge(b)),
                    // No boundary was found: the first part read the whole array.
                    (a, None) => a,
                    _ => read_items(json::array_items(input, limits)?),
                };
            }
        }
        read_items(first)
    }

    /// Digests items already read into values (the pages of a paginated listing may simply be
    /// chained).
    pub fn from_items<'a, E>(
        items: impl IntoIterator<Item = Result<Value<'a>, E>>,
    ) -> Result<Listing, ListingError>
    where
        ListingError: From<E>,
    {
        let mut listed = Vec::new();
        let mut canonical = Vec::new();
        for item in items {
            let item = item?;
            let name = item.as_object().map(|o| match o.get("name") {
                Some(Value::String(s)) => Ok(s.clone()),
                Some(other) => Err(other.kind()),
                None => Err(NO_NAME),
            });
            let name = item_name(listed.len(), None, item.kind(), name)?;
            canonical.clear();
            let digest =
                json::write_canonical(&item, &mut canonical).map(|()| Digest::of(&canonical));
            listed.push(Listed { name, digest });
        }
        Ok(Listing::in_order(listed))
    }

    fn in_order(mut items: Vec<Listed>) -> Listing {
        items.sort_by(set_order);
        Listing { items }
    }

    /// The items of two listings as one, in order; both are already in order.
    fn merge(self, other: Listing) -> Listing {
        let mut items = Vec::with_capacity(self.items.len() + other.items.len());
        let mut a = self.items.into_iter().peekable();
        let mut b = other.items.into_iter().peekable();
        while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
            let next = if set_order(y, x).is_lt() {
                b.next()
            } else {
                a.next()
            };
            items.extend(next);
        }
        items.extend(a);
        items.extend(b);
        Listing { items }
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
            .map(hash_lines)
    }
}

/// The order of a listing: by name in UTF-16 order, then by digest, undecidable items last.
fn set_order(a: &Listed, b: &Listed) -> std::cmp::Ordering {
    cmp_utf16(&a.name, &b.name).then_with(|| match (&a.digest, &b.digest) {
        (Ok(x), Ok(y)) => x.cmp(y),
        (x, y) => x.is_err().cmp(&y.is_err()),
    })
}

/// Digests items straight from the input, writing each one's canonical bytes as it is read.
fn read_items(mut items: json::ArrayItems<'_>) -> Result<Listing, ListingError> {
    let mut builder = CanonicalBuilder::default();
    let mut listed = Vec::new();
    loop {
        builder.reset();
        let Some(kind) = items.next_with(&mut builder) else {
            break;
        };
        let kind = kind?;
        let name = (kind == "object").then(|| builder.take_name().unwrap_or(Err(NO_NAME)));
        let name = item_name(listed.len(), Some(items.item_offset()), kind, name)?;
        let digest = builder.result().map(Digest::of);
        listed.push(Listed { name, digest });
    }
    Ok(Listing::in_order(listed))
}

/// What a listing item without a `name` member is said to have instead.
const NO_NAME: &str = "no name member";

/// The name of item `index` (starting at byte `offset`), which is of the given kind and, if an
/// object, has this `name` member (or a member of another kind, or none).
fn item_name(
    index: usize,
    offset: Option<usize>,
    kind: &'static str,
    name: Option<Result<Cow<'_, str>, &'static str>>,
) -> Result<String, ListingError> {
    let found = match name {
        Some(Ok(name)) => return Ok(name.into_owned()),
        Some(Err(found)) => found,
        None => kind,
    };
    Err(ListingError::NoStringName {
        index,
        found,
        offset,
    })
}
