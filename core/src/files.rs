//! Whole-or-nothing file writes and bounded reads: how every file the project writes is made, and
//! how a file a user names is read.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

/// Writes `bytes` to `path` whole or not at all: a temporary file in the same directory, flushed
/// to disk, then renamed over the target. The directory must exist.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_whole(path, bytes, true)
}

/// [`write_atomic`] without the flush to disk, creating missing parent directories: for the
/// many files of a log directory, followed by one [`sync_filesystem`]. Another process sees the
/// file whole or not at all; after a power loss it may be gone until that sync has run.
pub fn write_atomic_unsynced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    // Without a filesystem-wide sync to rely on later, each file is flushed now.
    write_whole(path, bytes, !cfg!(unix))
}

fn write_whole(path: &Path, bytes: &[u8], sync: bool) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    if sync {
        tmp.as_file().sync_all()?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Flushes everything written to the filesystem holding `dir` to disk: one barrier after many
/// [`write_atomic_unsynced`] files, before the file that refers to them is written.
pub fn sync_filesystem(dir: &Path) -> io::Result<()> {
    let f = File::open(dir)?;
    #[cfg(unix)]
    {
        rustix::fs::syncfs(&f)?;
    }
    #[cfg(not(unix))]
    {
        f.sync_all()?;
    }
    Ok(())
}

/// Flushes a directory's entries (the renames into it) to disk.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// A setting file of the pinlog home, as text: `None` when there is none; an error, naming the
/// file, when it cannot be read, is larger than `max` bytes or is not UTF-8 (never taken for
/// the setting being off).
pub fn read_setting(path: &Path, max: u64) -> Result<Option<String>, String> {
    let bytes = match read_bounded(path, max) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| format!("{} line 1: not UTF-8", path.display()))
}

/// Reads a file of at most `max` bytes; a larger one is an error, read no further than `max + 1`.
/// For a file the user names; the files of a log directory are read with `pinlog_log::in_dir`.
pub fn read_bounded(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    let f = File::open(path)?;
    f.take(max.saturating_add(1)).read_to_end(&mut buf)?;
    if buf.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {max} bytes"),
        ));
    }
    Ok(buf)
}
