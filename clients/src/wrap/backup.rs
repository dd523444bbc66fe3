//! Backups of the files `wrap` changes, and atomic writes.
//!
//! Each run that changes a file makes one directory `<data dir>/backups/<UTC time>-<n>/` holding
//! a copy of each file as it was (`<client>/<file name>`) and `index.json`, which records for
//! each the path it came from, the SHA-256 of the bytes copied, and the SHA-256 of the bytes
//! written in their place. `unwrap` restores a file from the newest backup whose written digest is
//! the file's digest now.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use pinlog_core::json::{self, write_string, Limits};
use pinlog_core::Digest;

pub const INDEX: &str = "index.json";
const INDEX_VERSION: &str = "pinlog-wrap-backup/1";

/// The SHA-256 of `bytes`, as 64 hex digits.
pub fn sha256(bytes: &[u8]) -> String {
    Digest::of(bytes).hex()
}

/// One file backed up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `wrap` or `unwrap`: the command that changed the file.
    pub op: String,
    /// The client label (`claude-code`, `config`, …).
    pub client: String,
    /// The configuration file, as an absolute path.
    pub path: PathBuf,
    /// The copy, relative to the run's directory.
    pub backup: String,
    /// The SHA-256 of the bytes copied (the file before the change).
    pub original_sha256: String,
    /// The SHA-256 of the bytes written in their place.
    pub written_sha256: String,
    /// The pinlog command written in front of the servers (`wrap` only): later runs know a
    /// server it wrapped by it, whatever `--pinlog` they are given.
    pub program: Option<String>,
}

/// A backup run's directory and what it holds.
#[derive(Debug)]
pub struct Run {
    pub dir: PathBuf,
    pub entries: Vec<Entry>,
}

fn create_private_dir(dir: &Path) -> io::Result<()> {
    private_dir_builder(true).create(dir)
}

/// Directories only their owner can read: backups hold what the configurations hold (tokens).
fn private_dir_builder(recursive: bool) -> fs::DirBuilder {
    let mut b = fs::DirBuilder::new();
    b.recursive(recursive);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b
}

/// `2026-05-01T12:34:56Z` → `20260501T123456Z`: sortable, and a valid file name everywhere.
fn stamp() -> String {
    pinlog_core::clock::now().replace(['-', ':'], "")
}

impl Run {
    /// A new, empty run directory under `data_dir/backups`.
    pub fn create(data_dir: &Path) -> io::Result<Run> {
        let root = data_dir.join("backups");
        create_private_dir(&root)?;
        let stamp = stamp();
        for n in 0..1000 {
            let dir = root.join(format!("{stamp}-{n:03}"));
            match private_dir_builder(false).create(&dir) {
                Ok(()) => {
                    return Ok(Run {
                        dir,
                        entries: Vec::new(),
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other(format!(
            "cannot make a new backup directory in {}",
            root.display()
        )))
    }

    /// Copies `original` (the bytes of `path`) into the run and records it, with the digest of
    /// what is about to replace it. The index is on disk before this returns, so a file is never
    /// changed without its backup being findable.
    pub fn add(
        &mut self,
        op: &str,
        client: &str,
        path: &Path,
        original: &[u8],
        written: &[u8],
        program: Option<&str>,
    ) -> io::Result<PathBuf> {
        let file_name = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| "config".into());
        let mut rel = format!("{client}/{file_name}");
        let mut n = 1;
        while self.entries.iter().any(|e| e.backup == rel) {
            n += 1;
            rel = format!("{client}/{n}-{file_name}");
        }
        let copy = self.dir.join(&rel);
        create_private_dir(copy.parent().expect("in the run directory"))?;
        write_new(&copy, original)?;
        self.entries.push(Entry {
            op: op.into(),
            client: client.into(),
            path: path.to_path_buf(),
            backup: rel,
            original_sha256: sha256(original),
            written_sha256: sha256(written),
            program: program.map(str::to_string),
        });
        write_atomic(&self.dir.join(INDEX), &self.index_bytes(), None)?;
        Ok(copy)
    }

    fn index_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(b"{\n  \"version\": ");
        write_string(&mut out, INDEX_VERSION);
        out.extend_from_slice(b",\n  \"created\": ");
        write_string(&mut out, &pinlog_core::clock::now());
        out.extend_from_slice(b",\n  \"files\": [");
        for (i, e) in self.entries.iter().enumerate() {
            out.extend_from_slice(if i == 0 { b"\n    {" } else { b",\n    {" });
            let path = e.path.to_string_lossy();
            let mut fields = vec![
                ("op", e.op.as_str()),
                ("client", e.client.as_str()),
                ("path", &path),
                ("backup", e.backup.as_str()),
                ("original_sha256", e.original_sha256.as_str()),
                ("written_sha256", e.written_sha256.as_str()),
            ];
            if let Some(p) = &e.program {
                fields.push(("program", p));
            }
            for (j, (k, v)) in fields.iter().enumerate() {
                if j > 0 {
                    out.extend_from_slice(b", ");
                }
                write_string(&mut out, k);
                out.extend_from_slice(b": ");
                write_string(&mut out, v);
            }
            out.push(b'}');
        }
        out.extend_from_slice(b"\n  ]\n}\n");
        out
    }

    /// The bytes backed up for `entry`, when they are still the bytes recorded.
    pub fn original(&self, entry: &Entry) -> Result<Vec<u8>, String> {
        let copy = self.dir.join(&entry.backup);
        let bytes = fs::read(&copy)
            .map_err(|e| format!("cannot read the backup {}: {e}", copy.display()))?;
        if sha256(&bytes) != entry.original_sha256 {
            return Err(format!(
                "the backup {} is not what was backed up (its SHA-256 differs)",
                copy.display()
            ));
        }
        Ok(bytes)
    }
}

fn read_index(dir: &Path) -> Option<Vec<Entry>> {
    let bytes = fs::read(dir.join(INDEX)).ok()?;
    let v = json::parse(&bytes, Limits::default()).ok()?;
    let o = v.as_object()?;
    if o.get("version")?.as_str()? != INDEX_VERSION {
        return None;
    }
    o.get("files")?
        .as_array()?
        .iter()
        .map(|f| {
            let f = f.as_object()?;
            let s = |k: &str| f.get(k).and_then(|v| v.as_str()).map(str::to_string);
            let backup = s("backup")?;
            // A backup is inside its run directory; never follow one out of it.
            if Path::new(&backup)
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
            {
                return None;
            }
            Some(Entry {
                op: s("op")?,
                client: s("client")?,
                path: PathBuf::from(s("path")?),
                backup,
                original_sha256: s("original_sha256")?,
                written_sha256: s("written_sha256")?,
                program: s("program"),
            })
        })
        .collect()
}

/// Every backup run under `data_dir`, newest first. A run whose index does not read is skipped.
pub fn runs(data_dir: &Path) -> Vec<Run> {
    let Ok(list) = fs::read_dir(data_dir.join("backups")) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = list
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.reverse();
    dirs.into_iter()
        .filter_map(|dir| read_index(&dir).map(|entries| Run { dir, entries }))
        .collect()
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn temp_beside(path: &Path) -> io::Result<(PathBuf, fs::File)> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    for _ in 0..100 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.pinlog-{}-{n}.tmp", std::process::id()));
        let mut o = fs::OpenOptions::new();
        o.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600);
        }
        match o.open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("cannot make a temporary file"))
}

/// Writes a file that must not exist yet (a backup copy), mode 0600.
fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut o = fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    let mut f = o.open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Replaces `path` with `bytes` all at once: a temporary file in the same directory, written,
/// synced, given `permissions` (the replaced file's), and renamed over it. A symbolic link is
/// followed, so the file it points to is replaced and the link stays.
pub fn write_atomic(
    path: &Path,
    bytes: &[u8],
    permissions: Option<fs::Permissions>,
) -> io::Result<()> {
    let target = match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path)?,
        _ => path.to_path_buf(),
    };
    let (tmp, mut f) = temp_beside(&target)?;
    let result = (|| {
        f.write_all(bytes)?;
        if let Some(p) = permissions {
            f.set_permissions(p)?;
        }
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, &target)?;
        #[cfg(unix)]
        if let Some(dir) = target.parent() {
            // The rename is durable once the directory is synced; not every filesystem allows it.
            let _ = fs::File::open(dir).and_then(|d| d.sync_all());
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}
