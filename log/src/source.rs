//! Where a log's files come from. Every reader of a published log (verify-log, mirror, lookup,
//! proofs) reads through a [`LogSource`]: a directory ([`Dir`]) here, or a server, which the
//! `http` feature's `fetch` module provides. This crate's readers never open a connection
//! themselves.

use std::fmt;
use std::io;
use std::path::Path;

use crate::in_dir;
use crate::tiles::TileId;

/// The word a refusal of anything but a regular file starts with (docs/SPEC-log.md, section 6).
pub const NOT_REGULAR: &str = "not-regular-file";

/// Why a file of a log was not read.
#[derive(Debug)]
pub enum FileError {
    /// Nothing by that name: no such file in the directory, a 404 from the server.
    Missing,
    /// The file, or a directory on its way, is not what it must be: `at` is its path inside the
    /// directory, `found` what it is instead (a symbolic link, a FIFO…).
    NotRegular {
        at: String,
        found: &'static str,
    },
    /// Larger than its reader takes.
    TooLarge {
        max: u64,
    },
    /// A served file that could not be had, after every retry: the server's status, a timeout, a
    /// connection cut short.
    Fetch(String),
    Io(io::Error),
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileError::Missing => f.write_str("no such file or directory"),
            FileError::NotRegular { at, found } => write!(
                f,
                "{NOT_REGULAR}: {at} is {found}; only regular files are read from a log \
                 directory, never through a link"
            ),
            FileError::TooLarge { max } => write!(f, "larger than {max} bytes"),
            FileError::Fetch(why) => f.write_str(why),
            FileError::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for FileError {}

/// The files of a published log, by their path inside it (`checkpoint`, `tile/0/000`,
/// `blobs/sha256/…`).
pub trait LogSource: Sync {
    /// Reads `rel` into `buf`, dropping what it held: at most `max` bytes, else
    /// [`FileError::TooLarge`].
    fn read_into(&self, rel: &str, max: u64, buf: &mut Vec<u8>) -> Result<(), FileError>;

    /// The older partial versions (`N.p/W`) beside `tile` and narrower than it, by width, where
    /// the source can list them; a server cannot be listed, and has none to check.
    fn older_partials(&self, _tile: &TileId) -> io::Result<Vec<TileId>> {
        Ok(Vec::new())
    }

    /// How many reads are worth having in flight at once: a disk is kept busy by a couple, a
    /// server's latency wants more.
    fn readers(&self) -> u64 {
        2
    }

    /// Where `rel` is, for a message: a path, or a URL.
    fn locate(&self, rel: &str) -> String;

    /// [`LogSource::read_into`] into a new buffer.
    fn read(&self, rel: &str, max: u64) -> Result<Vec<u8>, FileError> {
        let mut buf = Vec::new();
        self.read_into(rel, max, &mut buf)?;
        Ok(buf)
    }
}

impl<T: LogSource + ?Sized> LogSource for &T {
    fn read_into(&self, rel: &str, max: u64, buf: &mut Vec<u8>) -> Result<(), FileError> {
        (**self).read_into(rel, max, buf)
    }

    fn older_partials(&self, tile: &TileId) -> io::Result<Vec<TileId>> {
        (**self).older_partials(tile)
    }

    fn readers(&self) -> u64 {
        (**self).readers()
    }

    fn locate(&self, rel: &str) -> String {
        (**self).locate(rel)
    }
}

/// A log directory, read through [`in_dir`]: no link followed, only regular files.
#[derive(Debug, Clone, Copy)]
pub struct Dir<'a>(pub &'a Path);

impl LogSource for Dir<'_> {
    fn read_into(&self, rel: &str, max: u64, buf: &mut Vec<u8>) -> Result<(), FileError> {
        in_dir::read_into(self.0, rel, max, buf)
    }

    fn locate(&self, rel: &str) -> String {
        self.0.join(rel).display().to_string()
    }

    fn older_partials(&self, tile: &TileId) -> io::Result<Vec<TileId>> {
        let read = match std::fs::read_dir(self.0.join(tile.partials_dir())) {
            Ok(r) => r,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut out = Vec::new();
        for item in read {
            let name = item?.file_name();
            let Some(name) = name.to_str() else { continue };
            // Only canonical names count: `7`, not `07`.
            if name.starts_with('0') || !name.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            if let Ok(width) = name.parse::<u16>() {
                if (1..tile.width).contains(&width) {
                    out.push(TileId { width, ..*tile });
                }
            }
        }
        out.sort_by_key(|t| t.width);
        Ok(out)
    }
}
