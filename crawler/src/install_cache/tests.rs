use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::{Duration, SystemTime};

use super::*;

fn key(name: &str) -> Key {
    Key {
        registry: "npm",
        source: "http://127.0.0.1:1".into(),
        name: name.into(),
        version: "1.0.0".into(),
    }
}

fn published(digest: &str) -> Published {
    Published {
        version: "1.0.0".into(),
        digests: vec![digest.into()],
    }
}

const WAIT: Duration = Duration::from_secs(10);

/// Installs `name` as a tree of `bytes` bytes and commits it from `digest`.
fn install(cache: &Cache, name: &str, digest: &str, bytes: usize) -> Lease {
    match cache.take(&key(name), &published(digest), WAIT).unwrap() {
        Taken::Install(mut r, _) => {
            std::fs::create_dir_all(r.dir().join("node_modules/x")).unwrap();
            std::fs::write(r.dir().join("node_modules/x/index.js"), vec![b'a'; bytes]).unwrap();
            r.commit(digest, &[digest.to_string()]).unwrap()
        }
        Taken::Hit(..) => panic!("{name} was kept before it was installed"),
    }
}

fn kept(cache: &Cache, name: &str, digest: &str) -> Result<Lease, Option<Stale>> {
    match cache.take(&key(name), &published(digest), WAIT).unwrap() {
        Taken::Hit(lease, _) => Ok(lease),
        Taken::Install(_, stale) => Err(stale),
    }
}

fn entries(cache: &Cache) -> usize {
    std::fs::read_dir(cache.root.join("entries"))
        .unwrap()
        .count()
}

#[test]
fn a_committed_tree_is_kept_until_its_digest_moves_or_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::open(dir.path(), u64::MAX, Duration::from_secs(3600)).unwrap();
    assert!(matches!(kept(&cache, "a", "sha512-one"), Err(None)));
    let lease = install(&cache, "a", "sha512-one", 10);
    let tree = lease.dir().to_path_buf();
    drop(lease);
    assert_eq!(kept(&cache, "a", "sha512-one").unwrap().dir(), tree);

    // Another key, or the same package from another registry, is not this entry.
    assert!(matches!(kept(&cache, "b", "sha512-one"), Err(None)));
    let elsewhere = Key {
        source: "http://127.0.0.1:2".into(),
        ..key("a")
    };
    assert!(matches!(
        cache
            .take(&elsewhere, &published("sha512-one"), WAIT)
            .unwrap(),
        Taken::Install(_, None)
    ));

    // The registry gives other bytes for the version.
    match kept(&cache, "a", "sha512-two") {
        Err(Some(Stale::DigestMoved { was, now })) => {
            assert_eq!(was, "sha512-one");
            assert_eq!(now, ["sha512-two"]);
        }
        other => panic!("{other:?}"),
    }
    // The stale entry is gone with its tree.
    assert!(!tree.exists());
    assert!(matches!(kept(&cache, "a", "sha512-one"), Err(None)));

    // A tree changed on disk is thrown away, whatever changed: content, a new file, a mode.
    for change in [
        |t: &Path| std::fs::write(t.join("node_modules/x/index.js"), "b").unwrap(),
        |t: &Path| std::fs::write(t.join("node_modules/x/extra.js"), "").unwrap(),
        |t: &Path| {
            std::fs::set_permissions(
                t.join("node_modules/x/index.js"),
                std::fs::Permissions::from_mode(0o555),
            )
            .unwrap()
        },
    ] {
        let lease = install(&cache, "a", "sha512-one", 10);
        let tree = lease.dir().to_path_buf();
        drop(lease);
        make_writable(&tree);
        change(&tree);
        assert!(matches!(
            kept(&cache, "a", "sha512-one"),
            Err(Some(Stale::TreeChanged(_)))
        ));
        assert!(!tree.exists());
    }
}

fn make_writable(tree: &Path) {
    for d in [
        tree.to_path_buf(),
        tree.join("node_modules"),
        tree.join("node_modules/x"),
    ] {
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(
        tree.join("node_modules/x/index.js"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
}

#[test]
fn an_old_tree_or_an_unreadable_record_is_installed_again() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::open(dir.path(), u64::MAX, Duration::from_secs(3600)).unwrap();
    drop(install(&cache, "a", "sha512-one", 10));
    let record = cache.record_path(&key("a").id());
    let text = std::fs::read_to_string(&record).unwrap();
    let installed = text
        .lines()
        .find_map(|l| l.strip_prefix("installed "))
        .unwrap()
        .to_string();
    let old = pinlog_core::clock::rfc3339(SystemTime::now() - Duration::from_secs(3 * 86_400));
    std::fs::write(&record, text.replace(&installed, &old)).unwrap();
    assert!(matches!(
        kept(&cache, "a", "sha512-one"),
        Err(Some(Stale::Expired { days: 3 }))
    ));

    drop(install(&cache, "a", "sha512-one", 10));
    let text = std::fs::read_to_string(&record).unwrap();
    // A record that would send the cache out of its directory is not read.
    let entry = text
        .lines()
        .find_map(|l| l.strip_prefix("entry "))
        .unwrap()
        .to_string();
    std::fs::write(&record, text.replace(&entry, "../../../../etc")).unwrap();
    assert!(matches!(
        kept(&cache, "a", "sha512-one"),
        Err(Some(Stale::Unreadable))
    ));
    assert!(!record.exists());
}

#[test]
fn the_least_recently_used_trees_no_look_holds_are_evicted() {
    let dir = tempfile::tempdir().unwrap();
    // Room for two trees of 1000 bytes, not three.
    let cache = Cache::open(dir.path(), 2500, Duration::from_secs(3600)).unwrap();
    drop(install(&cache, "a", "sha512-a", 1000));
    std::thread::sleep(Duration::from_millis(20));
    drop(install(&cache, "b", "sha512-b", 1000));
    std::thread::sleep(Duration::from_millis(20));
    // a is used again, so b is now the least recently used.
    drop(kept(&cache, "a", "sha512-a").unwrap());
    std::thread::sleep(Duration::from_millis(20));
    drop(install(&cache, "c", "sha512-c", 1000));
    assert!(kept(&cache, "a", "sha512-a").is_ok());
    assert!(matches!(kept(&cache, "b", "sha512-b"), Err(None)));
    assert!(kept(&cache, "c", "sha512-c").is_ok());

    // A tree a look holds is never removed, even past the bound.
    let held = kept(&cache, "a", "sha512-a").unwrap();
    let tight = Cache {
        max_bytes: 0,
        ..cache.clone()
    };
    drop(install(&tight, "d", "sha512-d", 1000));
    assert!(held.dir().join("node_modules/x/index.js").exists());
    assert!(matches!(kept(&cache, "c", "sha512-c"), Err(None)));
    drop(held);
}

#[test]
fn what_a_dead_install_left_is_swept_and_a_living_one_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::open(dir.path(), u64::MAX, Duration::from_secs(3600)).unwrap();
    let Taken::Install(living, _) = cache.take(&key("a"), &published("sha512-a"), WAIT).unwrap()
    else {
        panic!("nothing is kept yet");
    };
    std::fs::write(living.dir().join("half"), "x").unwrap();
    // A crawler killed mid-install: its tree and npm's answer file, and no lock held any more.
    let dead = dir.path().join("entries/0123456789abcdef0123456789abcdef");
    std::fs::create_dir_all(dead.join("node_modules")).unwrap();
    std::fs::write(dead.with_extension("npm-allow-git"), "all").unwrap();
    std::fs::write(dir.path().join("index/not-a-record"), "junk").unwrap();
    let reopened = Cache::open(dir.path(), u64::MAX, Duration::from_secs(3600)).unwrap();
    assert!(!dead.exists() && !dead.with_extension("npm-allow-git").exists());
    assert!(!dir.path().join("index/not-a-record").exists());
    assert!(living.dir().join("half").exists());
    assert_eq!(entries(&reopened), 1);
    // Dropped without a commit, the install leaves nothing.
    drop(living);
    assert_eq!(entries(&reopened), 0);
}

#[test]
fn a_cache_named_by_a_relative_path_gives_absolute_trees() {
    let dir = tempfile::tempdir().unwrap();
    let here = std::env::current_dir().unwrap();
    let relative = pathdiff(dir.path(), &here);
    let cache = Cache::open(&relative, u64::MAX, Duration::from_secs(3600)).unwrap();
    let lease = install(&cache, "a", "sha512-a", 10);
    assert!(lease.dir().is_absolute(), "{}", lease.dir().display());
    assert!(lease.dir().starts_with(dir.path()));
}

/// `to` as a path relative to `from`.
fn pathdiff(to: &Path, from: &Path) -> PathBuf {
    let common = to.ancestors().find(|a| from.starts_with(a)).unwrap();
    let up = from.strip_prefix(common).unwrap().components().count();
    let mut rel: PathBuf = std::iter::repeat_n("..", up).collect();
    rel.push(to.strip_prefix(common).unwrap());
    rel
}

#[test]
fn concurrent_looks_at_one_package_install_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::open(dir.path(), u64::MAX, Duration::from_secs(3600)).unwrap();
    let installs = AtomicUsize::new(0);
    let start = Barrier::new(8);
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                start.wait();
                let lease = match cache.take(&key("a"), &published("sha512-a"), WAIT).unwrap() {
                    Taken::Hit(lease, _) => lease,
                    Taken::Install(mut r, _) => {
                        installs.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(100));
                        std::fs::write(r.dir().join("index.js"), "x").unwrap();
                        r.commit("sha512-a", &[]).unwrap()
                    }
                };
                assert_eq!(
                    std::fs::read_to_string(lease.dir().join("index.js")).unwrap(),
                    "x"
                );
            });
        }
    });
    assert_eq!(installs.load(Ordering::SeqCst), 1);
    assert_eq!(entries(&cache), 1);
}
