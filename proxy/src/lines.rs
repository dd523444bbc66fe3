//! Newline-delimited messages, read with a bound on the length of one line.

use std::io;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

pub struct Lines<R> {
    inner: BufReader<R>,
    max: usize,
    line: Vec<u8>,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    pub fn new(inner: R, max: usize) -> Self {
        Lines {
            inner: BufReader::with_capacity(64 << 10, inner),
            max,
            line: Vec::new(),
        }
    }

    /// The next non-empty line without its line end; `None` at the end of input. A line longer
    /// than the bound is an error. Cancel-safe: a partial line stays here for the next call, as
    /// the only await is on filling the buffer.
    pub async fn next(&mut self) -> io::Result<Option<Vec<u8>>> {
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                if self.line.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(std::mem::take(&mut self.line)));
            }
            let (take, end) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (i, true),
                None => (available.len(), false),
            };
            self.line.extend_from_slice(&available[..take]);
            self.inner.consume(take + usize::from(end));
            if self.line.len() > self.max {
                self.line.clear();
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("a message longer than {} bytes", self.max),
                ));
            }
            if end {
                if self.line.last() == Some(&b'\r') {
                    self.line.pop();
                }
                if !self.line.is_empty() {
                    return Ok(Some(std::mem::take(&mut self.line)));
                }
            }
        }
    }
}
