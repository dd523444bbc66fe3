//! Digests: of a canonical value, of instructions, and of a whole listing (the set hash).

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

    /// A SHA-256 digest computed elsewhere (over a stream, say).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Digest(bytes)
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

/// One tool or prompt of a listing, and its digest if it has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listed<'a> {
    pub name: &'a str,
    pub digest: Result<Digest, &'a Undecidable>,
}

/// The tools (or prompts) of one listing, in set-hash order: by name in UTF-16 order, then by
/// digest, undecidable ones last among those of their name, in document order.
///
/// A listing may hold millions of items of a few bytes each, so an item is kept in 40 bytes (its
/// name where it lies, its digest) and no list of items is ever copied: they are kept in runs,
/// each taken whole and sorted, and merged as they are gone through. A list copied to grow, or
/// the lists of two threads copied into one, would be held twice at once.
#[derive(Clone)]
pub struct Listing<'a> {
    /// The document read: the names written without escapes are in it.
    input: &'a str,
    /// What each thread read, in document order.
    parts: Vec<Part>,
}

/// Items of a listing, as one thread read them. A name is `[from, to]` in the input, or, from
/// the input's length on, in `names`.
#[derive(Clone, Default)]
struct Part {
    /// The names not in the input, one after another.
    names: String,
    /// The items with a digest, in runs in document order, each in set-hash order.
    runs: Vec<Vec<([u32; 2], Digest)>>,
    /// The items without, in set-hash order, with what makes each undecidable.
    undecidable: Vec<([u32; 2], Undecidable)>,
}

/// The most items in a run: 20 MiB of them.
const RUN: usize = 1 << 19;

/// Items in set-hash order.
type Sorted<'a> = Box<dyn Iterator<Item = Listed<'a>> + 'a>;

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

impl<'a> Listing<'a> {
    /// Reads a JSON array of tool or prompt objects and digests each, one item in memory at a time.
    /// Names are kept at 32-bit offsets: a listing larger than 2 GiB is refused as too large.
    ///
    /// A large listing is cut in two at an item boundary near its middle and the halves are read
    /// on two threads. If either half is refused, the whole is read again in one piece, so that the
    /// refusal reported is the first in the document, exactly as a single reading would find it.
    pub fn read(input: &'a [u8], limits: Limits) -> Result<Listing<'a>, ListingError> {
        const PARALLEL_FROM: usize = 1 << 20;
        let limits = Limits {
            max_bytes: limits.max_bytes.min(u32::MAX as usize / 2),
            ..limits
        };
        let mut first = json::array_items(input, limits)?;
        let text = std::str::from_utf8(input).expect("the reader took the input as UTF-8");
        let listing = |parts| Listing { input: text, parts };
        if input.len() >= PARALLEL_FROM {
            // A little past the middle: the second thread first scans up to the boundary.
            if let Some(second) = first.split_near(input.len() / 100 * 53) {
                let (a, b) = std::thread::scope(|scope| {
                    let other = std::thread::Builder::new().spawn_scoped(scope, || {
                        second.items().map(|items| read_items(text, items))
                    });
                    let mine = read_items(text, first);
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
                    (Ok(a), Some(Ok(b))) => Ok(listing(vec![a, b])),
                    // No boundary was found: the first part read the whole array.
                    (a, None) => a.map(|a| listing(vec![a])),
                    _ => read_items(text, json::array_items(input, limits)?)
                        .map(|a| listing(vec![a])),
                };
            }
        }
        read_items(text, first).map(|a| listing(vec![a]))
    }

    /// The items in set-hash order.
    pub fn items(&self) -> impl Iterator<Item = Listed<'_>> {
        let runs = self.parts.iter().flat_map(|part| part.runs(self.input));
        let undecidable = self.parts.iter().map(|part| part.undecidable(self.input));
        // Undecidable items of one name stay in document order: the first part's first.
        let undecidable = undecidable.reduce(|a, b| Box::new(merge(a, b)));
        merge(merge_all(runs.collect()), undecidable.into_iter().flatten())
    }

    /// The set hash, when every item has a digest: SHA-256 of the lines `name:hex` in set-hash
    /// order, joined by `\n` with no newline after the last.
    pub fn set_hash(&self) -> Option<Digest> {
        let mut h = Sha256::new();
        for (i, item) in self.items().enumerate() {
            let digest = item.digest.ok()?;
            if i > 0 {
                h.update(b"\n");
            }
            h.update(item.name.as_bytes());
            h.update(b":");
            h.update(digest.hex_bytes());
        }
        Some(Digest(h.finalize().into()))
    }
}

impl Listing<'static> {
    /// Digests items already read into values (the pages of a paginated listing may simply be
    /// chained).
    pub fn from_items<'v, E>(
        items: impl IntoIterator<Item = Result<Value<'v>, E>>,
    ) -> Result<Listing<'static>, ListingError>
    where
        ListingError: From<E>,
    {
        let mut part = Part::default();
        let mut canonical = Vec::new();
        for (index, item) in items.into_iter().enumerate() {
            let item = item?;
            let name = item.as_object().map(|o| match o.get("name") {
                Some(Value::String(s)) => Ok(s.as_ref()),
                Some(other) => Err(other.kind()),
                None => Err(NO_NAME),
            });
            let name = item_name(index, None, item.kind(), name)?;
            canonical.clear();
            let digest =
                json::write_canonical(&item, &mut canonical).map(|()| Digest::of(&canonical));
            part.push("", name, digest);
        }
        part.sort("");
        Ok(Listing {
            input: "",
            parts: vec![part],
        })
    }
}

impl PartialEq for Listing<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.items().eq(other.items())
    }
}

impl Eq for Listing<'_> {}

impl fmt::Debug for Listing<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.items()).finish()
    }
}

impl Part {
    fn push(&mut self, input: &str, name: &str, digest: Result<Digest, Undecidable>) {
        let from = match span_in(input, name) {
            Some(from) => from,
            None => {
                self.names.push_str(name);
                input.len() + self.names.len() - name.len()
            }
        };
        // Within 4 GiB: `read` refuses more than 2 GiB, and a name is no longer than written.
        let offset = |n: usize| u32::try_from(n).expect("a listing's names fit in 4 GiB");
        let at = [offset(from), offset(from + name.len())];
        match digest {
            Ok(digest) => {
                if self
                    .runs
                    .last()
                    .is_none_or(|run| run.len() == run.capacity())
                {
                    // Each run is taken whole, twice the last up to `RUN`: one that grew would
                    // be copied.
                    let room = self.runs.last().map_or(16, |run| (2 * run.len()).min(RUN));
                    self.runs.push(Vec::with_capacity(room));
                }
                let run = self.runs.last_mut().expect("a run was just made");
                run.push((at, digest));
            }
            Err(e) => self.undecidable.push((at, e)),
        }
    }

    /// Puts the items in set-hash order, in place.
    fn sort(&mut self, input: &str) {
        let names = self.names.as_str();
        let name = |at| name_at(input, names, at);
        // Items of one name and digest are alike: which comes first does not matter.
        for run in &mut self.runs {
            run.sort_unstable_by(|a, b| cmp_utf16(name(a.0), name(b.0)).then(a.1.cmp(&b.1)));
        }
        // Stable: undecidable items of one name stay in document order.
        self.undecidable
            .sort_by(|a, b| cmp_utf16(name(a.0), name(b.0)));
    }

    /// The runs of items with a digest, each with its length.
    fn runs<'s>(&'s self, input: &'s str) -> impl Iterator<Item = (usize, Sorted<'s>)> {
        self.runs.iter().map(move |run| {
            let items = run.iter().map(move |&(at, digest)| Listed {
                name: name_at(input, &self.names, at),
                digest: Ok(digest),
            });
            (run.len(), Box::new(items) as Sorted<'s>)
        })
    }

    fn undecidable<'s>(&'s self, input: &'s str) -> Sorted<'s> {
        Box::new(self.undecidable.iter().map(move |(at, e)| Listed {
            name: name_at(input, &self.names, *at),
            digest: Err(e),
        }))
    }
}

/// The name at `[from, to]`: in `input`, or, from its length on, in `names`.
fn name_at<'s>(input: &'s str, names: &'s str, [from, to]: [u32; 2]) -> &'s str {
    let (from, to) = (from as usize, to as usize);
    match from.checked_sub(input.len()) {
        Some(at) => &names[at..to - input.len()],
        None => &input[from..to],
    }
}

/// Where `name` starts in `input`, if the reader borrowed it from there.
fn span_in(input: &str, name: &str) -> Option<usize> {
    let from = (name.as_ptr() as usize).checked_sub(input.as_ptr() as usize)?;
    // Checked, not assumed: the place kept holds the name.
    (input.get(from..from.checked_add(name.len())?) == Some(name)).then_some(from)
}

/// Runs of items with a digest, with their lengths, as one: the two shortest merged first, so
/// that most items go through few merges. Items alike in set-hash order (one name, one digest)
/// may come in any order.
fn merge_all(mut runs: Vec<(usize, Sorted<'_>)>) -> Sorted<'_> {
    loop {
        runs.sort_unstable_by_key(|&(len, _)| std::cmp::Reverse(len));
        let Some((len, a)) = runs.pop() else {
            return Box::new(std::iter::empty());
        };
        let Some((more, b)) = runs.pop() else {
            return a;
        };
        runs.push((len + more, Box::new(merge(a, b))));
    }
}

/// Two runs as one; of items alike in set-hash order, those of `a` first.
fn merge<'a>(
    a: impl Iterator<Item = Listed<'a>>,
    b: impl Iterator<Item = Listed<'a>>,
) -> impl Iterator<Item = Listed<'a>> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(x), Some(y)) if set_order(y, x).is_lt() => b.next(),
        (Some(_), _) => a.next(),
        (None, _) => b.next(),
    })
}

/// The order of a listing: by name in UTF-16 order, then by digest, undecidable items last.
fn set_order(a: &Listed<'_>, b: &Listed<'_>) -> std::cmp::Ordering {
    cmp_utf16(a.name, b.name).then_with(|| match (&a.digest, &b.digest) {
        (Ok(x), Ok(y)) => x.cmp(y),
        (x, y) => x.is_err().cmp(&y.is_err()),
    })
}

/// Digests items straight from the input, writing each one's canonical bytes as it is read.
fn read_items(input: &str, mut items: json::ArrayItems<'_>) -> Result<Part, ListingError> {
    let mut builder = CanonicalBuilder::default();
    let mut part = Part::default();
    let mut index = 0;
    loop {
        builder.reset();
        let Some(kind) = items.next_with(&mut builder) else {
            break;
        };
        let kind = kind?;
        let name = (kind == "object").then(|| builder.take_name().unwrap_or(Err(NO_NAME)));
        let name = item_name(index, Some(items.item_offset()), kind, name)?;
        let digest = builder.result().map(Digest::of);
        part.push(input, &name, digest);
        index += 1;
    }
    part.sort(input);
    Ok(part)
}

/// What a listing item without a `name` member is said to have instead.
const NO_NAME: &str = "no name member";

/// The name of item `index` (starting at byte `offset`), which is of the given kind and, if an
/// object, has this `name` member (or a member of another kind, or none).
fn item_name<N>(
    index: usize,
    offset: Option<usize>,
    kind: &'static str,
    name: Option<Result<N, &'static str>>,
) -> Result<N, ListingError> {
    let found = match name {
        Some(Ok(name)) => return Ok(name),
        Some(Err(found)) => found,
        None => kind,
    };
    Err(ListingError::NoStringName {
        index,
        found,
        offset,
    })
}
