//! Unicode checks on served text: hidden or unusual characters, tool names, mixed scripts.
//!
//! A reviewer reads a description on a screen; the model reads its code points. Every character
//! this module reports is one where the two can differ: it renders as nothing, reorders what is
//! around it, carries an invisible message (tag characters), or has no agreed meaning at all
//! (private use, unassigned). The classes are fixed here and in docs/LABELS.md; "unassigned" is
//! judged by the Unicode tables the build links ([`UNICODE_VERSION`]).
//!
//! A string is scanned in context, not character by character: U+FE0E or U+FE0F that completes an
//! emoji variation sequence Unicode lists (`⚠️`), and the zero-width joiners and selectors of a
//! listed emoji ZWJ sequence (a family), are how emoji are written, and a label that fired on every
//! warning emoji would teach reviewers to skip it. Any other variation selector, and a run of two
//! or more, can carry hidden text and is reported.
//!
//! Everything [`classify`] reports is also written as `<U+XXXX>` by
//! [`render::safe`], so a finding can always be shown.

use std::fmt::{self, Write as _};

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
use unicode_script::{Script, ScriptExtension, UnicodeScript};

use crate::emoji;
use crate::json::Value;
use crate::pointer::{JsonPointer, Segment};
use crate::render;

/// The Unicode version of the general-category tables that decide "unassigned" and "format".
pub const UNICODE_VERSION: (u64, u64, u64) = unicode_properties::UNICODE_VERSION;

/// Why a character is reported. One class per character: the first that applies, in the order
/// the variants are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HiddenClass {
    /// General category Cc, except tab, line feed and carriage return.
    Control,
    /// U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069: they reorder text around them.
    Bidi,
    /// U+200B–U+200D, U+2060, U+FEFF. A scan does not report the U+200D of a listed emoji ZWJ
    /// sequence ([`scan_str`]).
    ZeroWidth,
    /// U+E0000–U+E007F: an invisible copy of ASCII (see [`TagMessage`]).
    Tag,
    /// U+FE00–U+FE0F, U+E0100–U+E01EF, and the Mongolian ones U+180B–U+180D, U+180F. A scan
    /// does not report those that write a listed emoji sequence ([`scan_str`]).
    VariationSelector,
    /// Any other general category Cf (soft hyphen, invisible operators, …).
    Format,
    /// Default-ignorable characters that are letters or marks, so render as nothing though not
    /// Cf: U+034F, U+115F, U+1160, U+17B4, U+17B5, U+3164, U+FFA0 (Hangul fillers are a known way
    /// to make a name that looks empty).
    Invisible,
    /// U+2028 and U+2029 (Zl, Zp): line breaks most displays do not show as such.
    Separator,
    /// General category Co.
    PrivateUse,
    /// General category Cn: unassigned code points and noncharacters.
    Unassigned,
}

impl HiddenClass {
    /// A stable token for reports.
    pub fn as_str(self) -> &'static str {
        match self {
            HiddenClass::Control => "control",
            HiddenClass::Bidi => "bidi",
            HiddenClass::ZeroWidth => "zero-width",
            HiddenClass::Tag => "tag",
            HiddenClass::VariationSelector => "variation-selector",
            HiddenClass::Format => "format",
            HiddenClass::Invisible => "invisible",
            HiddenClass::Separator => "separator",
            HiddenClass::PrivateUse => "private-use",
            HiddenClass::Unassigned => "unassigned",
        }
    }
}

impl fmt::Display for HiddenClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The class of a hidden or unusual character, or `None` for an ordinary one.
pub fn classify(c: char) -> Option<HiddenClass> {
    let class = match c as u32 {
        0x09 | 0x0A | 0x0D => return None,
        0x20..=0x7E => return None,
        0x061C | 0x200E | 0x200F | 0x202A..=0x202E | 0x2066..=0x2069 => HiddenClass::Bidi,
        0x200B..=0x200D | 0x2060 | 0xFEFF => HiddenClass::ZeroWidth,
        0xE0000..=0xE007F => HiddenClass::Tag,
        0xFE00..=0xFE0F | 0xE0100..=0xE01EF | 0x180B..=0x180D | 0x180F => {
            HiddenClass::VariationSelector
        }
        0x034F | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x3164 | 0xFFA0 => HiddenClass::Invisible,
        0x2028 | 0x2029 => HiddenClass::Separator,
        _ => match c.general_category() {
            GeneralCategory::Control => HiddenClass::Control,
            GeneralCategory::Format => HiddenClass::Format,
            GeneralCategory::PrivateUse => HiddenClass::PrivateUse,
            GeneralCategory::Unassigned => HiddenClass::Unassigned,
            _ => return None,
        },
    };
    Some(class)
}

/// One hidden character in a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HiddenChar {
    /// Byte offset of the character in the string.
    pub offset: usize,
    pub code_point: char,
    pub class: HiddenClass,
}

/// A run of consecutive tag characters, decoded: U+E0020–U+E007E stand for ASCII 0x20–0x7E
/// (that is how an invisible instruction is smuggled), the others are written `<U+XXXXX>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagMessage {
    /// Byte offset of the run's first character in the string.
    pub offset: usize,
    pub text: String,
}

/// The hidden characters of one string in a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HiddenText {
    /// Where the string is. When `in_member_name` is set, the string is the name of the member
    /// this pointer ends at (so the pointer's last token holds the characters), not its value.
    pub pointer: JsonPointer,
    pub in_member_name: bool,
    pub chars: Vec<HiddenChar>,
    pub tag_messages: Vec<TagMessage>,
}

/// The hidden characters of one string, and its tag messages. U+FE0E and U+FE0F that complete a
/// listed emoji variation sequence, and the U+200D, U+FE0E and U+FE0F inside a listed emoji ZWJ
/// sequence, are not reported, unless another variation selector follows them.
pub fn scan_str(s: &str) -> (Vec<HiddenChar>, Vec<TagMessage>) {
    let mut chars = Vec::new();
    let mut tags: Vec<TagMessage> = Vec::new();
    let mut run_end = None; // byte offset just past the current tag run
    for hidden in hidden_chars(s) {
        chars.push(hidden);
        let HiddenChar {
            offset,
            code_point: c,
            class,
        } = hidden;
        if class == HiddenClass::Tag {
            if run_end != Some(offset) {
                tags.push(TagMessage {
                    offset,
                    text: String::new(),
                });
            }
            let text = &mut tags.last_mut().expect("a run was started").text;
            push_tag(text, c);
            run_end = Some(offset + c.len_utf8());
        }
    }
    (chars, tags)
}

/// Appends what tag character `c` stands for.
fn push_tag(text: &mut String, c: char) {
    match c as u32 {
        t @ 0xE0020..=0xE007E => text.push(char::from((t - 0xE0000) as u8)),
        t => write!(text, "<U+{t:04X}>").expect("writing to a String"),
    }
}

/// Whether `s` holds any character [`scan_str`] reports.
pub fn str_has_hidden(s: &str) -> bool {
    hidden_chars(s).next().is_some()
}

/// The characters of `s` that [`classify`] reports, less those that write a listed emoji
/// sequence.
fn hidden_chars(s: &str) -> impl Iterator<Item = HiddenChar> + '_ {
    // Nearly all text has no joiner, and then no ZWJ sequence needs looking for.
    let joined = s.contains('\u{200D}');
    let mut zwj_end = 0; // byte offset just past the listed ZWJ sequence being read
    s.char_indices().filter_map(move |(offset, c)| {
        if joined && offset >= zwj_end {
            if let Some(len) = emoji::zwj_sequence_at(&s[offset..]) {
                zwj_end = offset + len;
            }
        }
        let class = classify(c)?;
        let in_zwj_sequence = offset < zwj_end;
        let exempt = match c {
            '\u{200D}' => in_zwj_sequence,
            '\u{FE0E}' | '\u{FE0F}' => {
                let before = s[..offset].chars().next_back();
                let after = s[offset + c.len_utf8()..].chars().next();
                // A selector in a run is reported, the first too: a run is how text is hidden.
                let run = after.and_then(classify) == Some(HiddenClass::VariationSelector);
                !run && (in_zwj_sequence
                    || before.is_some_and(|b| emoji::is_variation_sequence(b, c)))
            }
            _ => false,
        };
        (!exempt).then_some(HiddenChar {
            offset,
            code_point: c,
            class,
        })
    })
}

/// Every string (member names included) in `value` that holds a hidden character, in document
/// order; a member name is reported before its value.
pub fn find_hidden(value: &Value<'_>) -> Vec<HiddenText> {
    let mut found = Vec::new();
    let mut path = Vec::new();
    strings(value, &mut path, &mut |path, in_member_name, s| {
        if str_has_hidden(s) {
            let (chars, tag_messages) = scan_str(s);
            found.push(HiddenText {
                pointer: JsonPointer::from_segments(path),
                in_member_name,
                chars,
                tag_messages,
            });
        }
        true
    });
    found
}

/// Whether any string or member name in `value` holds a hidden character.
pub fn has_hidden(value: &Value<'_>) -> bool {
    !strings(value, &mut Vec::new(), &mut |_, _, s| !str_has_hidden(s))
}

/// Calls `f(path, in_member_name, text)` for every member name and string in `value`, in document
/// order, until `f` returns false; returns false if it stopped early. Recurses once per nesting
/// level, which the strict reader caps.
pub(crate) fn strings<'v>(
    value: &'v Value<'_>,
    path: &mut Vec<Segment<'v>>,
    f: &mut dyn FnMut(&[Segment<'v>], bool, &'v str) -> bool,
) -> bool {
    match value {
        Value::String(s) => f(path, false, s),
        Value::Array(items) => items.iter().enumerate().all(|(i, item)| {
            path.push(Segment::Index(i));
            let go_on = strings(item, path, f);
            path.pop();
            go_on
        }),
        Value::Object(o) => o.iter().all(|(name, member)| {
            path.push(Segment::Name(name));
            let go_on = f(path, true, name) && strings(member, path, f);
            path.pop();
            go_on
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => true,
    }
}

/// Why a tool name is not a plain one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameProblem {
    Empty,
    /// A character outside `A-Za-z0-9._-`, at this byte offset.
    Character {
        offset: usize,
        c: char,
    },
    /// More than 128 characters; the count.
    TooLong(usize),
}

impl fmt::Display for NameProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameProblem::Empty => f.write_str("the name is empty"),
            NameProblem::Character { offset, c } => write!(
                f,
                "U+{:04X} {} at byte {offset} is outside A-Z a-z 0-9 . _ -",
                *c as u32,
                render::quoted_char(*c)
            ),
            NameProblem::TooLong(n) => write!(f, "the name is {n} characters, over 128"),
        }
    }
}

/// The longest tool name that is not reported, in characters.
pub const MAX_TOOL_NAME: usize = 128;

/// Why `name` is not a plain tool name (1 to 128 characters of `A-Za-z0-9._-`), or `None`. The
/// first offending character is named before the length, as it is the more telling.
pub fn invalid_tool_name(name: &str) -> Option<NameProblem> {
    if name.is_empty() {
        return Some(NameProblem::Empty);
    }
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if let Some((offset, c)) = name.char_indices().find(|&(_, c)| !plain(c)) {
        return Some(NameProblem::Character { offset, c });
    }
    // Only ASCII is left, so bytes are characters.
    (name.len() > MAX_TOOL_NAME).then_some(NameProblem::TooLong(name.len()))
}

/// The scripts of `name` (Unicode full names, in order of first appearance), when it mixes
/// writing systems; `None` when it does not.
///
/// The rule is UTS #39's "single script" test: intersect the Script_Extensions of every character
/// (Common and Inherited, such as digits and punctuation, take part in every script; unassigned
/// characters are skipped, [`classify`] reports them), treating Han with Hiragana and Katakana
/// (Japanese), Han with Hangul (Korean) and Han with Bopomofo as one writing system each. The name
/// is mixed when nothing is left. So `pаypal` with a Cyrillic `а` is mixed; `日本語のテキスト`
/// is not.
pub fn mixed_script(name: &str) -> Option<Vec<&'static str>> {
    let mut common = ScriptExtension::default();
    // UTS #39's augmented sets Jpan, Kore and Hanb, which unicode-script does not model.
    let (mut jpan, mut kore, mut hanb) = (true, true, true);
    let mut scripts: Vec<Script> = Vec::new();
    for c in name.chars() {
        let ext = c.script_extension();
        if ext.is_common() || ext.is_inherited() || ext.is_empty() {
            continue;
        }
        let has = |s| ext.contains_script(s);
        jpan &= has(Script::Han) || has(Script::Hiragana) || has(Script::Katakana);
        kore &= has(Script::Han) || has(Script::Hangul);
        hanb &= has(Script::Han) || has(Script::Bopomofo);
        common.intersect_with(ext);
        let script = c.script();
        if !matches!(script, Script::Common | Script::Inherited | Script::Unknown)
            && !scripts.contains(&script)
        {
            scripts.push(script);
        }
    }
    let single = !common.is_empty() || jpan || kore || hanb;
    (!single).then(|| scripts.into_iter().map(Script::full_name).collect())
}
