//! The pin store's file made: whole, private, and never half-made where a proxy could open it.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use super::{io_error, PinStoreError, DB_FILE, SCHEMA_VERSION, SERVERS};
use crate::events;

pub(super) fn exists(path: &Path) -> Result<bool, PinStoreError> {
    path.try_exists().map_err(|e| io_error("look for", path, e))
}

/// Creates the store: under a lock beside it, built complete in a temporary file and renamed into
/// place, so that no proxy ever opens a half-made store (which it would refuse).
pub(super) fn create(home: &Path, path: &Path) -> Result<(), PinStoreError> {
    let mut dir = fs::DirBuilder::new();
    dir.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut dir, 0o700);
    dir.create(home).map_err(|e| io_error("create", home, e))?;
    let private = |o: &mut fs::OpenOptions| {
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(o, 0o600);
        let _ = o;
    };
    let lock_path = home.join("pins.lock");
    let mut o = fs::OpenOptions::new();
    o.create(true).truncate(false).write(true);
    private(&mut o);
    let lock = o
        .open(&lock_path)
        .map_err(|e| io_error("open", &lock_path, e))?;
    lock.lock().map_err(|e| io_error("lock", &lock_path, e))?;
    if exists(path)? {
        return Ok(());
    }
    // A journal left beside a store that was moved away would be replayed into the new one.
    for suffix in ["-wal", "-shm", "-journal"] {
        remove_stale(&PathBuf::from(format!("{}{suffix}", path.display())))?;
    }
    let tmp = home.join(format!("{DB_FILE}.new"));
    for suffix in ["", "-wal", "-shm", "-journal"] {
        remove_stale(&PathBuf::from(format!("{}{suffix}", tmp.display())))?;
    }
    let mut o = fs::OpenOptions::new();
    o.write(true).create_new(true);
    private(&mut o);
    o.open(&tmp).map_err(|e| io_error("create", &tmp, e))?;
    let conn = Connection::open_with_flags(&tmp, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
    conn.execute_batch(&format!(
        "BEGIN; {SERVERS} {} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;",
        events::SCHEMA
    ))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.close().map_err(|(_, e)| e)?;
    fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .map_err(|e| io_error("sync", &tmp, e))?;
    fs::rename(&tmp, path).map_err(|e| io_error("create", path, e))?;
    #[cfg(unix)]
    fs::File::open(home)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_error("sync", home, e))?;
    Ok(())
}

fn remove_stale(path: &Path) -> Result<(), PinStoreError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_error("remove", path, e)),
        _ => Ok(()),
    }
}
