//! What the reader makes of what it reads: the [`Builder`] interface, and the tree builder.

use std::borrow::Cow;

use super::value::{Number, Object, Value};

/// Receives values that already passed every rule of the strict reader, in document order.
pub(crate) trait Builder<'a> {
    /// A finished value.
    type Value;
    /// An array being read.
    type Array;
    /// An object being read.
    type Object;

    fn null(&mut self) -> Self::Value;
    fn boolean(&mut self, value: bool) -> Self::Value;
    /// A number literal, checked against the JSON grammar.
    fn number(&mut self, literal: &'a str) -> Self::Value;
    /// A string; borrowed from the input exactly when it was written without escapes.
    fn string(&mut self, value: Cow<'a, str>) -> Self::Value;

    fn open_array(&mut self) -> Self::Array;
    /// Before each item is read.
    fn item_start(&mut self, array: &mut Self::Array);
    fn item_end(&mut self, array: &mut Self::Array, item: Self::Value);
    fn close_array(&mut self, array: Self::Array) -> Self::Value;

    fn open_object(&mut self) -> Self::Object;
    /// A member's name, checked against the object's earlier names, before its value is read;
    /// borrowed exactly when it was written without escapes.
    fn member_start(&mut self, object: &mut Self::Object, name: Cow<'a, str>);
    fn member_end(&mut self, object: &mut Self::Object, value: Self::Value);
    fn close_object(&mut self, object: Self::Object) -> Self::Value;
}

/// Builds a [`Value`] tree.
pub(crate) struct TreeBuilder;

/// Members so far, and the name of the one whose value is being read.
type OpenObject<'a> = (Vec<(Cow<'a, str>, Value<'a>)>, Cow<'a, str>);

impl<'a> Builder<'a> for TreeBuilder {
    type Value = Value<'a>;
    type Array = Vec<Value<'a>>;
    type Object = OpenObject<'a>;

    fn null(&mut self) -> Value<'a> {
        Value::Null
    }

    fn boolean(&mut self, value: bool) -> Value<'a> {
        Value::Bool(value)
    }

    fn number(&mut self, literal: &'a str) -> Value<'a> {
        Value::Number(Number::from_checked(literal))
    }

    fn string(&mut self, value: Cow<'a, str>) -> Value<'a> {
        Value::String(value)
    }

    fn open_array(&mut self) -> Vec<Value<'a>> {
        Vec::new()
    }

    fn item_start(&mut self, _: &mut Vec<Value<'a>>) {}

    fn item_end(&mut self, array: &mut Vec<Value<'a>>, item: Value<'a>) {
        array.push(item);
    }

    fn close_array(&mut self, array: Vec<Value<'a>>) -> Value<'a> {
        Value::Array(array)
    }

    fn open_object(&mut self) -> OpenObject<'a> {
        (Vec::new(), Cow::Borrowed(""))
    }

    fn member_start(&mut self, object: &mut OpenObject<'a>, name: Cow<'a, str>) {
        object.1 = name;
    }

    fn member_end(&mut self, object: &mut OpenObject<'a>, value: Value<'a>) {
        let name = std::mem::take(&mut object.1);
        object.0.push((name, value));
    }

    fn close_object(&mut self, object: OpenObject<'a>) -> Value<'a> {
        Value::Object(Object::from_checked(object.0))
    }
}
