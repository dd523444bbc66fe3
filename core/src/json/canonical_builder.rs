//! Canonical bytes written while a document is read, with no tree in between.
//!
//! Values are written as they come; each object remembers where its members' bytes start and end,
//! and when it closes with its members out of order, they are copied back in order. A member's
//! bytes are moved once for each enclosing object that was out of order, and no node is allocated.
//! The output is the same as [`to_canonical`](super::to_canonical) of the tree, which the tests
//! hold it to.

use std::borrow::Cow;
use std::cmp::Ordering;

use super::build::Builder;
use super::canonical::{cmp_utf16, write_number, write_string, Undecidable, UndecidableLiteral};
use crate::pointer::{JsonPointer, Segment};

/// Writes canonical bytes; see the module documentation. Reusable: [`reset`](Self::reset) it
/// between documents.
#[derive(Default)]
pub(crate) struct CanonicalBuilder<'a> {
    out: Vec<u8>,
    /// Where the members of an out-of-order object are copied from while they are put in order.
    scratch: Vec<u8>,
    /// Where the value being written sits, for naming undecidable literals.
    path: Vec<Step<'a>>,
    undecidable: Vec<UndecidableLiteral>,
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

impl<'a> CanonicalBuilder<'a> {
    /// Forgets the previous document, keeping the buffers.
    pub(crate) fn reset(&mut self) {
        self.out.clear();
        self.path.clear();
        self.undecidable.clear();
        self.name_string = None;
        self.name = None;
    }

    /// The canonical bytes of the document read, or its undecidable literals.
    pub(crate) fn result(&mut self) -> Result<&[u8], Undecidable> {
        if self.undecidable.is_empty() {
            Ok(&self.out)
        } else {
            Err(Undecidable {
                literals: std::mem::take(&mut self.undecidable),
            })
        }
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
            let path: Vec<Segment<'_>> = self
                .path
                .iter()
                .map(|step| match step {
                    Step::Name(n) => Segment::Name(n),
                    Step::Index(i) => Segment::Index(*i),
                })
                .collect();
            self.undecidable.push(UndecidableLiteral {
                pointer: JsonPointer::from_segments(&path),
                literal: literal.to_string(),
                reason,
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
        if !object.in_order {
            // Inner objects were put in order when they closed, without changing their length, so
            // the spans recorded here still hold.
            self.scratch.clear();
            self.scratch.extend_from_slice(&self.out[object.start..]);
            self.out.truncate(object.start);
            object
                .members
                .sort_unstable_by(|a, b| cmp_utf16(&a.name, &b.name));
            for (i, m) in object.members.iter().enumerate() {
                if i > 0 {
                    self.out.push(b',');
                }
                let span = m.start - object.start..m.end - object.start;
                self.out.extend_from_slice(&self.scratch[span]);
            }
        }
        self.out.push(b'}');
        object.members.clear();
        self.spare_members.push(object.members);
        "object"
    }
}
