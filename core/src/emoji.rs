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
    let first = &s[..first.len_utf8()];
    // Sorted by bytes, so the sequences that start with `first` are one run.
    let from = ZWJ_SEQUENCES.partition_point(|seq| *seq < first);
    ZWJ_SEQUENCES[from..]
        .iter()
        .take_while(|seq| seq.starts_with(first))
        .filter(|seq| s.starts_with(**seq))
        .map(|seq| seq.len())
        .max()
}
