//! Advisory file locks (`flock`) with a bounded wait. They hold between threads and between
//! processes on one machine, and go when the file is closed, so a look that dies leaves none.

use std::fs::File;
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use rustix::fs::{flock, FlockOperation};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Shared,
    Exclusive,
}

/// `path` (created if missing) locked in `mode`, waiting at most `wait`; `None` if another holder
/// kept it that long.
pub fn lock(path: &Path, mode: Mode, wait: Duration) -> io::Result<Option<File>> {
    let file = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    let op = match mode {
        Mode::Shared => FlockOperation::NonBlockingLockShared,
        Mode::Exclusive => FlockOperation::NonBlockingLockExclusive,
    };
    let start = Instant::now();
    loop {
        match flock(&file, op) {
            Ok(()) => return Ok(Some(file)),
            Err(rustix::io::Errno::WOULDBLOCK) | Err(rustix::io::Errno::INTR) => {
                let waited = start.elapsed();
                if waited >= wait {
                    return Ok(None);
                }
                std::thread::sleep((wait - waited).min(Duration::from_millis(25)));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Turns `file`'s exclusive lock into a shared one. Not atomic (`flock` drops the old lock
/// first): callers hold a lock that keeps anyone who could take the file in between away.
pub fn share(file: &File) -> io::Result<()> {
    flock(file, FlockOperation::LockShared).map_err(Into::into)
}
