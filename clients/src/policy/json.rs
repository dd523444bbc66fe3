//! JSON for the policy files: written compactly with the strict writer's string form, read back
//! by the strict reader (so what is written is strict JSON), and laid out one member per line
//! with members in canonical order and a final line feed.

use pinlog_core::json::{self, Limits};

/// A compact JSON document under construction.
#[derive(Default)]
pub struct Doc(Vec<u8>);

impl Doc {
    pub fn raw(&mut self, s: &str) -> &mut Self {
        self.0.extend_from_slice(s.as_bytes());
        self
    }

    pub fn string(&mut self, s: &str) -> &mut Self {
        json::write_string(&mut self.0, s);
        self
    }

    pub fn strings<'s>(&mut self, items: impl IntoIterator<Item = &'s String>) -> &mut Self {
        json::write_strings(&mut self.0, items.into_iter().map(String::as_str));
        self
    }

    /// The document laid out for people: canonical member order, two-space indents, a final
    /// line feed.
    pub fn pretty(&self) -> Vec<u8> {
        let value =
            json::parse(&self.0, Limits::default()).expect("the policy writer writes strict JSON");
        let mut out = Vec::with_capacity(self.0.len() * 2);
        json::write_pretty(&value, &mut out);
        out.push(b'\n');
        out
    }
}
