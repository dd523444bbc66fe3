//! The JSON value model: what the strict reader produces and the canonical writer consumes.

use std::borrow::Cow;

/// A JSON value as read.
///
/// Strings and member names borrow from the input when it held no escapes. Numbers keep the exact
/// literal text they were written with: the conversion to a double happens only when a canonical
/// form is asked for, so a literal that no double represents can be named as written.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Number(Number<'a>),
    String(Cow<'a, str>),
    Array(Vec<Value<'a>>),
    Object(Object<'a>),
}

/// A number, held as its JSON literal text (RFC 8259 grammar, already checked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Number<'a>(Cow<'a, str>);

/// An object's members in the order they were written. Member names are unique, and no two are
/// equal after Unicode NFC: the reader refuses a document where they are not.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Object<'a> {
    members: Vec<(Cow<'a, str>, Value<'a>)>,
}

impl<'a> Number<'a> {
    /// The literal exactly as it was written.
    pub fn literal(&self) -> &str {
        &self.0
    }

    /// Wraps a literal the reader has already checked against the JSON number grammar.
    pub(crate) fn from_checked(literal: &'a str) -> Self {
        Number(Cow::Borrowed(literal))
    }

    pub fn into_owned(self) -> Number<'static> {
        Number(Cow::Owned(self.0.into_owned()))
    }
}

impl<'a> Object<'a> {
    /// Members whose names the reader has already checked for repeats.
    pub(crate) fn from_checked(members: Vec<(Cow<'a, str>, Value<'a>)>) -> Self {
        Object { members }
    }

    /// The value of the member called `name`, if there is one.
    pub fn get(&self, name: &str) -> Option<&Value<'a>> {
        self.members.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// The value of the member called `name`, to change it. Names cannot be changed or added, so
    /// the reader's guarantee (no two names equal after NFC) still holds.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Value<'a>> {
        self.members
            .iter_mut()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }

    /// Removes the member called `name` and returns its value.
    pub fn remove(&mut self, name: &str) -> Option<Value<'a>> {
        let at = self.members.iter().position(|(k, _)| k == name)?;
        Some(self.members.remove(at).1)
    }

    /// Members in the order they were written.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Value<'a>)> {
        self.members.iter().map(|(k, v)| (k.as_ref(), v))
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    pub fn into_owned(self) -> Object<'static> {
        Object {
            members: self
                .members
                .into_iter()
                .map(|(k, v)| (Cow::Owned(k.into_owned()), v.into_owned()))
                .collect(),
        }
    }
}

impl<'a> Value<'a> {
    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The items, if this is an array.
    pub fn as_array(&self) -> Option<&[Value<'a>]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// A short name for the kind of value, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }

    /// A copy that no longer borrows from the input.
    pub fn into_owned(self) -> Value<'static> {
        match self {
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(b),
            Value::Number(n) => Value::Number(n.into_owned()),
            Value::String(s) => Value::String(Cow::Owned(s.into_owned())),
            Value::Array(items) => Value::Array(items.into_iter().map(Value::into_owned).collect()),
            Value::Object(o) => Value::Object(o.into_owned()),
        }
    }
}
