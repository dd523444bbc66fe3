//! Safe rendering of text that came from outside.
//!
//! Served text is attacker-controlled, and a terminal or a code-scanning page obeys what it is
//! shown: an escape sequence can erase the line above it, a bidi override can reorder it, a
//! zero-width character can hide in it. Text output therefore never writes such a character as
//! itself; it writes `<U+XXXX>` instead. JSON output is not rendered: it carries values as served.

use std::borrow::Cow;
use std::fmt::Write;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Whether text output must write `c` as `<U+XXXX>`: controls (including tab and line feed),
/// format characters (bidi controls, zero-width characters, tag characters), line and paragraph
/// separators, private-use, unassigned, and the other default-ignorable code points (variation
/// selectors, fillers).
pub fn needs_escape(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    matches!(
        c.general_category(),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
            | GeneralCategory::PrivateUse
            | GeneralCategory::Surrogate
            | GeneralCategory::Unassigned
    ) || is_default_ignorable_mark_or_letter(c)
}

/// Default_Ignorable_Code_Point characters that are neither format characters nor unassigned
/// (Unicode DerivedCoreProperties): they render as nothing but are marks or letters.
fn is_default_ignorable_mark_or_letter(c: char) -> bool {
    matches!(c as u32,
        0x034F              // combining grapheme joiner
        | 0x115F..=0x1160   // Hangul fillers
        | 0x17B4..=0x17B5   // Khmer inherent vowels
        | 0x180B..=0x180D   // Mongolian variation selectors
        | 0x180F
        | 0x3164            // Hangul filler
        | 0xFE00..=0xFE0F   // variation selectors
        | 0xFFA0            // halfwidth Hangul filler
        | 0xE0100..=0xE01EF // variation selectors supplement
    )
}

/// `s` with every character that [`needs_escape`] written as `<U+XXXX>`.
pub fn safe(s: &str) -> Cow<'_, str> {
    escape_where(s, needs_escape)
}

/// `s` with every non-ASCII character and every control written as `<U+XXXX>`.
pub fn safe_ascii(s: &str) -> Cow<'_, str> {
    escape_where(s, |c| !c.is_ascii() || c.is_ascii_control())
}

fn escape_where(s: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    // Printable ASCII is never escaped, and nearly all names are nothing else.
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Cow::Borrowed(s);
    }
    let Some(first) = s.find(&escape) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 16);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        if escape(c) {
            write!(out, "<U+{:04X}>", c as u32).expect("writing to a String");
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` in double quotes, rendered safe and cut after `max_chars` characters, for messages.
pub fn quoted(s: &str, max_chars: usize) -> String {
    let mut cut: String = s.chars().take(max_chars).collect();
    let more = cut.len() < s.len();
    cut = safe(&cut).into_owned();
    if more {
        cut.push('…');
    }
    format!("\"{cut}\"")
}

/// One character in single quotes, rendered safe, for messages.
pub fn quoted_char(c: char) -> String {
    let mut buf = [0u8; 4];
    format!("'{}'", safe(c.encode_utf8(&mut buf)))
}
