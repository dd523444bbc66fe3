//! Checking one `c2sp.org/tlog-proof@v1` receipt offline.

use std::path::Path;

use pinlog_log::checkpoint::Checkpoint;
use pinlog_log::entry::Entry;
use pinlog_log::in_dir;
use pinlog_log::merkle::{self, verify_inclusion};
use pinlog_log::note::MAX_NOTE;
use pinlog_log::proof::Receipt;
use pinlog_log::source::Dir;
use pinlog_log::tile_reader::TileReader;
use pinlog_log::Hash;

use crate::checkpoint::{self, Opened, Policy};
use crate::outcome::{Location, VerifyError};

/// A receipt that verified.
#[derive(Debug, Clone)]
pub struct ProvedEntry {
    pub index: u64,
    pub opened: Opened,
    /// The entry, when the receipt carries it and it is a pinlog entry.
    pub entry: Option<Entry>,
}

/// Checks a receipt: its checkpoint against the policy, and the inclusion of its entry. The entry
/// is the receipt's `extra` line or, without one, entry `index` of the log in `dir`. With `dir`,
/// the receipt's checkpoint must also be part of that log copy.
pub fn verify_proof(
    receipt: &[u8],
    policy: &Policy,
    dir: Option<&Path>,
    generic: bool,
) -> Result<ProvedEntry, VerifyError> {
    let r = Receipt::parse(receipt)
        .map_err(|e| VerifyError::unreadable(Location::Proof, e.to_string()))?;
    let opened = checkpoint::open(r.checkpoint.as_bytes(), policy, Location::Proof)?;
    let c = &opened.checkpoint;
    if r.index >= c.size {
        return Err(VerifyError::bad(
            Location::Proof,
            "inclusion",
            format!("entry {} is not in a tree of {} entries", r.index, c.size),
        ));
    }
    let copy = dir.map(|d| open_copy(d, policy, c)).transpose()?;
    let entry_bytes = match (&r.extra, &copy) {
        (Some(extra), _) => extra.clone(),
        (None, Some(reader)) => reader.entry(r.index).map_err(VerifyError::from)?,
        (None, None) => {
            return Err(VerifyError::unreadable(
                Location::Proof,
                "the receipt carries no entry (no extra line); give the log directory too",
            ))
        }
    };
    verify_inclusion(
        r.index,
        c.size,
        &Hash::leaf(&entry_bytes),
        &r.proof,
        &c.root,
    )
    .map_err(|e| {
        VerifyError::bad(
            Location::Proof,
            "inclusion",
            format!("entry {}: {e}", r.index),
        )
    })?;
    if let Some(mut reader) = copy {
        let root = merkle::tree_root(&mut reader, c.size).map_err(VerifyError::from)?;
        if root != c.root {
            return Err(VerifyError::bad(
                Location::Proof,
                "not-in-this-log",
                format!(
                    "the directory's first {} entries have root {root}, the receipt's checkpoint {}",
                    c.size, c.root
                ),
            ));
        }
    }
    let entry = if generic {
        None
    } else {
        Some(
            Entry::read(&entry_bytes)
                .map_err(|e| VerifyError::bad(Location::Entry(r.index), e.rule, e.detail))?,
        )
    };
    Ok(ProvedEntry {
        index: r.index,
        opened,
        entry,
    })
}

/// The tiles of a log copy of the receipt's log: its checkpoint opens against the same policy,
/// names the same origin, covers the receipt's size, and its tiles give its own signed root (so
/// the tiles checked against the receipt are the ones the copy's key signed).
fn open_copy<'a>(
    dir: &'a Path,
    policy: &Policy,
    receipt: &Checkpoint,
) -> Result<TileReader<Dir<'a>>, VerifyError> {
    let bytes = in_dir::read(dir, "checkpoint", MAX_NOTE as u64).map_err(|e| {
        VerifyError::unreadable(Location::Checkpoint, format!("{}: {e}", dir.display()))
    })?;
    let theirs = checkpoint::open(&bytes, policy, Location::Checkpoint)?.checkpoint;
    if theirs.origin != receipt.origin {
        return Err(VerifyError::bad(
            Location::Checkpoint,
            "not-in-this-log",
            format!(
                "the directory holds the log {:?}, the receipt is for {:?}",
                theirs.origin, receipt.origin
            ),
        ));
    }
    if theirs.size < receipt.size {
        return Err(VerifyError::unreadable(
            Location::Checkpoint,
            format!(
                "the directory's log has {} entries, fewer than the receipt's {}; fetch a newer copy",
                theirs.size, receipt.size
            ),
        ));
    }
    let mut reader = TileReader::new(Dir(dir), theirs.size);
    let root = merkle::tree_root(&mut reader, theirs.size).map_err(VerifyError::from)?;
    if root != theirs.root {
        return Err(VerifyError::bad(
            Location::Checkpoint,
            "root-mismatch",
            format!(
                "the directory's tiles give root {root}, its checkpoint signs {}",
                theirs.root
            ),
        ));
    }
    Ok(reader)
}
