//! An installed tree as one digest, sealed read-only, and removed again.
//!
//! The digest covers every path below the root in byte order, its kind (directory, file,
//! executable file, symbolic link) and its content (a file's SHA-256, a link's target), so a file
//! changed, added, removed, renamed, made executable or replaced by a link changes it. Owners,
//! times and the other mode bits are not covered: they are not what a server runs.

use std::fs::{self, File, Permissions};
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use pinlog_core::Digest;
use sha2::{Digest as _, Sha256};

/// What [`measure`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measured {
    pub digest: Digest,
    /// The files' sizes, added up.
    pub bytes: u64,
}

/// The digest and size of the tree at `root`. Anything but directories, files and links (a
/// socket, a device) is an error: an installer makes none.
pub fn measure(root: &Path) -> io::Result<Measured> {
    let mut tree = Sha256::new();
    let mut bytes = 0u64;
    let mut buf = vec![0u8; 64 << 10];
    for (rel, kind) in walk(root)? {
        let path = root.join(&rel);
        let (tag, content): (&[u8], Vec<u8>) = match kind {
            Kind::Dir => (b"d", Vec::new()),
            Kind::Link => (b"l", fs::read_link(&path)?.as_os_str().as_bytes().to_vec()),
            Kind::File { executable } => {
                // A link put in the file's place since the walk is not followed.
                let mut f = File::options()
                    .read(true)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(&path)?;
                let mut h = Sha256::new();
                loop {
                    let n = f.read(&mut buf)?;
                    if n == 0 {
                        break;
                    }
                    h.update(&buf[..n]);
                    bytes += n as u64;
                }
                let tag: &[u8] = if executable { b"x" } else { b"f" };
                (tag, h.finalize().to_vec())
            }
        };
        // Paths and link targets hold no NUL byte, so NUL ends each field unambiguously; a file's
        // content is a fixed-length hash.
        tree.update(tag);
        tree.update(rel.as_os_str().as_bytes());
        tree.update([0]);
        tree.update(&content);
        tree.update([0]);
    }
    Ok(Measured {
        digest: Digest::from_bytes(tree.finalize().into()),
        bytes,
    })
}

/// What a copy of the tree at `root` takes on a tmpfs: each file's size rounded up to whole pages,
/// and a page for every entry (its inode and directory entry, which the kernel charges too). An
/// upper bound, not an exact count.
pub fn footprint(root: &Path) -> io::Result<u64> {
    const PAGE: u64 = 4096;
    let mut bytes = PAGE;
    for (rel, kind) in walk(root)? {
        bytes = bytes.saturating_add(PAGE);
        if let Kind::File { .. } = kind {
            let len = fs::symlink_metadata(root.join(rel))?.len();
            bytes = bytes.saturating_add(len.div_ceil(PAGE) * PAGE);
        }
    }
    Ok(bytes)
}

/// Takes write permission off every file and directory below `root` and off `root` itself, so
/// that nothing run as the operator writes into the tree by mistake.
pub fn seal(root: &Path) -> io::Result<()> {
    let mut dirs = vec![root.to_path_buf()];
    for (rel, kind) in walk(root)? {
        let path = root.join(rel);
        match kind {
            Kind::Dir => dirs.push(path),
            Kind::File { .. } => read_only(&path)?,
            Kind::Link => {}
        }
    }
    for d in dirs.iter().rev() {
        read_only(d)?;
    }
    Ok(())
}

/// Removes the tree at `root`, sealed or not; a tree that is not there is already removed.
pub fn remove(root: &Path) -> io::Result<()> {
    match fs::symlink_metadata(root) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
        Ok(m) if !m.is_dir() => return fs::remove_file(root),
        Ok(_) => {}
    }
    // A sealed directory's entries can only be removed once it is writable again; parents first.
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mode = fs::symlink_metadata(&dir)?.permissions().mode();
        fs::set_permissions(&dir, Permissions::from_mode(mode | 0o700))?;
        for e in fs::read_dir(&dir)? {
            let e = e?;
            if e.file_type()?.is_dir() {
                stack.push(e.path());
            }
        }
    }
    fs::remove_dir_all(root)
}

fn read_only(path: &Path) -> io::Result<()> {
    let mode = fs::symlink_metadata(path)?.permissions().mode();
    fs::set_permissions(path, Permissions::from_mode(mode & !0o222))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dir,
    File { executable: bool },
    Link,
}

/// Every path below `root` (relative to it) with its kind, in an order fixed by the names alone: a
/// directory's entries in byte order, then the subtree of each of its subdirectories in turn.
/// Links are reported, never followed.
fn walk(root: &Path) -> io::Result<Vec<(PathBuf, Kind)>> {
    let mut out = Vec::new();
    // Walked with a stack of its own: a deep tree cannot exhaust the thread's.
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let mut names: Vec<_> = fs::read_dir(root.join(&rel))?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()?;
        names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        let mut subdirs = Vec::new();
        for name in names {
            let child = rel.join(&name);
            let meta = fs::symlink_metadata(root.join(&child))?;
            let ft = meta.file_type();
            let kind = if ft.is_dir() {
                Kind::Dir
            } else if ft.is_file() {
                Kind::File {
                    executable: meta.permissions().mode() & 0o111 != 0,
                }
            } else if ft.is_symlink() {
                Kind::Link
            } else {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{} is neither a file, a directory nor a link",
                        child.display()
                    ),
                ));
            };
            out.push((child.clone(), kind));
            if kind == Kind::Dir {
                subdirs.push(child);
            }
        }
        stack.extend(subdirs.into_iter().rev());
    }
    Ok(out)
}
