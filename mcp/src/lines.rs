//! Newline-delimited messages, read with a bound on the length of one line, from a blocking or
//! an async reader: the stdio transport of MCP, on either side.

use std::fmt;
use std::io::{self, BufRead};

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Why no line was read.
#[derive(Debug)]
pub enum Error {
    /// A line longer than the bound; what is left of it is skipped.
    TooLong(usize),
    /// More bytes than the bound on the whole input.
    TooMuch(u64),
    Io(io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::TooLong(max) => write!(f, "a message longer than {max} bytes"),
            Error::TooMuch(total) => write!(f, "more than {total} bytes in all"),
            Error::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        match e {
            Error::Io(e) => e,
            other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
        }
    }
}

/// The lines of a buffered reader: each without its line end (`\n`, or `\r\n`), empty ones
/// skipped. A line is at most `max` bytes; one that goes past is an error as soon as it does (it
/// is never held whole), and the rest of it is skipped by the next read.
pub struct Lines<R> {
    inner: R,
    state: State,
}

/// Where reading stands, apart from the reader so that both can be borrowed at once.
struct State {
    max: usize,
    line: Vec<u8>,
    /// What is left of a line that went past the bound.
    skipping: bool,
    /// The bound on all bytes read, and the bytes read.
    total: Option<u64>,
    read: u64,
    /// A last line with no line end is dropped rather than read.
    whole_only: bool,
}

impl<R> Lines<R> {
    pub fn new(inner: R, max: usize) -> Lines<R> {
        Lines {
            inner,
            state: State {
                max,
                line: Vec::new(),
                skipping: false,
                total: None,
                read: 0,
                whole_only: false,
            },
        }
    }

    /// Reading more than `bytes` in all is an error, as soon as it happens.
    pub fn total(mut self, bytes: u64) -> Lines<R> {
        self.state.total = Some(bytes);
        self
    }

    /// A last line that the end of input cuts off before its line end is no line.
    pub fn whole_lines_only(mut self) -> Lines<R> {
        self.state.whole_only = true;
        self
    }
}

impl State {
    /// Takes what it can of `available`: how many bytes it took, and the line or the error they
    /// finished, if any.
    fn take(&mut self, available: &[u8]) -> (usize, Option<Result<Vec<u8>, Error>>) {
        let (len, end) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (available.len(), false),
        };
        let taken = len + usize::from(end);
        self.read += taken as u64;
        if self.skipping {
            self.skipping = !end;
        } else if self.line.len() + len > self.max {
            self.line.clear();
            self.skipping = !end;
            return (taken, Some(Err(Error::TooLong(self.max))));
        } else {
            self.line.extend_from_slice(&available[..len]);
        }
        if let Some(total) = self.total.filter(|t| self.read > *t) {
            return (taken, Some(Err(Error::TooMuch(total))));
        }
        if end {
            if self.line.last() == Some(&b'\r') {
                self.line.pop();
            }
            if !self.line.is_empty() {
                return (taken, Some(Ok(std::mem::take(&mut self.line))));
            }
        }
        (taken, None)
    }

    /// At the end of input: the last line, if one was cut off there.
    fn end(&mut self) -> Option<Vec<u8>> {
        self.skipping = false;
        let last = std::mem::take(&mut self.line);
        (!last.is_empty() && !self.whole_only).then_some(last)
    }
}

impl<R: AsyncBufRead + Unpin> Lines<R> {
    /// The next line; `None` at the end of input. Cancel-safe: a partial line stays here for the
    /// next call, as the only await is on filling the buffer.
    pub async fn next(&mut self) -> Result<Option<Vec<u8>>, Error> {
        loop {
            let available = self.inner.fill_buf().await.map_err(Error::Io)?;
            if available.is_empty() {
                return Ok(self.state.end());
            }
            let (taken, line) = self.state.take(available);
            self.inner.consume(taken);
            if let Some(line) = line {
                return line.map(Some);
            }
        }
    }
}

impl<R: BufRead> Lines<R> {
    /// The next line, blocking; `None` at the end of input.
    pub fn next_blocking(&mut self) -> Result<Option<Vec<u8>>, Error> {
        loop {
            let available = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::Io(e)),
            };
            if available.is_empty() {
                return Ok(self.state.end());
            }
            let (taken, line) = self.state.take(available);
            self.inner.consume(taken);
            if let Some(line) = line {
                return line.map(Some);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::AsyncWriteExt;

    use super::*;

    /// `input` read `chunk` bytes at a time.
    fn chunked(input: &[u8], chunk: usize) -> io::BufReader<&[u8]> {
        io::BufReader::with_capacity(chunk, input)
    }

    /// Every line read, and every error as its text, up to the end or to an error that ends all.
    fn all(mut lines: Lines<impl BufRead>) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            match lines.next_blocking() {
                Ok(None) => return out,
                Ok(Some(line)) => out.push(String::from_utf8(line).unwrap()),
                Err(e @ Error::TooLong(_)) => out.push(e.to_string()),
                Err(e) => {
                    out.push(e.to_string());
                    return out;
                }
            }
        }
    }

    #[test]
    fn lines_end_with_lf_or_crlf_and_empty_ones_are_skipped() {
        for chunk in [1, 2, 3, 64] {
            let lines = Lines::new(chunked(b"a\r\n\n\r\nb\n \n\r\r\nc", chunk), 10);
            assert_eq!(all(lines), ["a", "b", " ", "\r", "c"], "{chunk}");
        }
    }

    #[test]
    fn a_line_past_the_bound_is_an_error_and_the_rest_of_it_is_skipped() {
        for chunk in [1, 3, 64] {
            let input = b"12345\n123456789\n1234\r\n12345\r\n123456";
            assert_eq!(
                all(Lines::new(chunked(input, chunk), 5)),
                [
                    "12345",
                    "a message longer than 5 bytes",
                    "1234",
                    "a message longer than 5 bytes",
                    "a message longer than 5 bytes",
                ],
                "{chunk}"
            );
        }
    }

    #[test]
    fn a_last_line_needs_no_line_end_unless_asked() {
        assert_eq!(all(Lines::new(chunked(b"a\nb", 1), 5)), ["a", "b"]);
        let whole = Lines::new(chunked(b"a\nb", 1), 5).whole_lines_only();
        assert_eq!(all(whole), ["a"]);
    }

    #[test]
    fn the_bound_on_all_input_counts_every_byte_read() {
        for chunk in [1, 64] {
            let lines = Lines::new(chunked(b"ab\n\ncd\n", chunk), 5).total(4);
            assert_eq!(all(lines), ["ab", "more than 4 bytes in all"], "{chunk}");
        }
    }

    #[tokio::test]
    async fn async_lines_read_as_blocking_ones_do() {
        let input = b"a\r\n\n123456789\nb\r\nc";
        for chunk in [1, 3, 64] {
            let mut lines = Lines::new(tokio::io::BufReader::with_capacity(chunk, &input[..]), 5);
            let mut out = Vec::new();
            loop {
                match lines.next().await {
                    Ok(None) => break,
                    Ok(Some(line)) => out.push(String::from_utf8(line).unwrap()),
                    Err(e) => out.push(e.to_string()),
                }
            }
            assert_eq!(out, all(Lines::new(chunked(input, chunk), 5)), "{chunk}");
        }
    }

    #[tokio::test]
    async fn a_read_given_up_midway_loses_nothing() {
        let (mut tx, rx) = tokio::io::duplex(64);
        let mut lines = Lines::new(tokio::io::BufReader::new(rx), 100);
        tx.write_all(b"hel").await.unwrap();
        let early = tokio::time::timeout(Duration::from_millis(20), lines.next()).await;
        assert!(early.is_err(), "no line yet");
        tx.write_all(b"lo\n").await.unwrap();
        assert_eq!(lines.next().await.unwrap(), Some(b"hello".to_vec()));
    }
}
