//! The emoji sequences Unicode lists, where a variation selector or a zero-width joiner is how an
//! emoji is written rather than a place to hide text.
//!
//! The lists are Unicode's own files, vendored unchanged in `core/unicode/` and read into tables
//! by the build script: emoji-variation-sequences.txt and emoji-zwj-sequences.txt (UTS #51).

include!(concat!(env!("OUT_DIR"), "/emoji_sequences.rs"));

/// Whether `base` followed by `selector` (U+FE0E or U+FE0F) is an emoji variation sequence
/// Unicode lists, such as U+26A0 U+FE0F, the emoji presentation of the warning sign.
pub(crate) fn is_variation_sequence(base: char, selector: char) -> bool {
    VARIATION_SEQUENCES.binary_search(&(base, selector)).is_ok()
}

/// The length in bytes of the longest emoji ZWJ sequence Unicode lists that `s` starts with.
pub(crate) fn zwj_sequence_at(s: &str) -> Option<usize> {
    let first = s.chars().next()?;
    // Most characters start no sequence, and a few dozen characters are cheaper to search.
    ZWJ_FIRSTS.binary_search(&first).ok()?;
    let mut longest = None;
    // A walk down a trie: sorted by bytes, the sequences that start with a prefix are one run,
    // and each code point more narrows it.
    let mut run = &ZWJ_SEQUENCES[..];
    for end in s.char_indices().map(|(i, c)| i + c.len_utf8()) {
        let prefix = &s[..end];
        run = &run[run.partition_point(|seq| *seq < prefix)..];
        run = &run[..run.partition_point(|seq| seq.starts_with(prefix))];
        match run.first() {
            None => break,
            Some(seq) if seq.len() == end => longest = Some(end),
            Some(_) => {}
        }
    }
    longest
}
