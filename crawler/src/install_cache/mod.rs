//! Installed packages kept for later looks, keyed by what the registry publishes: a later look at
//! the same version with the same registry digest runs the kept tree without installing. The
//! promises and their limits are in docs/OPERATIONS.md, "The install cache".
//!
//! ```text
//! DIR/entries/<entry>/   an installed tree, read-only (the installer's prefix: node_modules, venv)
//! DIR/index/<key>        the record that makes it an entry (record.rs); <key> hashes
//!                        the registry, its URL, the name and the version
//! DIR/locks/k-<key>      held while a key is read, installed or evicted
//! DIR/locks/e-<entry>    shared while a look uses the tree; exclusive while it is installed
//!                        or removed
//! DIR/lock               held while entries are swept or evicted
//! DIR/refused/<key>      an install refused for the package's size (refusal.rs)
//! ```
//!
//! A tree is checked against its record's digest before each use; one that changed on disk is
//! thrown away and installed again. The total size is bounded: the least recently used entries
//! no look holds are removed first. An entry older than the cache's age limit is installed
//! again, so that dependencies published since its install are looked at too. An install refused
//! for the package's size is remembered, for the same digests and caps and as long as an entry.

mod lock;
pub mod record;
pub mod refusal;
#[cfg(test)]
mod tests;
pub mod tree;

use std::fmt;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use pinlog_core::files::{read_bounded, write_atomic};
use pinlog_core::Digest;

use crate::install::published::Published;
use lock::Mode;
pub use record::Record;
pub use refusal::Refusal;

/// The cache at a directory, with its bounds.
#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
    /// The entries' total size past which the least recently used are removed.
    pub max_bytes: u64,
    /// An entry older than this is installed again.
    pub max_age: Duration,
}

/// What a cache entry is for: a package at one version from one registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// `npm` or `pypi`.
    pub registry: &'static str,
    /// The registry's URL: a tree installed from one registry is not one from another.
    pub source: String,
    pub name: String,
    pub version: String,
}

impl Key {
    /// The key's file name: hex of the SHA-256 of its parts, so that no name reaches the path.
    fn id(&self) -> String {
        let joined = format!(
            "{}\0{}\0{}\0{}",
            self.registry, self.source, self.name, self.version
        );
        Digest::of(joined.as_bytes()).hex()[..32].to_string()
    }
}

/// Why a kept tree was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stale {
    /// The registry now gives other digests for the version than the one installed.
    DigestMoved {
        was: String,
        now: Vec<String>,
    },
    /// The tree is not what was sealed.
    TreeChanged(String),
    Expired {
        days: u64,
    },
    /// The record could not be read.
    Unreadable,
}

impl fmt::Display for Stale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stale::DigestMoved { was, now } => write!(
                f,
                "the registry's digest for this version moved from {was} to {}",
                now.join(" ")
            ),
            Stale::TreeChanged(why) => write!(f, "the kept tree changed on disk ({why})"),
            Stale::Expired { days } => write!(f, "the kept tree was installed {days} days ago"),
            Stale::Unreadable => f.write_str("the kept tree's record could not be read"),
        }
    }
}

/// What [`Cache::take`] gives.
#[derive(Debug)]
pub enum Taken {
    /// A kept tree, checked, held for as long as the lease lives.
    Hit(Lease, Record),
    /// Install into the reservation's directory, then commit it; `Some` when a kept tree was
    /// passed over, and why.
    Install(Reservation, Option<Stale>),
}

/// A checked tree in use; no eviction removes it while this lives.
#[derive(Debug)]
pub struct Lease {
    dir: PathBuf,
    _lock: File,
}

impl Lease {
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// A directory for a new entry, and the key held while it is installed. Dropped without a
/// commit, the directory is removed.
#[derive(Debug)]
pub struct Reservation {
    cache: Cache,
    key: Key,
    entry: String,
    dir: PathBuf,
    /// Held, never read: the key is this look's until the reservation goes.
    _key_lock: File,
    entry_lock: Option<File>,
    /// The entry this one replaces, removed once no look holds it.
    replaces: Option<String>,
}

impl Cache {
    /// The cache at `root`, made if missing; what a crashed look left behind is removed.
    pub fn open(root: &Path, max_bytes: u64, max_age: Duration) -> io::Result<Cache> {
        for sub in ["entries", "index", "locks", "refused"] {
            std::fs::create_dir_all(root.join(sub))?;
        }
        // Absolute and without links: installers and servers see the trees at these paths from
        // inside sandboxes, and binds are compared with them.
        let root = root.canonicalize()?;
        let cache = Cache {
            root,
            max_bytes,
            max_age,
        };
        cache.sweep()?;
        Ok(cache)
    }

    /// The kept tree for `key` if the registry still publishes its digest and the tree is as it
    /// was sealed; else a reservation to install into. Waits at most `wait` for another look
    /// installing the same key (then `Err`: install without the cache).
    pub fn take(&self, key: &Key, published: &Published, wait: Duration) -> Result<Taken, String> {
        let id = key.id();
        let key_lock = lock::lock(&self.lock_path('k', &id), Mode::Exclusive, wait)
            .map_err(|e| format!("the install cache's lock: {e}"))?
            .ok_or("another look held this package's install for too long")?;
        let mut stale = None;
        let mut replaces = None;
        match self.read_record(&id) {
            Ok(None) => {}
            Err(()) => stale = Some(Stale::Unreadable),
            Ok(Some(record)) => {
                replaces = Some(record.entry.clone());
                match self.check(key, &record, published) {
                    Ok(lease) => {
                        // Its last use, for eviction.
                        let _ = File::options()
                            .write(true)
                            .open(self.record_path(&id))
                            .and_then(|f| f.set_modified(SystemTime::now()));
                        return Ok(Taken::Hit(lease, record));
                    }
                    Err(why) => stale = Some(why),
                }
            }
        }
        if stale.is_some() {
            // Never used again; the tree goes now if no look holds it, else at a later sweep.
            let _ = std::fs::remove_file(self.record_path(&id));
            if let Some(old) = replaces.take() {
                self.remove_entry_if_free(&old);
            }
        }
        let (entry, entry_lock) = self.new_entry()?;
        Ok(Taken::Install(
            Reservation {
                cache: self.clone(),
                key: key.clone(),
                dir: self.root.join("entries").join(&entry),
                entry,
                _key_lock: key_lock,
                entry_lock: Some(entry_lock),
                replaces,
            },
            stale,
        ))
    }

    /// The refusal kept for `key`, if the registry still gives the digests it was refused with,
    /// under the same `caps`, and it is not older than an entry may be.
    pub fn refused(&self, key: &Key, published: &Published, caps: &str) -> Option<Refusal> {
        let path = self.root.join("refused").join(key.id());
        let bytes = read_bounded(&path, 64 << 10).ok()?;
        let mut digests = published.digests.clone();
        digests.sort();
        let kept = std::str::from_utf8(&bytes)
            .ok()
            .and_then(Refusal::parse)
            .filter(|r| {
                r.registry == key.registry
                    && r.source == key.source
                    && r.name == key.name
                    && r.version == key.version
                    && r.digests == digests
                    && r.caps == caps
                    && r.age(SystemTime::now()) <= self.max_age
            });
        if kept.is_none() {
            let _ = std::fs::remove_file(&path);
        }
        kept
    }

    /// Whether the cache's filesystem has `bytes` free for an unprivileged writer.
    pub fn has_room(&self, bytes: u64) -> bool {
        rustix::fs::statvfs(&self.root)
            .is_ok_and(|s| s.f_bavail.saturating_mul(s.f_frsize) >= bytes)
    }

    /// Remembers that installing `key`, as `published`, under `caps` was refused for the
    /// package's size. Housekeeping: a refusal that cannot be written is installed again later.
    pub fn refuse(&self, key: &Key, published: &Published, caps: &str, reason: &str) {
        let mut digests = published.digests.clone();
        digests.sort();
        let r = Refusal {
            registry: key.registry.to_string(),
            source: key.source.clone(),
            name: key.name.clone(),
            version: key.version.clone(),
            digests,
            caps: caps.to_string(),
            refused: pinlog_core::clock::now(),
            reason: refusal::one_line(reason),
        };
        // Every value but the reason was checked as a key or a registry digest; one with a
        // space or a line break would not read back, so it is not written.
        if Refusal::parse(&r.to_text()).as_ref() == Some(&r) {
            let _ = write_atomic(
                &self.root.join("refused").join(key.id()),
                r.to_text().as_bytes(),
            );
        }
    }

    /// `record`'s tree leased, if it is what `published` names and what was sealed.
    fn check(&self, key: &Key, record: &Record, published: &Published) -> Result<Lease, Stale> {
        if record.registry != key.registry
            || record.source != key.source
            || record.name != key.name
            || record.version != key.version
        {
            return Err(Stale::Unreadable);
        }
        if !published.digests.contains(&record.digest) {
            return Err(Stale::DigestMoved {
                was: record.digest.clone(),
                now: published.digests.clone(),
            });
        }
        let age = record.age(SystemTime::now());
        if age > self.max_age {
            return Err(Stale::Expired {
                days: age.as_secs() / 86_400,
            });
        }
        // Under the key's lock no one installs or evicts this entry: the shared lock is free.
        let lease_lock = lock::lock(
            &self.lock_path('e', &record.entry),
            Mode::Shared,
            Duration::ZERO,
        )
        .map_err(|e| Stale::TreeChanged(e.to_string()))?
        .ok_or_else(|| Stale::TreeChanged("its lock is held".into()))?;
        let dir = self.root.join("entries").join(&record.entry);
        let measured = tree::measure(&dir).map_err(|e| Stale::TreeChanged(e.to_string()))?;
        if measured.digest != record.tree || measured.bytes != record.bytes {
            return Err(Stale::TreeChanged(format!(
                "{} bytes with digest {}, sealed as {} bytes with {}",
                measured.bytes, measured.digest, record.bytes, record.tree
            )));
        }
        Ok(Lease {
            dir,
            _lock: lease_lock,
        })
    }

    /// A new entry's directory, locked for its install.
    fn new_entry(&self) -> Result<(String, File), String> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| format!("no random entry name: {e}"))?;
        let entry: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let entry_lock = lock::lock(
            &self.lock_path('e', &entry),
            Mode::Exclusive,
            Duration::ZERO,
        )
        .map_err(|e| format!("the install cache's lock: {e}"))?
        .ok_or("a new entry's lock is held")?;
        std::fs::create_dir(self.root.join("entries").join(&entry))
            .map_err(|e| format!("the install cache: {e}"))?;
        Ok((entry, entry_lock))
    }

    /// The whole cache's lock, held while entries are swept, evicted or recorded; `None` if
    /// another crawler held it for 30 s.
    fn lock_all(&self) -> io::Result<Option<File>> {
        lock::lock(
            &self.root.join("lock"),
            Mode::Exclusive,
            Duration::from_secs(30),
        )
    }

    fn lock_path(&self, kind: char, id: &str) -> PathBuf {
        self.root.join("locks").join(format!("{kind}-{id}"))
    }

    fn record_path(&self, id: &str) -> PathBuf {
        self.root.join("index").join(id)
    }

    /// The record for key `id`: `Ok(None)` if there is none, `Err` if it cannot be read.
    fn read_record(&self, id: &str) -> Result<Option<Record>, ()> {
        match read_bounded(&self.record_path(id), 1 << 20) {
            Ok(bytes) => std::str::from_utf8(&bytes)
                .ok()
                .and_then(Record::parse)
                .map(Some)
                .ok_or(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(_) => Err(()),
        }
    }

    /// Removes entry `entry`'s tree and lock if no look holds it.
    fn remove_entry_if_free(&self, entry: &str) -> bool {
        let path = self.lock_path('e', entry);
        let Ok(Some(_held)) = lock::lock(&path, Mode::Exclusive, Duration::ZERO) else {
            return false;
        };
        let removed = tree::remove(&self.root.join("entries").join(entry)).is_ok();
        if removed {
            let _ = std::fs::remove_file(&path);
        }
        removed
    }

    /// Every record with its key id and its last use.
    fn records(&self) -> io::Result<Vec<(String, Record, SystemTime)>> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(self.root.join("index"))? {
            let e = e?;
            let Some(id) = e.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if let Ok(Some(record)) = self.read_record(&id) {
                let used = e.metadata()?.modified()?;
                out.push((id, record, used));
            }
        }
        Ok(out)
    }

    /// Removes what no record names and no look holds: trees of installs that died, records that
    /// cannot be read, records of trees that are gone.
    fn sweep(&self) -> io::Result<()> {
        let Some(_all) = self.lock_all()? else {
            return Ok(());
        };
        let mut named = std::collections::HashSet::new();
        for e in std::fs::read_dir(self.root.join("index"))? {
            let e = e?;
            let id = e.file_name().to_string_lossy().into_owned();
            match self.read_record(&id) {
                Ok(Some(r)) if self.root.join("entries").join(&r.entry).is_dir() => {
                    named.insert(r.entry);
                }
                // Unreadable, or its tree is gone: the key is installed again on its next look.
                _ => {
                    if let Ok(Some(_k)) =
                        lock::lock(&self.lock_path('k', &id), Mode::Exclusive, Duration::ZERO)
                    {
                        let _ = std::fs::remove_file(e.path());
                    }
                }
            }
        }
        for e in std::fs::read_dir(self.root.join("entries"))? {
            let name = e?.file_name().to_string_lossy().into_owned();
            // `<entry>` and what an installer leaves beside it (`<entry>.npm-allow-git`).
            let entry = name.split('.').next().unwrap_or_default().to_string();
            if named.contains(&entry) {
                continue;
            }
            if record::is_entry_name(&entry) {
                let Ok(Some(_held)) = lock::lock(
                    &self.lock_path('e', &entry),
                    Mode::Exclusive,
                    Duration::ZERO,
                ) else {
                    continue;
                };
            }
            let _ = tree::remove(&self.root.join("entries").join(&name));
        }
        Ok(())
    }

    /// Removes the least recently used entries no look holds until the total is within the bound.
    fn evict(&self) -> io::Result<()> {
        let Some(_all) = self.lock_all()? else {
            return Ok(());
        };
        let mut records = self.records()?;
        let mut total: u64 = records.iter().map(|(_, r, _)| r.bytes).sum();
        records.sort_by_key(|(_, _, used)| *used);
        for (id, record, _) in records {
            if total <= self.max_bytes {
                break;
            }
            let Ok(Some(_key)) =
                lock::lock(&self.lock_path('k', &id), Mode::Exclusive, Duration::ZERO)
            else {
                continue;
            };
            let Ok(Some(_held)) = lock::lock(
                &self.lock_path('e', &record.entry),
                Mode::Exclusive,
                Duration::ZERO,
            ) else {
                continue;
            };
            // The record first: from then on no look finds the tree.
            std::fs::remove_file(self.record_path(&id))?;
            tree::remove(&self.root.join("entries").join(&record.entry))?;
            let _ = std::fs::remove_file(self.lock_path('e', &record.entry));
            total = total.saturating_sub(record.bytes);
        }
        Ok(())
    }
}

impl Reservation {
    /// Where to install.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Seals the installed tree and records it as the entry for its key, installed from
    /// `digest` (which must be one the registry published) with `packages` the digests of
    /// everything installed. The entry is then held for this look, and the cache evicts down to
    /// its bound.
    pub fn commit(&mut self, digest: &str, packages: &[String]) -> Result<Lease, String> {
        self.record(digest, packages)?;
        let entry_lock = self
            .entry_lock
            .take()
            .expect("an uncommitted reservation holds its entry");
        if let Some(old) = self.replaces.take().filter(|old| *old != self.entry) {
            self.cache.remove_entry_if_free(&old);
        }
        // Eviction is housekeeping: a failed one leaves the cache over its bound until the next.
        let _ = self.cache.evict();
        Ok(Lease {
            dir: self.dir.clone(),
            _lock: entry_lock,
        })
    }

    /// Seals the tree and writes its record; on success the entry's lock is shared.
    fn record(&mut self, digest: &str, packages: &[String]) -> Result<(), String> {
        tree::seal(&self.dir).map_err(|e| format!("sealing {}: {e}", self.dir.display()))?;
        let measured =
            tree::measure(&self.dir).map_err(|e| format!("{}: {e}", self.dir.display()))?;
        let record = Record {
            registry: self.key.registry.to_string(),
            source: self.key.source.clone(),
            name: self.key.name.clone(),
            version: self.key.version.clone(),
            digest: digest.to_string(),
            tree: measured.digest,
            bytes: measured.bytes,
            installed: pinlog_core::clock::now(),
            entry: self.entry.clone(),
            packages: packages.to_vec(),
        };
        if !record.writable() {
            return Err("the install's digests cannot be recorded".into());
        }
        let entry_lock = self
            .entry_lock
            .as_ref()
            .expect("an uncommitted reservation holds its entry");
        // Against a sweep between the record and the shared lock.
        let _all = self
            .cache
            .lock_all()
            .map_err(|e| format!("the install cache's lock: {e}"))?
            .ok_or("another crawler held the install cache's lock for too long")?;
        let path = self.cache.record_path(&self.key.id());
        write_atomic(&path, record.to_text().as_bytes())
            .map_err(|e| format!("recording the install: {e}"))?;
        lock::share(entry_lock).map_err(|e| {
            let _ = std::fs::remove_file(&path);
            format!("the install cache's lock: {e}")
        })
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        // Still holding the entry's lock: the install was never committed.
        if self.entry_lock.is_some() {
            let _ = tree::remove(&self.dir);
            let _ = std::fs::remove_file(self.dir.with_extension("npm-allow-git"));
            let _ = std::fs::remove_file(self.cache.lock_path('e', &self.entry));
        }
    }
}
