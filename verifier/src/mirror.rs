//! `pinlog log mirror`: a copy of a served log in a directory that verifies at every moment.
//!
//! The files a run fetches wait in [`INCOMING`] inside the copy until the new checkpoint has
//! verified over them; then they move into place, are made durable, and only then is the copy's
//! checkpoint replaced. A run that fails removes what it fetched: the copy stays the one that
//! verified last, and the next run starts clean. The copy's checkpoint is the state: a later run
//! proves the served log extends it, and reads only the entries added since.

use std::io;
use std::path::Path;

use pinlog_core::files::{create_public_dir_all, sync_filesystem};
use pinlog_log::source::LogSource;

use crate::outcome::{Location, VerifyError};
use crate::verify_log::{check, record, Options, State, Verified};
use crate::Policy;

/// What the entry rules carry from one run to the next, beside the copy's files.
pub const RULES_FILE: &str = ".pinlog-mirror-rules";
/// Where a run's fetched files wait until they verified.
pub const INCOMING: &str = ".pinlog-mirror-incoming";

/// A mirror run that verified.
#[derive(Debug)]
pub struct Mirrored {
    pub verified: Verified,
    /// Files added to the copy.
    pub added: u64,
}

/// Brings the copy in `dir` up to the log `source` serves. `source` must read the copy's files
/// from `dir` before fetching, and keep what it fetches in `dir/INCOMING` (`fetch::Served`
/// with `with_copy(dir)` and `with_cache(&dir.join(INCOMING))`).
pub fn mirror<S: LogSource>(
    source: &S,
    dir: &Path,
    policy: Policy,
    generic: bool,
    progress: impl FnMut(u64, u64),
) -> Result<Mirrored, VerifyError> {
    let incoming = dir.join(INCOMING);
    let failed = |what: &str, e: io::Error| {
        VerifyError::unreadable(
            Location::State,
            format!("cannot {what} in {}: {e}", dir.display()),
        )
    };
    create_public_dir_all(dir).map_err(|e| failed("create the copy", e))?;
    // What a run that crashed left behind was never verified.
    remove(&incoming).map_err(|e| failed("clear what an earlier run left", e))?;
    let state = State {
        checkpoint: dir.join("checkpoint"),
        rules: dir.join(RULES_FILE),
    };
    let options = Options {
        policy,
        state: Some(state.clone()),
        generic,
    };
    let outcome = check(source, &options, progress).and_then(|(verified, carried)| {
        let added = move_into(&incoming, &incoming, dir)
            .map_err(|e| failed("move the verified files", e))?;
        sync_filesystem(dir).map_err(|e| failed("make the files durable", e))?;
        record(&state, &verified, carried.as_ref())?;
        Ok(Mirrored { verified, added })
    });
    let cleared = remove(&incoming);
    let mirrored = outcome?;
    cleared.map_err(|e| failed("remove the incoming files", e))?;
    Ok(mirrored)
}

/// Moves every file below `from` (walked from `root`) to the same place below `to`.
fn move_into(root: &Path, from: &Path, to: &Path) -> io::Result<u64> {
    let mut moved = 0;
    let entries = match std::fs::read_dir(from) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    for item in entries {
        let item = item?;
        let path = item.path();
        let kind = item.file_type()?;
        if kind.is_dir() {
            moved += move_into(root, &path, to)?;
        } else if kind.is_file() {
            let rel = path.strip_prefix(root).map_err(io::Error::other)?;
            let dest = to.join(rel);
            if let Some(parent) = dest.parent() {
                create_public_dir_all(parent)?;
            }
            std::fs::rename(&path, &dest)?;
            moved += 1;
        }
    }
    Ok(moved)
}

fn remove(dir: &Path) -> io::Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}
