//! Where the files go: under `--out`, never into a directory a product reads policy from, and
//! readable by everyone (a policy file the product's user cannot read is no policy).

use std::io;
use std::path::{Component, Path, PathBuf};

use super::PolicyFile;

/// The directories the products read policy from, or their parents (case ignored: macOS and
/// Windows file systems usually ignore it too).
const UNIX_SYSTEM_DIRS: [&str; 3] = [
    "/etc",
    "/Library/Application Support",
    "/Library/Managed Preferences",
];

/// The system directory `dir` is, or is inside, after symbolic links and `..` are resolved;
/// `None` when it is none of them. `pinlog policy` writes nothing there: it never installs.
pub fn system_dir(dir: &Path) -> Option<String> {
    let resolved = resolve(dir);
    let mut roots: Vec<PathBuf> = UNIX_SYSTEM_DIRS.iter().map(PathBuf::from).collect();
    if cfg!(windows) {
        for var in ["ProgramFiles", "ProgramW6432", "ProgramData"] {
            if let Some(v) = std::env::var_os(var) {
                roots.push(PathBuf::from(v));
            }
        }
        roots.push(PathBuf::from(r"C:\Program Files"));
        roots.push(PathBuf::from(r"C:\ProgramData"));
    }
    roots.into_iter().find_map(|root| {
        let root = resolve(&root);
        within(&resolved, &root).then(|| root.display().to_string())
    })
}

/// `path` made absolute, its longest existing prefix with links resolved, and the rest joined
/// with `.` and `..` taken lexically.
fn resolve(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    let mut existing = abs.as_path();
    let mut rest = Vec::new();
    let base = loop {
        if let Ok(c) = existing.canonicalize() {
            break c;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(p), Some(name)) => {
                rest.push(name.to_os_string());
                existing = p;
            }
            // `..` or a root that cannot be resolved: lexical from here.
            _ => break existing.to_path_buf(),
        }
    };
    let mut out = base;
    for part in rest.iter().rev() {
        for c in Path::new(part).components() {
            match c {
                Component::ParentDir => {
                    out.pop();
                }
                Component::CurDir => {}
                other => out.push(other),
            }
        }
    }
    // The unresolved part may itself hold `..` (`missing/../..`): take it lexically.
    let mut clean = PathBuf::new();
    for c in out.components() {
        match c {
            Component::ParentDir => {
                clean.pop();
            }
            Component::CurDir => {}
            other => clean.push(other),
        }
    }
    clean
}

fn within(path: &Path, root: &Path) -> bool {
    let fold = |p: &Path| {
        p.components()
            .map(|c| c.as_os_str().to_string_lossy().to_lowercase())
            .collect::<Vec<_>>()
    };
    let (p, r) = (fold(path), fold(root));
    !r.is_empty() && p.len() >= r.len() && p[..r.len()] == r[..]
}

/// Writes each file under `out`, whole or not at all, readable by everyone (0644 on Unix).
pub fn write(out: &Path, files: &[PolicyFile]) -> io::Result<Vec<PathBuf>> {
    let mut written = Vec::with_capacity(files.len());
    for f in files {
        let path = f.path.split('/').fold(out.to_path_buf(), |p, s| p.join(s));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        pinlog_core::files::write_atomic(&path, &f.bytes)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))?;
        }
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn system_directories_are_found_through_dots_and_case() {
        assert!(system_dir(Path::new("/etc")).is_some());
        assert!(system_dir(Path::new("/etc/claude-code")).is_some());
        assert!(system_dir(Path::new("/tmp/../etc/x")).is_some());
        assert!(system_dir(Path::new("/tmp/no-such-dir/../../etc")).is_some());
        assert!(system_dir(Path::new("/Library/application support/ClaudeCode")).is_some());
        assert!(system_dir(Path::new("/etcetera")).is_none());
        assert!(system_dir(Path::new("/tmp/policy")).is_none());
    }
}
