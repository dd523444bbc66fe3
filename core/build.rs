//! Reads Unicode's emoji sequence files (vendored unchanged in unicode/) into sorted tables for
//! `pinlog_core::unicode`. A line that is not what UTS #51 specifies fails the build, so a
//! damaged or substituted file never yields a table that silently permits more.

use std::fmt::Write as _;
use std::path::Path;

const VARIATIONS: &str = "unicode/emoji-variation-sequences.txt";
const ZWJ: &str = "unicode/emoji-zwj-sequences.txt";

fn main() {
    println!("cargo::rerun-if-changed={VARIATIONS}");
    println!("cargo::rerun-if-changed={ZWJ}");

    let mut variations: Vec<(char, char)> = sequences(VARIATIONS)
        .into_iter()
        .map(|(line, seq)| match seq[..] {
            [base, selector @ ('\u{FE0E}' | '\u{FE0F}')] => (base, selector),
            _ => panic!("{VARIATIONS}:{line}: not a base followed by U+FE0E or U+FE0F"),
        })
        .collect();
    variations.sort_unstable();
    variations.dedup();

    let mut zwj: Vec<String> = sequences(ZWJ)
        .into_iter()
        .map(|(line, seq)| {
            assert!(
                seq.len() >= 3 && seq.contains(&'\u{200D}'),
                "{ZWJ}:{line}: not a sequence joined by U+200D"
            );
            seq.into_iter().collect()
        })
        .collect();
    zwj.sort_unstable();
    zwj.dedup();
    let mut firsts: Vec<char> = zwj.iter().filter_map(|seq| seq.chars().next()).collect();
    firsts.dedup();

    let mut out = String::new();
    writeln!(
        out,
        "/// Every (base, selector) pair of emoji-variation-sequences.txt, sorted.\n\
         static VARIATION_SEQUENCES: [(char, char); {}] = [",
        variations.len()
    )
    .unwrap();
    for (base, selector) in &variations {
        writeln!(out, "    ({base:?}, {selector:?}),").unwrap();
    }
    writeln!(
        out,
        "];\n/// Every sequence of emoji-zwj-sequences.txt, sorted by UTF-8 bytes.\n\
         static ZWJ_SEQUENCES: [&str; {}] = [",
        zwj.len()
    )
    .unwrap();
    for seq in &zwj {
        writeln!(out, "    {seq:?},").unwrap();
    }
    writeln!(
        out,
        "];\n/// The characters the sequences of emoji-zwj-sequences.txt start with, sorted.\n\
         static ZWJ_FIRSTS: [char; {}] = [",
        firsts.len()
    )
    .unwrap();
    for c in &firsts {
        writeln!(out, "    {c:?},").unwrap();
    }
    out.push_str("];\n");
    let dir = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&dir).join("emoji_sequences.rs"), out).unwrap();
}

/// The code point sequences of a UTS #51 data file, with their line numbers: the first field of
/// every line that is neither blank nor a comment.
fn sequences(path: &str) -> Vec<(usize, Vec<char>)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(i, l)| {
            let field = l.split(';').next().unwrap_or_default();
            let seq = field
                .split_whitespace()
                .map(|hex| {
                    u32::from_str_radix(hex, 16)
                        .ok()
                        .and_then(char::from_u32)
                        .unwrap_or_else(|| panic!("{path}:{}: {hex:?} is no code point", i + 1))
                })
                .collect();
            (i + 1, seq)
        })
        .collect()
}
