//! The JSON a server writes: a value built in code, written compactly, strings in RFC 8785 form.

use pinlog_core::json;

/// A JSON value to write: what tools return and what the server answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Str(String),
    Arr(Vec<Json>),
    /// Members in the order given; names must be unique (the writer does not check).
    Obj(Vec<(String, Json)>),
}

impl Json {
    pub fn str(s: impl Into<String>) -> Json {
        Json::Str(s.into())
    }

    pub fn obj<'k>(members: impl IntoIterator<Item = (&'k str, Json)>) -> Json {
        Json::Obj(
            members
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }

    pub fn strs<'s>(items: impl IntoIterator<Item = &'s str>) -> Json {
        Json::Arr(items.into_iter().map(Json::str).collect())
    }

    /// Appends the value as compact JSON (strings in RFC 8785 form).
    pub fn write(&self, out: &mut Vec<u8>) {
        match self {
            Json::Null => out.extend_from_slice(b"null"),
            Json::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            Json::Int(n) => out.extend_from_slice(n.to_string().as_bytes()),
            Json::Str(s) => json::write_string(out, s),
            Json::Arr(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    item.write(out);
                }
                out.push(b']');
            }
            Json::Obj(members) => {
                out.push(b'{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    json::write_string(out, k);
                    out.push(b':');
                    v.write(out);
                }
                out.push(b'}');
            }
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write(&mut out);
        out
    }

    pub fn to_text(&self) -> String {
        String::from_utf8(self.to_bytes()).expect("the writer writes UTF-8")
    }

    /// Adds a member to an object (to nothing else).
    pub(crate) fn push(&mut self, name: &str, value: Json) {
        if let Json::Obj(members) = self {
            members.push((name.to_string(), value));
        }
    }
}
