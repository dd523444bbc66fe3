//! What the manifest and lockfile readers share: the refusal they return, and strict accessors for
//! the members of a document already read by the strict JSON reader.

use std::collections::HashSet;
use std::fmt;

use unicode_normalization::UnicodeNormalization;

use crate::json::{Object, Value};
use crate::render::quoted;

/// Why a document was refused: a stable rule name and what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    pub rule: &'static str,
    pub detail: String,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.rule, self.detail)
    }
}

impl std::error::Error for FormatError {}

/// The rule names one document kind refuses with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules {
    /// A member missing, of the wrong type, or unknown.
    pub field: &'static str,
    /// Two names equal after NFC where names identify.
    pub duplicate: &'static str,
}

impl Rules {
    pub fn field(self, detail: impl Into<String>) -> FormatError {
        FormatError {
            rule: self.field,
            detail: detail.into(),
        }
    }

    /// The members of `v`, an object holding only `known` names.
    pub fn object<'v, 'a>(
        self,
        v: &'v Value<'a>,
        what: &str,
        known: &[&str],
    ) -> Result<&'v Object<'a>, FormatError> {
        let o = v
            .as_object()
            .ok_or_else(|| self.field(format!("{what} is not an object")))?;
        if let Some((name, _)) = o.iter().find(|(n, _)| !known.contains(n)) {
            return Err(self.field(format!(
                "{what} has the unknown member {}",
                quoted(name, 64)
            )));
        }
        Ok(o)
    }

    pub fn text<'v>(
        self,
        o: &'v Object<'_>,
        name: &str,
        what: &str,
    ) -> Result<&'v str, FormatError> {
        o.get(name)
            .and_then(Value::as_str)
            .ok_or_else(|| self.field(format!("{what}.{name} must be a string")))
    }

    /// A member that must be present, as a string or null.
    pub fn text_or_null(
        self,
        o: &Object<'_>,
        name: &str,
        what: &str,
    ) -> Result<Option<String>, FormatError> {
        match o.get(name) {
            Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.to_string())),
            _ => Err(self.field(format!("{what}.{name} must be a string or null"))),
        }
    }

    /// A member that may be absent, or a string or null.
    pub fn optional_text(
        self,
        o: &Object<'_>,
        name: &str,
        what: &str,
    ) -> Result<Option<String>, FormatError> {
        match o.get(name) {
            None => Ok(None),
            Some(_) => self.text_or_null(o, name, what),
        }
    }

    pub fn array<'v, 'a>(
        self,
        o: &'v Object<'a>,
        name: &str,
        what: &str,
    ) -> Result<&'v [Value<'a>], FormatError> {
        o.get(name)
            .and_then(Value::as_array)
            .ok_or_else(|| self.field(format!("{what}.{name} must be an array")))
    }

    /// A whole number from `min`, written as plain digits.
    pub fn whole(
        self,
        o: &Object<'_>,
        name: &str,
        what: &str,
        min: u64,
    ) -> Result<u64, FormatError> {
        match o.get(name) {
            Some(Value::Number(n)) => n.literal().parse::<u64>().ok().filter(|p| *p >= min),
            _ => None,
        }
        .ok_or_else(|| self.field(format!("{what}.{name} must be a whole number from {min}")))
    }

    /// Refuses a name equal after NFC to one already in `seen`.
    pub fn unique(
        self,
        seen: &mut HashSet<String>,
        name: &str,
        what: &str,
    ) -> Result<(), FormatError> {
        if seen.insert(nfc(name)) {
            return Ok(());
        }
        Err(FormatError {
            rule: self.duplicate,
            detail: format!("{what} names {} twice (equal after NFC)", quoted(name, 64)),
        })
    }
}

/// `s` in Unicode Normalization Form C.
pub fn nfc(s: &str) -> String {
    s.nfc().collect()
}

/// The `schema_version` member of a document, if it is a plain whole number.
pub(crate) fn schema_version(v: &Value<'_>) -> Option<u64> {
    match v.as_object()?.get("schema_version")? {
        Value::Number(n) => n.literal().parse().ok(),
        _ => None,
    }
}
