//! Canonical bytes written while a document is read, with no tree in between.
//!
//! Values are written as they come, members in the order they were read. An object whose members
//! came out of order is noted with where each member's bytes are; when the document is done, the
//! bytes are copied once more into canonical order, each byte once, nested objects put in order as
//! the copy reaches them. No node is allocated, and the work is linear in the size of the document
//! however its objects nest. The output is the same as [`to_canonical`](super::to_canonical) of the
//! tree, which the tests hold it to.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::ops::Range;

use super::build::Builder;
use super::canonical::{cmp_utf16, write_number, write_string, Findings, Undecidable};
use crate::pointer::{JsonPointer, Segment};

/// Writes canonical bytes; see the module documentation. Reusable: [`reset`](Self::reset) it
/// between documents.
#[derive(Default)]
pub(crate) struct CanonicalBuilder<'a> {
    /// The bytes as read: every value canonical, but members in the order they came.
    out: Vec<u8>,
    /// The objects of `out` whose members came out of order, as they closed.
    reorders: Vec<Reorder<'a>>,
    /// `out` in canonical order, when there were reorders.
    ordered: Vec<u8>,
    /// Where the value being written sits, for naming undecidable literals.
    path: Vec<Step<'a>>,
    undecidable: Findings,
    /// The string value of the top-level member `name`, seen while it is read.
    name_string: Option<Cow<'a, str>>,
    /// What the top-level member `name` held: the string, or the kind of value found instead.
    name: Option<Result<Cow<'a, str>, &'static str>>,
    /// Member lists of closed objects, emptied, for the next objects to reuse.
    spare_members: Vec<Vec<Member<'a>>>,
}

enum Step<'a> {
    Name(Cow<'a, str>),
    Index(usize),
}

/// An object being written: where its members start, and each member's name and bytes.
pub(crate) struct OpenObject<'a> {
    start: usize,
    members: Vec<Member<'a>>,
    in_order: bool,
}

struct Member<'a> {
    name: Cow<'a, str>,
    /// The bytes of `"name":value` in the output, without the separating comma.
    start: usize,
    end: usize,
}

/// An object whose members came out of order: its members in canonical order, and the bytes
/// between its braces.
struct Reorder<'a> {
    start: usize,
    end: usize,
    members: Vec<Member<'a>>,
}

impl<'a> CanonicalBuilder<'a> {
    /// Room for `len` bytes of output.
    pub(crate) fn reserve(&mut self, len: usize) {
        self.out.reserve_exact(len);
    }

    /// Forgets the previous document, keeping the buffers.
    pub(crate) fn reset(&mut self) {
        self.out.clear();
        for mut r in self.reorders.drain(..) {
            r.members.clear();
            self.spare_members.push(r.members);
        }
        self.path.clear();
        self.undecidable.clear();
        self.name_string = None;
        self.name = None;
    }

    /// The canonical bytes of the document read, or its undecidable literals.
    pub(crate) fn result(&mut self) -> Result<&[u8], Undecidable> {
        if !self.undecidable.is_empty() {
            return Err(self.undecidable.take());
        }
        if self.reorders.is_empty() {
            return Ok(&self.out);
        }
        // Objects closed inner first; ordered by where they start, an object comes before the
        // objects nested in it.
        self.reorders.sort_unstable_by_key(|r| r.start);
        self.ordered.clear();
        emit(
            &self.out,
            &self.reorders,
            0..self.out.len(),
            &mut self.ordered,
        );
        Ok(&self.ordered)
    }

    /// The canonical bytes of the document read, or its undecidable literals, as
    /// [`result`](Self::result) gives them, without copying them out when they are already in
    /// order.
    pub(crate) fn into_result(mut self) -> Result<Vec<u8>, Undecidable> {
        if self.undecidable.is_empty() && self.reorders.is_empty() {
            return Ok(self.out);
        }
        self.result()?;
        Ok(self.ordered)
    }

    /// What the top-level member `name` held, if the document was an object with one.
    pub(crate) fn take_name(&mut self) -> Option<Result<Cow<'a, str>, &'static str>> {
        self.name.take()
    }

    fn at_top_level_name(&self) -> bool {
        matches!(self.path.as_slice(), [Step::Name(n)] if n == "name")
    }
}

/// Appends a string the reader read. The reader borrows a string from the input only when it was
/// written without escapes, and it refuses raw controls, so a borrowed string holds no character
/// that RFC 8785 escapes and is copied as it is.
#[allow(
    clippy::ptr_arg,
    reason = "whether the string is borrowed is what matters here"
)]
fn write_read_string(out: &mut Vec<u8>, s: &Cow<'_, str>) {
    match s {
        Cow::Borrowed(plain) => {
            debug_assert_eq!(super::scan::skip_plain(plain.as_bytes(), 0), plain.len());
            out.push(b'"');
            out.extend_from_slice(plain.as_bytes());
            out.push(b'"');
        }
        Cow::Owned(s) => write_string(out, s),
    }
}

impl<'a> Builder<'a> for CanonicalBuilder<'a> {
    /// The kind of value written, as [`Value::kind`](super::Value::kind) names it.
    type Value = &'static str;
    /// How many items were started.
    type Array = usize;
    type Object = OpenObject<'a>;

    fn null(&mut self) -> &'static str {
        self.out.extend_from_slice(b"null");
        "null"
    }

    fn boolean(&mut self, value: bool) -> &'static str {
        self.out
            .extend_from_slice(if value { b"true" } else { b"false" });
        "boolean"
    }

    fn number(&mut self, literal: &'a str) -> &'static str {
        if let Err(reason) = write_number(&mut self.out, literal) {
            let path = &self.path;
            self.undecidable.add(literal, reason, || {
                let segments: Vec<Segment<'_>> = path
                    .iter()
                    .map(|step| match step {
                        Step::Name(n) => Segment::Name(n),
                        Step::Index(i) => Segment::Index(*i),
                    })
                    .collect();
                JsonPointer::from_segments(&segments)
            });
        }
        "number"
    }

    fn string(&mut self, value: Cow<'a, str>) -> &'static str {
        write_read_string(&mut self.out, &value);
        if self.at_top_level_name() {
            self.name_string = Some(value);
        }
        "string"
    }

    fn open_array(&mut self) -> usize {
        self.out.push(b'[');
        0
    }

    fn item_start(&mut self, started: &mut usize) {
        if *started > 0 {
            self.out.push(b',');
        }
        self.path.push(Step::Index(*started));
        *started += 1;
    }

    fn item_end(&mut self, _: &mut usize, _: &'static str) {
        self.path.pop();
    }

    fn close_array(&mut self, _: usize) -> &'static str {
        self.out.push(b']');
        "array"
    }

    fn open_object(&mut self) -> OpenObject<'a> {
        self.out.push(b'{');
        OpenObject {
            start: self.out.len(),
            members: self.spare_members.pop().unwrap_or_default(),
            in_order: true,
        }
    }

    fn member_start(&mut self, object: &mut OpenObject<'a>, name: Cow<'a, str>) {
        if let Some(last) = object.members.last() {
            self.out.push(b',');
            if cmp_utf16(&last.name, &name) != Ordering::Less {
                object.in_order = false;
            }
        }
        let start = self.out.len();
        write_read_string(&mut self.out, &name);
        self.out.push(b':');
        self.path.push(Step::Name(name.clone()));
        object.members.push(Member {
            name,
            start,
            end: start,
        });
    }

    fn member_end(&mut self, object: &mut OpenObject<'a>, kind: &'static str) {
        if let Some(member) = object.members.last_mut() {
            member.end = self.out.len();
        }
        if self.at_top_level_name() {
            self.name = Some(match self.name_string.take() {
                Some(s) if kind == "string" => Ok(s),
                _ => Err(kind),
            });
        }
        self.path.pop();
    }

    fn close_object(&mut self, mut object: OpenObject<'a>) -> &'static str {
        if object.in_order {
            object.members.clear();
            self.spare_members.push(object.members);
        } else {
            object
                .members
                .sort_unstable_by(|a, b| cmp_utf16(&a.name, &b.name));
            self.reorders.push(Reorder {
                start: object.start,
                end: self.out.len(),
                members: object.members,
            });
        }
        self.out.push(b'}');
        "object"
    }
}

/// Copies `out[range]` to `dst`, putting in order every object of `reorders` (sorted by start) that
/// lies in the range. Each byte is copied once; recursion is as deep as the objects nest.
fn emit(out: &[u8], reorders: &[Reorder<'_>], range: Range<usize>, dst: &mut Vec<u8>) {
    let mut at = range.start;
    // Objects inside the range start after its first byte: a member's range begins with its
    // name, the object that holds the member at or before it.
    let mut next = reorders.partition_point(|r| r.start <= range.start);
    while let Some(r) = reorders.get(next).filter(|r| r.start < range.end) {
        dst.extend_from_slice(&out[at..r.start]);
        for (i, m) in r.members.iter().enumerate() {
            if i > 0 {
                dst.push(b',');
            }
            emit(out, reorders, m.start..m.end, dst);
        }
        at = r.end;
        // Objects nested in this one were reached through its members.
        next = reorders.partition_point(|x| x.start < r.end);
    }
    dst.extend_from_slice(&out[at..range.end]);
}
