//! Whole-or-nothing file writes and bounded reads: how every file the project writes is made, and
//! how a file a user names is read.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

/// The mode of every file pinlog publishes (the log, a mirror's copy, the site): readable by
/// anyone whatever the umask, since a web server serves it as another user. The temporary file
/// a write starts from is readable by its owner alone.
pub const PUBLIC_FILE_MODE: u32 = 0o644;
/// The mode of the directories a publish creates.
pub const PUBLIC_DIR_MODE: u32 = 0o755;

/// Who may read a file once written.
#[derive(Clone, Copy)]
enum Readers {
    /// The owner alone: the temporary file's own mode.
    Owner,
    /// Anyone: [`PUBLIC_FILE_MODE`].
    Everyone,
}

/// Writes `bytes` to `path` whole or not at all: a temporary file in the same directory, flushed
/// to disk, then renamed over the target. The directory must exist. The file is readable by
/// its owner alone.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_whole(path, bytes, true, Readers::Owner)
}

/// [`write_atomic`] for a published file: mode [`PUBLIC_FILE_MODE`] whatever the umask.
pub fn write_public(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_whole(path, bytes, true, Readers::Everyone)
}

/// [`write_public`] without the flush to disk, creating missing parent directories (mode
/// [`PUBLIC_DIR_MODE`]): for the many files of a log directory or a site, followed by one
/// [`sync_filesystem`]. Another process sees the file whole or not at all; after a power loss it
/// may be gone until that sync has run.
pub fn write_public_unsynced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        create_public_dir_all(dir)?;
    }
    // Without a filesystem-wide sync to rely on later, each file is flushed now.
    write_whole(path, bytes, !cfg!(unix), Readers::Everyone)
}

/// Creates `dir` and its missing parents with mode [`PUBLIC_DIR_MODE`] whatever the umask;
/// directories that exist are left as they are.
pub fn create_public_dir_all(dir: &Path) -> io::Result<()> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        create_public_dir_all(parent)?;
    }
    match std::fs::create_dir(dir) {
        Ok(()) => set_mode(&File::open(dir)?, PUBLIC_DIR_MODE),
        // Made meanwhile by another writer, which sets its mode.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(e),
    }
}

fn write_whole(path: &Path, bytes: &[u8], sync: bool, readers: Readers) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    // Set on the open file, where the umask does not apply, before the rename shows it.
    if let Readers::Everyone = readers {
        set_mode(tmp.as_file(), PUBLIC_FILE_MODE)?;
    }
    tmp.write_all(bytes)?;
    if sync {
        tmp.as_file().sync_all()?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Sets the mode of the open file `f`. Elsewhere than on unix, who reads a file follows its
/// directory's rules, and nothing is set.
fn set_mode(f: &File, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (f, mode);
        Ok(())
    }
}

/// Flushes everything written to the filesystem holding `dir` to disk: one barrier after many
/// [`write_public_unsynced`] files, before the file that refers to them is written.
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn published_files_are_readable_by_anyone_and_others_by_their_owner() {
        let dir = tempfile::tempdir().unwrap();
        let tile = dir.path().join("log/tile/0/000");
        write_public_unsynced(&tile, b"tile").unwrap();
        let checkpoint = dir.path().join("log/checkpoint");
        write_public(&checkpoint, b"checkpoint").unwrap();
        let private = dir.path().join("private");
        write_atomic(&private, b"private").unwrap();
        assert_eq!(std::fs::read(&tile).unwrap(), b"tile");
        assert_eq!(mode(&tile), 0o644);
        assert_eq!(mode(&checkpoint), 0o644);
        assert_eq!(mode(&dir.path().join("log/tile/0")), 0o755);
        assert_eq!(mode(&private), 0o600);
        // Written again over a file of another mode, the file is published.
        std::fs::set_permissions(&checkpoint, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_public(&checkpoint, b"checkpoint 2").unwrap();
        assert_eq!(mode(&checkpoint), 0o644);
    }
}
