//! Text labels: what the strings of a value say (an order to the model, a secret, an address)
//! and whether they hide characters.

use std::collections::BTreeSet;

use unicode_normalization::UnicodeNormalization;

use super::address::addresses_in;
use super::{Label, Labels};
use crate::json::Value;
use crate::unicode::{classify, has_hidden, scan_str, strings, HiddenClass};

/// Phrases that address the model with an order. Written as normalised text reads
/// (docs/LABELS.md, "Text rules").
pub const IMPERATIVE_PHRASES: &[&str] = &[
    "ignore previous",
    "ignore all previous",
    "ignore any previous",
    "ignore the above",
    "disregard previous",
    "disregard all previous",
    "disregard the above",
    "forget previous",
    "forget all previous",
    "you must",
    "you should always",
    "you are required to",
    "always call",
    "always use",
    "always run",
    "before using",
    "before calling",
    "before any other",
    "do not tell the user",
    "don't tell the user",
    "do not inform the user",
    "do not mention",
    "without telling",
    "without asking",
    "without informing",
    "<important>",
    "<system>",
    "<instructions>",
];

/// Words that name secrets or private files and records. Written as normalised text reads
/// (docs/LABELS.md, "Text rules"): `api key` also matches `API_KEY` and `api-key`. A bare "token"
/// is not listed: in the tools models use, "max tokens" is everyday language; the kinds of token
/// that are secrets are.
pub const SECRET_PHRASES: &[&str] = &[
    "~/.ssh",
    ".ssh/",
    "id rsa",
    "id ed25519",
    "id ecdsa",
    "authorized keys",
    ".env",
    "/etc/passwd",
    "/etc/shadow",
    ".netrc",
    ".npmrc",
    ".pypirc",
    "password",
    "passwd",
    "passphrase",
    "api key",
    "apikey",
    "api token",
    "access token",
    "auth token",
    "bearer token",
    "refresh token",
    "session token",
    "oauth token",
    "secret",
    "credential",
    "private key",
    "seed phrase",
    "mnemonic",
    "keychain",
    "cookie",
    "conversation history",
    "chat history",
    "message history",
    "previous messages",
    "your notes",
    "private notes",
    "personal notes",
];

/// The labels that depend on what text says: `new-instruction`, `mentions-secrets`, `new-link`
/// (each when the new text has something the old has not), and `hidden-characters` (when the new
/// version has any).
pub(super) fn text_labels(old: Option<&Value<'_>>, new: &Value<'_>, labels: &mut Labels) {
    let (before, after) = (Text::of(old), Text::of(Some(new)));
    let newly = |phrases: &[&str]| {
        phrases
            .iter()
            .any(|p| after.mentions(p) && !before.mentions(p))
    };
    if newly(IMPERATIVE_PHRASES) {
        labels.insert(Label::NewInstruction);
    }
    if newly(SECRET_PHRASES) {
        labels.insert(Label::MentionsSecrets);
    }
    if !after.addresses().is_subset(&before.addresses()) {
        labels.insert(Label::NewLink);
    }
    if has_hidden(new) {
        labels.insert(Label::HiddenCharacters);
    }
}

/// Every string and member name of a value, normalised so that a phrase is found however it is
/// dressed. One line per string, plus one line per decoded tag message (tag characters are an
/// invisible copy of ASCII that a model may still read).
struct Text {
    /// Hidden characters removed (so `ig<U+200B>nore` reads `ignore`), then NFKC (full-width and
    /// other compatibility forms fold to plain letters), lower case, every run of white space one
    /// space. Addresses are looked for here.
    plain: String,
    /// `plain` with `_` and `-` also read as spaces, so that `API_KEY`, `api-key` and `api key`
    /// are one phrase. Phrases are looked for here.
    words: String,
}

impl Text {
    fn of(value: Option<&Value<'_>>) -> Text {
        let mut text = Text {
            plain: String::new(),
            words: String::new(),
        };
        if let Some(value) = value {
            strings(value, &mut Vec::new(), &mut |_, _, s| {
                text.push_line(s);
                if s.chars().any(|c| classify(c) == Some(HiddenClass::Tag)) {
                    for message in scan_str(s).1 {
                        text.push_line(&message.text);
                    }
                }
                true
            });
        }
        text
    }

    fn push_line(&mut self, s: &str) {
        let visible = s.chars().filter(|&c| classify(c).is_none());
        let plain: String = visible.nfkc().flat_map(char::to_lowercase).collect();
        let space = |c: char| c.is_whitespace();
        push_collapsed(&mut self.plain, &plain, space);
        push_collapsed(&mut self.words, &plain, |c| {
            space(c) || c == '_' || c == '-'
        });
    }

    /// Whether `phrase` occurs at word boundaries: no letter or digit touches either end of it,
    /// except that a plural `s` may follow. An end that is itself punctuation (`~/.ssh`, `.env`)
    /// needs no boundary there.
    fn mentions(&self, phrase: &str) -> bool {
        let text = &self.words;
        let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        let open = word(phrase.chars().next());
        let close = word(phrase.chars().next_back());
        let mut from = 0;
        while let Some(i) = text[from..].find(phrase) {
            let (at, end) = (from + i, from + i + phrase.len());
            let rest = &text[end..];
            let rest = rest.strip_prefix('s').unwrap_or(rest);
            let glued_before = open && word(text[..at].chars().next_back());
            let glued_after = close && word(rest.chars().next());
            if !glued_before && !glued_after {
                return true;
            }
            from = at + text[at..].chars().next().map_or(1, char::len_utf8);
        }
        false
    }

    /// The URLs, e-mail addresses and IP addresses in the text.
    fn addresses(&self) -> BTreeSet<&str> {
        let mut found = BTreeSet::new();
        for line in self.plain.lines() {
            for word in line.split(' ') {
                addresses_in(word, &mut found);
            }
        }
        found
    }
}

/// Appends `s` as one line, each run of characters `space` accepts written as one space and none
/// at the start.
fn push_collapsed(out: &mut String, s: &str, space: impl Fn(char) -> bool) {
    let line_start = out.len();
    for c in s.chars() {
        if !space(c) {
            out.push(c);
        } else if out.len() > line_start && !out.ends_with(' ') {
            out.push(' ');
        }
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    /// A phrase that is not already in normalised form could never match.
    #[test]
    fn phrases_are_written_normalised() {
        for phrase in IMPERATIVE_PHRASES.iter().chain(SECRET_PHRASES) {
            let text = Text::of(Some(&Value::String(Cow::Borrowed(phrase))));
            assert_eq!(text.words, format!("{phrase}\n"), "{phrase}");
        }
    }
}
