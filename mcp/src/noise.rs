//! Lines a stdio server writes on standard output that are no JSON-RPC message at all: a banner,
//! a log line. The official SDK clients skip a line they cannot read and go on, so a server that
//! prints one works for its users; the crawler's client skips them too, within bounds, and says
//! so. A line that may be a message is never skipped: it is read strictly, as every message is.

use pinlog_core::json::{self, Limits};

/// The most lines a session skips; one more fails it.
pub const MAX_LINES: u32 = 100;
/// The most bytes a session skips, line ends aside; more fails it.
pub const MAX_BYTES: u64 = 64 << 10;
/// How much of the skipped text is kept, for the report and for what the server says it wants.
const KEPT_BYTES: usize = 8 << 10;

/// What a session skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Noise {
    pub lines: u32,
    pub bytes: u64,
    /// The first lines skipped, each ending with `\n`, up to a few KiB; as the server wrote
    /// them, so to be rendered safe before they are shown.
    pub kept: Vec<u8>,
}

impl Noise {
    /// Counts `line` as skipped, or says why no more may be.
    pub fn skip(&mut self, line: &[u8]) -> Result<(), String> {
        self.lines += 1;
        self.bytes += line.len() as u64;
        if self.kept.len() + line.len() < KEPT_BYTES {
            self.kept.extend_from_slice(line);
            self.kept.push(b'\n');
        }
        if self.lines > MAX_LINES || self.bytes > MAX_BYTES {
            return Err(format!(
                "the server wrote more than {MAX_LINES} lines or {MAX_BYTES} bytes on standard \
                 output that are not JSON-RPC messages; the first: {}",
                pinlog_core::render::quoted(&self.first(), 120)
            ));
        }
        Ok(())
    }

    /// The first line skipped, as text (not yet safe to print).
    pub fn first(&self) -> String {
        let end = self
            .kept
            .iter()
            .position(|&b| b == b'\n')
            .unwrap_or(self.kept.len());
        String::from_utf8_lossy(&self.kept[..end]).into_owned()
    }
}

/// Whether `line` is no JSON-RPC message at all. A message is a JSON object (or, refused later,
/// a batch of them), so a line that does not begin as one (`{"` or `{}`, `[{`) is not, in any
/// reader's eyes; nor is a line that reads strictly as JSON but is not an object with a `jsonrpc`
/// member (a structured log line). The rest (a repeated member, an unpaired surrogate, a
/// number with no exact value) might be taken for a message by a lenient reader, so it is left to
/// the strict one, which refuses it.
pub fn is_noise(line: &[u8], max: usize) -> bool {
    let mut bytes = line.iter().filter(|b| !b.is_ascii_whitespace());
    let may_be_message = matches!(
        (bytes.next(), bytes.next()),
        (Some(b'{'), Some(b'"' | b'}')) | (Some(b'['), Some(b'{'))
    );
    if !may_be_message {
        return true;
    }
    match json::parse(line, Limits::with_max_bytes(max)) {
        Ok(v) => v.as_object().is_some_and(|o| o.get("jsonrpc").is_none()),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_json_without_jsonrpc_are_noise() {
        for line in [
            &b"Server running on stdio"[..],
            b"[INFO] starting",
            b"[1, 2]",
            b"{'status': 'ok'}",
            b"{ not json }",
            b"  \"a string\"",
            b"42",
            b"{\"level\":30,\"msg\":\"listening\"}",
            b"\x1b[31m{\"jsonrpc\":\"2.0\"}",
        ] {
            assert!(is_noise(line, 1 << 20), "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn whatever_may_be_a_message_is_left_to_the_strict_reader() {
        for line in [
            &b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}"[..],
            // Repeated members: refused, never skipped, whichever member is repeated.
            b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{},\"result\":{\"x\":1}}",
            b"{\"level\":1,\"level\":2}",
            // A member name escaped is the same name.
            b"{\"json\\u0072pc\":\"2.0\",\"id\":0,\"result\":{}}",
            b"  {\"jsonrpc\":\"1.0\"}",
            b"[{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}]",
            b"{\"a\":\"\\ud800\"}",
        ] {
            assert!(
                !is_noise(line, 1 << 20),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn skipping_is_bounded_in_lines_and_bytes() {
        let mut n = Noise::default();
        for _ in 0..MAX_LINES {
            n.skip(b"hello").unwrap();
        }
        let e = n.skip(b"hello").unwrap_err();
        assert!(
            e.contains("more than 100 lines") && e.contains("\"hello\""),
            "{e}"
        );
        let mut n = Noise::default();
        n.skip(&vec![b'x'; MAX_BYTES as usize]).unwrap();
        assert!(n.skip(b"y").is_err());
        assert_eq!(n.kept, b"y\n", "a long line is counted, not kept");
    }
}
