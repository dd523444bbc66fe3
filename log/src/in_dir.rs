//! Reading the files of a log directory: every reader of one (verify-log, publish, the site,
//! lookup, prove) opens its files here and nowhere else.
//!
//! A log directory may come from anyone. A FIFO in it would hang a reader, a link would make it
//! read (and report on) a file outside it. So each directory on the way is opened without
//! following a link, the file itself too and without blocking, and only a regular file is read,
//! never more than its kind allows.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use crate::source::FileError;

/// Opens `rel`, a `/`-separated path of plain names inside `dir`, for reading: a regular file
/// reached through real directories only. `dir` itself is the caller's to choose, links and all.
pub fn open(dir: &Path, rel: &str) -> Result<File, FileError> {
    let parts: Vec<&str> = rel.split('/').collect();
    if let Some(bad) = parts.iter().find(|p| matches!(**p, "" | "." | "..")) {
        return Err(FileError::Io(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{rel:?} has the component {bad:?}: not a path inside the directory"),
        )));
    }
    platform::open(dir, &parts)
}

/// Reads `rel` inside `dir` (see [`open`]), at most `max` bytes.
pub fn read(dir: &Path, rel: &str, max: u64) -> Result<Vec<u8>, FileError> {
    let mut buf = Vec::new();
    read_into(dir, rel, max, &mut buf)?;
    Ok(buf)
}

/// [`read`] into a buffer the caller reuses; its old contents are dropped first.
pub fn read_into(dir: &Path, rel: &str, max: u64, buf: &mut Vec<u8>) -> Result<(), FileError> {
    buf.clear();
    let f = open(dir, rel)?;
    let len = f.metadata().map_err(FileError::Io)?.len();
    if len > max {
        return Err(FileError::TooLarge { max });
    }
    // Room for the size the file has now, and a byte to see that it grew: no doubling past it.
    buf.reserve_exact(len as usize + 1);
    f.take(max.saturating_add(1))
        .read_to_end(buf)
        .map_err(FileError::Io)?;
    if buf.len() as u64 > max {
        return Err(FileError::TooLarge { max });
    }
    Ok(())
}

#[cfg(unix)]
mod platform {
    use std::fs::File;
    use std::os::fd::OwnedFd;
    use std::path::Path;

    use rustix::fs::{fstat, openat, statat, AtFlags, FileType, Mode, OFlags};
    use rustix::io::Errno;

    use super::FileError;

    /// Walks `parts` from `dir` with `openat`, one component at a time, never following a link.
    pub(super) fn open(dir: &Path, parts: &[&str]) -> Result<File, FileError> {
        let mut at: OwnedFd = rustix::fs::open(
            dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| missing_or(e.into()))?;
        let (name, dirs) = parts.split_last().expect("a path has a last component");
        for (i, d) in dirs.iter().enumerate() {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            at = openat(&at, *d, flags, Mode::empty())
                .map_err(|e| refusal(&at, d, &parts[..=i], e))?;
        }
        // Without blocking: a FIFO opens at once, and is then refused for what it is.
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let fd =
            openat(&at, *name, flags, Mode::empty()).map_err(|e| refusal(&at, name, parts, e))?;
        let t = FileType::from_raw_mode(fstat(&fd).map_err(|e| FileError::Io(e.into()))?.st_mode);
        if t != FileType::RegularFile {
            return Err(FileError::NotRegular {
                at: parts.join("/"),
                found: kind(t),
            });
        }
        Ok(File::from(fd))
    }

    /// What a failed open of `name` in `at` means: a link or a non-directory on the way is
    /// refused for what it is, anything else is the error it is.
    fn refusal(at: &OwnedFd, name: &str, path: &[&str], e: Errno) -> FileError {
        if matches!(e, Errno::LOOP | Errno::MLINK | Errno::NOTDIR) {
            if let Ok(st) = statat(at, name, AtFlags::SYMLINK_NOFOLLOW) {
                return FileError::NotRegular {
                    at: path.join("/"),
                    found: kind(FileType::from_raw_mode(st.st_mode)),
                };
            }
        }
        missing_or(e.into())
    }

    /// What a file is, in words, where another kind was needed.
    fn kind(t: FileType) -> &'static str {
        match t {
            FileType::Symlink => "a symbolic link",
            FileType::RegularFile => "a regular file, not a directory",
            FileType::Directory => "a directory",
            FileType::Fifo => "a FIFO",
            FileType::Socket => "a socket",
            FileType::CharacterDevice | FileType::BlockDevice => "a device",
            FileType::Unknown => "of an unknown kind",
        }
    }

    fn missing_or(e: std::io::Error) -> FileError {
        match e.kind() {
            std::io::ErrorKind::NotFound => FileError::Missing,
            _ => FileError::Io(e),
        }
    }
}

/// Without `openat`: each component is looked at without following a link, then opened. A link
/// swapped in between the two is not caught here; unix builds have no such gap.
#[cfg(not(unix))]
mod platform {
    use std::fs::File;
    use std::path::Path;

    use super::FileError;

    pub(super) fn open(dir: &Path, parts: &[&str]) -> Result<File, FileError> {
        let mut path = dir.to_path_buf();
        for (i, p) in parts.iter().enumerate() {
            path.push(p);
            let t = std::fs::symlink_metadata(&path).map_err(io)?.file_type();
            let last = i + 1 == parts.len();
            if t.is_symlink() || (!last && !t.is_dir()) || (last && !t.is_file()) {
                return Err(FileError::NotRegular {
                    at: parts[..=i].join("/"),
                    found: if t.is_symlink() {
                        "a symbolic link"
                    } else if t.is_dir() {
                        "a directory"
                    } else if t.is_file() {
                        "a regular file, not a directory"
                    } else {
                        "not a regular file"
                    },
                });
            }
        }
        File::open(&path).map_err(io)
    }

    fn io(e: std::io::Error) -> FileError {
        match e.kind() {
            std::io::ErrorKind::NotFound => FileError::Missing,
            _ => FileError::Io(e),
        }
    }
}
