//! Matching items and members across two versions by their name.

use crate::json::{Object, Value};

pub(super) fn named_items<'v, 'a>(items: &'v [Value<'a>]) -> Vec<(Option<&'v str>, &'v Value<'a>)> {
    items.iter().map(|i| (name(i), i)).collect()
}

pub(super) fn named_members<'v, 'a>(o: &'v Object<'a>) -> Vec<(Option<&'v str>, &'v Value<'a>)> {
    o.iter().map(|(k, v)| (Some(k), v)).collect()
}

pub(super) fn member<'v, 'a>(v: &'v Value<'a>, name: &str) -> Option<&'v Value<'a>> {
    v.as_object().and_then(|o| o.get(name))
}

/// An item's identity: its `name` when that is a string.
fn name<'v>(item: &'v Value<'_>) -> Option<&'v str> {
    member(item, "name").and_then(Value::as_str)
}

/// Pairs the entries of two keyed lists: equal keys pair up in the order they were listed (so a
/// name listed twice pairs with the same name's second listing), the rest are added or removed.
/// Sorting makes it linear-logarithmic whatever the size.
pub(super) fn pair<'k, T: Copy>(
    mut old: Vec<(Option<&'k str>, T)>,
    mut new: Vec<(Option<&'k str>, T)>,
) -> Vec<(Option<T>, Option<T>)> {
    old.sort_by_key(|e| e.0);
    new.sort_by_key(|e| e.0);
    let (mut old, mut new) = (old.into_iter().peekable(), new.into_iter().peekable());
    let mut pairs = Vec::new();
    loop {
        let order = match (old.peek(), new.peek()) {
            (None, None) => return pairs,
            (Some(a), Some(b)) => a.0.cmp(&b.0),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
        };
        pairs.push(match order {
            std::cmp::Ordering::Less => (old.next().map(|e| e.1), None),
            std::cmp::Ordering::Greater => (None, new.next().map(|e| e.1)),
            std::cmp::Ordering::Equal => (old.next().map(|e| e.1), new.next().map(|e| e.1)),
        });
    }
}
