//! Reading inputs and writing outputs for the commands.

use std::fs::File;
use std::io::{self, IsTerminal, Read};
use std::path::Path;

use pinlog_core::exit::Failure;
use pinlog_core::render;

/// How text from outside is rendered in messages.
#[derive(Clone, Copy)]
pub struct Render {
    pub ascii: bool,
}

impl Render {
    /// Renders `text` safe for a terminal (docs/CLI.md, "Rendering").
    pub fn text<'s>(&self, s: &'s str) -> std::borrow::Cow<'s, str> {
        if self.ascii {
            render::safe_ascii(s)
        } else {
            render::safe(s)
        }
    }

    /// Prints `error: <message>` on standard error.
    pub fn error(&self, message: &str) {
        eprintln!("error: {}", self.text(message));
    }
}

/// Reads the input a command names (a file, or standard input for none or `-`), at most
/// `--max-bytes` + 1 bytes so that the reader can refuse an oversized document without the whole
/// of it being held in memory.
pub fn read_input(file: Option<&Path>, max_bytes: usize) -> Result<Vec<u8>, Failure> {
    let limit = u64::try_from(max_bytes)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let mut buf = Vec::new();
    match file {
        None => read_bounded(io::stdin().lock(), limit, &mut buf),
        Some(p) if p == Path::new("-") => read_bounded(io::stdin().lock(), limit, &mut buf),
        Some(p) => {
            let f = File::open(p)
                .map_err(|e| Failure::unreadable(format!("cannot open {}: {e}", p.display())))?;
            if let Ok(meta) = f.metadata() {
                buf.reserve(usize::try_from(meta.len().min(limit)).unwrap_or(0));
            }
            read_bounded(f, limit, &mut buf).map_err(|e| format!("{}: {e}", p.display()))
        }
    }
    .map(|()| buf)
    .map_err(Failure::unreadable)
}

fn read_bounded(r: impl Read, limit: u64, buf: &mut Vec<u8>) -> Result<(), String> {
    r.take(limit)
        .read_to_end(buf)
        .map(|_| ())
        .map_err(|e| format!("cannot read the input: {e}"))
}

/// Writes `bytes` to `path` whole or not at all: a temporary file beside it, then a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    pinlog_core::files::write_atomic(path, bytes)
        .map_err(|e| Failure::unreadable(format!("cannot write {}: {e}", path.display())))
}

/// Whether standard output is a terminal, where bytes from outside must be rendered safe.
pub fn stdout_is_terminal() -> bool {
    io::stdout().is_terminal()
}

/// Standard output, buffered; the caller flushes it and reports a failure.
pub fn stdout_buffered() -> io::BufWriter<io::StdoutLock<'static>> {
    io::BufWriter::with_capacity(1 << 16, io::stdout().lock())
}

/// Standard output could not be written (a closed pipe, a full disk).
pub fn stdout_failed(e: io::Error) -> Failure {
    Failure::unreadable(format!("cannot write to standard output: {e}"))
}
