//! Structural diff: where two JSON values differ, as RFC 6901 pointers with the old and new value.
//!
//! The rules, so that two runs (and two implementations) list the same changes in the same order:
//!
//! - Values are compared by their canonical meaning (RFC 8785), not their bytes: member order does
//!   not matter, and numbers are equal when they are the same double (`1`, `1.0` and `1e0` are
//!   equal; `-0` equals `0`, as the canonical form writes both `0`). A literal that no double
//!   represents unambiguously (see [`to_f64`]) equals only the same literal text.
//! - Strings are equal only when they are the same code points: no Unicode normalisation, because
//!   the canonical form (and so the digest) does not normalise either.
//! - Objects are compared member by member, by name. Arrays are compared index by index: inserting
//!   one item at the front reports every later index as changed and one addition at the end. That
//!   is deliberate: it needs no matching heuristics, and the model reads the array positionally.
//! - A value whose kind differs (a string that became an object) is one change at its pointer; an
//!   added or removed subtree is one change at its root, not one per leaf.
//! - Order: depth first; an object's members in RFC 8785 order (UTF-16 code units of the name,
//!   whatever order either side was written in), an array's items by ascending index.
//!
//! Work is proportional to the size of the two values (each object's member names are sorted once),
//! and a pointer is built only for a change. The walk recurses once per nesting level, which the
//! strict reader caps at [`MAX_DEPTH`](crate::json::MAX_DEPTH).

use std::cmp::Ordering;
use std::ops::ControlFlow;

use crate::json::{cmp_utf16, to_f64, Number, Object, Value};
use crate::pointer::{JsonPointer, Segment};

/// One difference: what is at `pointer` in the old and in the new value.
///
/// `old: None` means added, `new: None` removed, both present changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Change<'v, 'a> {
    pub pointer: JsonPointer,
    pub old: Option<&'v Value<'a>>,
    pub new: Option<&'v Value<'a>>,
}

impl Change<'_, '_> {
    /// `added`, `removed` or `changed`.
    pub fn kind(&self) -> &'static str {
        match (self.old, self.new) {
            (None, _) => "added",
            (_, None) => "removed",
            _ => "changed",
        }
    }
}

/// Every difference between `old` and `new`, in the order the module documentation states.
pub fn diff<'v, 'a>(old: &'v Value<'a>, new: &'v Value<'a>) -> Vec<Change<'v, 'a>> {
    let mut changes = Vec::new();
    let mut path = Vec::new();
    let _ = walk(old, new, &mut path, &mut |path, old, new| {
        changes.push(Change {
            pointer: JsonPointer::from_segments(path),
            old,
            new,
        });
        ControlFlow::Continue(())
    });
    changes
}

/// Whether two values have the same canonical meaning: [`diff`] would find nothing. Stops at the
/// first difference and builds no pointer.
pub fn equal(a: &Value<'_>, b: &Value<'_>) -> bool {
    walk(a, b, &mut Vec::new(), &mut |_, _, _| ControlFlow::Break(())).is_continue()
}

/// Whether two number literals stand for the same canonical number.
pub fn same_number(a: &Number<'_>, b: &Number<'_>) -> bool {
    match (to_f64(a.literal()), to_f64(b.literal())) {
        (Ok(x), Ok(y)) => x == y,
        // An undecidable literal has no canonical value to compare; only its text identifies it.
        _ => a.literal() == b.literal(),
    }
}

type Visit<'f, 'v, 'a> =
    dyn FnMut(&[Segment<'v>], Option<&'v Value<'a>>, Option<&'v Value<'a>>) -> ControlFlow<()> + 'f;

fn walk<'v, 'a>(
    old: &'v Value<'a>,
    new: &'v Value<'a>,
    path: &mut Vec<Segment<'v>>,
    visit: &mut Visit<'_, 'v, 'a>,
) -> ControlFlow<()> {
    match (old, new) {
        (Value::Null, Value::Null) => ControlFlow::Continue(()),
        (Value::Bool(a), Value::Bool(b)) if a == b => ControlFlow::Continue(()),
        (Value::Number(a), Value::Number(b)) if same_number(a, b) => ControlFlow::Continue(()),
        (Value::String(a), Value::String(b)) if a == b => ControlFlow::Continue(()),
        (Value::Array(a), Value::Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                path.push(Segment::Index(i));
                let step = match (a.get(i), b.get(i)) {
                    (Some(x), Some(y)) => walk(x, y, path, visit),
                    (x, y) => visit(path, x, y),
                };
                path.pop();
                step?;
            }
            ControlFlow::Continue(())
        }
        (Value::Object(a), Value::Object(b)) => {
            let (a, b) = (sorted_members(a), sorted_members(b));
            let (mut i, mut j) = (0, 0);
            while i < a.len() || j < b.len() {
                // A merge of the two sorted member lists: each name is visited once.
                let order = match (a.get(i), b.get(j)) {
                    (Some(x), Some(y)) => cmp_utf16(x.0, y.0),
                    (Some(_), None) => Ordering::Less,
                    _ => Ordering::Greater,
                };
                let step = match order {
                    Ordering::Less => {
                        path.push(Segment::Name(a[i].0));
                        i += 1;
                        visit(path, Some(a[i - 1].1), None)
                    }
                    Ordering::Greater => {
                        path.push(Segment::Name(b[j].0));
                        j += 1;
                        visit(path, None, Some(b[j - 1].1))
                    }
                    Ordering::Equal => {
                        path.push(Segment::Name(a[i].0));
                        i += 1;
                        j += 1;
                        walk(a[i - 1].1, b[j - 1].1, path, visit)
                    }
                };
                path.pop();
                step?;
            }
            ControlFlow::Continue(())
        }
        _ => visit(path, Some(old), Some(new)),
    }
}

/// An object's members sorted by name in RFC 8785 order. Names are unique (the reader refuses
/// repeats), so the order is total.
fn sorted_members<'v, 'a>(o: &'v Object<'a>) -> Vec<(&'v str, &'v Value<'a>)> {
    let mut members: Vec<_> = o.iter().collect();
    members.sort_by(|x, y| cmp_utf16(x.0, y.0));
    members
}
