//! Why the strict reader refused a document, and where.

use std::fmt;

/// The rule a refused document broke. Each rule has a stable name, used in messages and reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// The document is larger than the configured maximum.
    TooLarge,
    /// The bytes are not UTF-8.
    InvalidUtf8,
    /// The document starts with a byte order mark, which JSON does not allow.
    ByteOrderMark,
    /// The document ends in the middle of a value.
    UnexpectedEnd,
    /// A byte that JSON's grammar does not allow here.
    Syntax,
    /// A control character (U+0000 to U+001F) written raw inside a string.
    ControlCharacter,
    /// A backslash escape JSON does not define.
    InvalidEscape,
    /// A `\u` escape of a surrogate without its other half.
    UnpairedSurrogate,
    /// A number that JSON's grammar does not allow.
    InvalidNumber,
    /// The same member name twice in one object.
    DuplicateMember,
    /// Two member names in one object that are one name after Unicode NFC.
    NfcEqualMembers,
    /// Arrays and objects nested deeper than the configured maximum.
    TooDeep,
    /// Anything but whitespace after the end of the document.
    TrailingData,
}

impl Rule {
    /// The rule's stable name.
    pub fn name(self) -> &'static str {
        match self {
            Rule::TooLarge => "too-large",
            Rule::InvalidUtf8 => "invalid-utf8",
            Rule::ByteOrderMark => "byte-order-mark",
            Rule::UnexpectedEnd => "unexpected-end",
            Rule::Syntax => "syntax",
            Rule::ControlCharacter => "control-character",
            Rule::InvalidEscape => "invalid-escape",
            Rule::UnpairedSurrogate => "unpaired-surrogate",
            Rule::InvalidNumber => "invalid-number",
            Rule::DuplicateMember => "duplicate-member",
            Rule::NfcEqualMembers => "nfc-equal-members",
            Rule::TooDeep => "too-deep",
            Rule::TrailingData => "trailing-data",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A refused document: the rule, a detail safe to print, and the byte offset where it was broken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    pub rule: Rule,
    /// Zero-based offset into the input.
    pub offset: usize,
    /// What was found, already rendered safe for a terminal.
    pub detail: String,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} at byte {}", self.rule, self.detail, self.offset)
    }
}

impl std::error::Error for ReadError {}
