//! Finding the end of plain string content, shared by the reader and the writer.
//!
//! Plain content is every byte but `"`, `\` and the controls U+0000–U+001F: the reader stops at
//! those to decode an escape or refuse a raw control, the writer to escape them. Strings are most
//! of what MCP tool definitions hold, so this runs eight bytes at a time.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The offset of the first byte at or after `from` that is `"`, `\` or below 0x20, or
/// `bytes.len()` if there is none (also when `from` is past the end).
pub(crate) fn skip_plain(bytes: &[u8], from: usize) -> usize {
    let mut i = from.min(bytes.len());
    while let Some(chunk) = bytes.get(i..i + 8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let mask = stop_mask(word);
        if mask != 0 {
            // Flags are exact up to the first stop byte (borrows only run upwards), and with
            // little-endian loads the lowest flag is the first byte.
            return i + (mask.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    bytes[i..]
        .iter()
        .position(|&b| is_stop(b))
        .map_or(bytes.len(), |n| i + n)
}

/// The high bit of each byte of `word` that is a stop byte (and possibly of bytes after it).
fn stop_mask(word: u64) -> u64 {
    let zero_byte = |v: u64| v.wrapping_sub(ONES) & !v;
    let quote = zero_byte(word ^ (ONES * u64::from(b'"')));
    let backslash = zero_byte(word ^ (ONES * u64::from(b'\\')));
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    (quote | backslash | control) & HIGHS
}

/// The offset of the first comma at or after `at` that separates two items of an array whose
/// items start at `from`: outside strings, with every bracket opened since `from` closed. `None`
/// when the array (or the input) ends first.
///
/// This follows strings and brackets only; it validates nothing. A caller must confirm the place
/// by reading the items before it strictly.
pub fn next_item_separator(bytes: &[u8], from: usize, at: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = from;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => {
                i += 1;
                loop {
                    i = skip_plain(bytes, i);
                    match bytes.get(i)? {
                        b'"' => break,
                        // The escaped byte, whatever it is, does not end the string.
                        b'\\' => i += 2,
                        _ => i += 1,
                    }
                }
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.checked_sub(1)?,
            b',' if depth == 0 && i >= at => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

fn is_stop(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_stop_byte_at_every_position_and_alignment() {
        let stops = [b'"', b'\\', 0x00, 0x1f, b'\n'];
        let fillers = [b'a', b' ', 0x20, 0x7f, 0x80, 0xc3, 0xff, b'#', b'!', b']'];
        for len in 0..40 {
            for &filler in &fillers {
                let plain = vec![filler; len];
                assert_eq!(skip_plain(&plain, 0), len);
                for at in 0..len {
                    for &stop in &stops {
                        let mut bytes = plain.clone();
                        bytes[at] = stop;
                        for from in 0..=at {
                            assert_eq!(skip_plain(&bytes, from), at, "{bytes:?} from {from}");
                        }
                        // A second stop later does not hide the first.
                        if at + 1 < len {
                            bytes[len - 1] = b'"';
                            assert_eq!(skip_plain(&bytes, 0), at);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_start_past_the_end_finds_nothing() {
        assert_eq!(skip_plain(b"ab", 2), 2);
        assert_eq!(skip_plain(b"ab", 7), 2);
    }

    #[test]
    fn item_separators_outside_strings_only() {
        let doc = br#"[{"a":"x,\"]"},[1,2],"\\",3]"#;
        let from = 1;
        let found: Vec<usize> = (0..doc.len())
            .filter_map(|at| next_item_separator(doc, from, at))
            .collect();
        let commas: Vec<usize> = vec![14, 20, 25];
        assert!(found.iter().all(|c| commas.contains(c)), "{found:?}");
        assert_eq!(next_item_separator(doc, from, 0), Some(14));
        assert_eq!(next_item_separator(doc, from, 15), Some(20));
        assert_eq!(next_item_separator(doc, from, 26), None);
        // Found by the fuzzer: input that ends right after a backslash inside a string.
        assert_eq!(next_item_separator(br#"["\"#, 1, 0), None);
        assert_eq!(next_item_separator(br#"["\\"#, 1, 0), None);
        assert_eq!(next_item_separator(b"[\"", 1, 0), None);
    }

    #[test]
    fn agrees_with_a_bytewise_scan_on_every_byte_value() {
        for b in 0..=255u8 {
            for at in 0..16 {
                let mut bytes = vec![b'x'; 16];
                bytes[at] = b;
                let want = if is_stop(b) { at } else { 16 };
                assert_eq!(skip_plain(&bytes, 0), want, "byte {b:#04x} at {at}");
            }
        }
    }
}
