//! Edits as byte splices: the file is copied as it is, except the ranges replaced.

/// One replacement of `start..end` by `text`.
pub struct Splice {
    pub start: usize,
    pub end: usize,
    pub text: Vec<u8>,
}

/// `src` with every splice applied; they must not overlap.
pub fn apply(src: &[u8], mut splices: Vec<Splice>) -> Vec<u8> {
    splices.sort_by_key(|s| s.start);
    let mut out = Vec::with_capacity(src.len() + 256);
    let mut at = 0;
    for s in splices {
        assert!(s.start >= at && s.end >= s.start, "overlapping edits");
        out.extend_from_slice(&src[at..s.start]);
        out.extend_from_slice(&s.text);
        at = s.end;
    }
    out.extend_from_slice(&src[at..]);
    out
}

/// What separates items in an array: what separates its first two items (`between`) when that is
/// a comma and whitespace; else, from `ws` (the text between `[` and the first item), a comma and
/// the same line break and indentation, or a comma and a space.
pub fn array_separator(ws: &[u8], between: Option<&[u8]>) -> Vec<u8> {
    if let Some(b) = between {
        if b.first() == Some(&b',')
            && b[1..]
                .iter()
                .all(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
        {
            return b.to_vec();
        }
    }
    separator(ws)
}

/// What separates items in an array that starts with `ws` (the text between `[` and its first
/// item): a comma and the same line break and indentation, or a comma and a space.
pub fn separator(ws: &[u8]) -> Vec<u8> {
    match ws.iter().rposition(|&b| b == b'\n') {
        Some(nl) => {
            let indent = &ws[nl + 1..];
            let indent = if indent.iter().all(|b| matches!(b, b' ' | b'\t')) {
                indent
            } else {
                b"".as_slice()
            };
            let mut sep = b",".to_vec();
            if nl > 0 && ws[nl - 1] == b'\r' {
                sep.push(b'\r');
            }
            sep.push(b'\n');
            sep.extend_from_slice(indent);
            sep
        }
        None => b", ".to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators() {
        assert_eq!(separator(b""), b", ");
        assert_eq!(separator(b" "), b", ");
        assert_eq!(separator(b"\n    "), b",\n    ");
        assert_eq!(separator(b"\r\n\t"), b",\r\n\t");
        assert_eq!(separator(b" # c\n  "), b",\n  ");
        assert_eq!(array_separator(b"", Some(b",")), b",");
        assert_eq!(array_separator(b"", Some(b", /* c */ ")), b", ");
        assert_eq!(array_separator(b"\n  ", Some(b",\n  ")), b",\n  ");
    }

    #[test]
    fn splices_apply_in_order() {
        let out = apply(
            b"abcdef",
            vec![
                Splice {
                    start: 4,
                    end: 5,
                    text: b"E".to_vec(),
                },
                Splice {
                    start: 1,
                    end: 1,
                    text: b"+".to_vec(),
                },
            ],
        );
        assert_eq!(out, b"a+bcdEf");
    }
}
