//! A hostile log directory: a FIFO or a link in place of one of its files (or of a directory on
//! the way) is refused by every command that reads one (`verify-log`, `log publish`, `log prove`,
//! `site build`), with exit 4 and the word `not-regular-file`, and within a bound: it never
//! hangs, never reads standard input, never hashes a file outside the directory.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use pinlog_testkit::log::{key, store_with};
use sha2::{Digest as _, Sha256};

/// Longer than any of these commands takes on a log of 300 entries; a hung one is killed.
const BOUND: Duration = Duration::from_secs(30);

/// Runs `pinlog args`, giving it `stdin`, killed (and the test failed) if it outlives [`BOUND`].
fn pinlog(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pinlog"))
        .args(args)
        .env_remove("CI")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the pinlog binary runs");
    // A reader that never reads standard input leaves the pipe full: written from a thread.
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > BOUND {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("pinlog {args:?} still ran after {BOUND:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A store of 300 entries over 4 servers, published to `pub/` with the key in `key`.
struct Published {
    tmp: tempfile::TempDir,
    vkey: String,
}

impl Published {
    fn new() -> Published {
        let tmp = tempfile::tempdir().unwrap();
        let mut store = store_with(&tmp.path().join("log.db"), 300, 4);
        std::fs::write(tmp.path().join("key"), key().to_private_text()).unwrap();
        pinlog_log::publish::publish(&mut store, &key(), &tmp.path().join("pub"), |_, _| {})
            .unwrap();
        Published {
            vkey: key().verifier().to_string(),
            tmp,
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    /// A fresh copy of the published log, under `name`.
    fn copy(&self, name: &str) -> PathBuf {
        let to = self.path(name);
        copy_dir(&self.path("pub"), &to);
        to
    }

    /// The name of one of the log's blobs.
    fn a_blob(&self) -> String {
        let first = std::fs::read_dir(self.path("pub/blobs/sha256"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        format!("blobs/sha256/{}", first.file_name().to_str().unwrap())
    }

    fn verify(&self, dir: &Path, stdin: &[u8]) -> Output {
        pinlog(&["verify-log", p(dir), "--vkey", &self.vkey, "-q"], stdin)
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn fifo(path: &Path) {
    std::fs::remove_file(path).unwrap();
    let o = Command::new("mkfifo").arg(path).output().unwrap();
    assert!(o.status.success(), "mkfifo: {}", text(&o.stderr));
}

fn link(target: &Path, path: &Path) {
    if path.is_dir() {
        std::fs::remove_dir_all(path).unwrap();
    } else {
        std::fs::remove_file(path).unwrap();
    }
    std::os::unix::fs::symlink(target, path).unwrap();
}

/// Exit 4, nothing on standard output, and one `error:` line naming the rule, the file and
/// what it is.
fn refused(o: &Output, rel: &str, found: &str) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}{}", text(&o.stdout));
    assert_eq!(text(&o.stdout), "");
    assert!(err.starts_with("error: "), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("not-regular-file: {rel} is {found}; ")),
        "{err}"
    );
}

#[test]
fn verify_log_refuses_a_fifo_in_place_of_any_file() {
    let log = Published::new();
    assert_eq!(log.verify(&log.path("pub"), b"").status.code(), Some(0));
    let blob = log.a_blob();
    for rel in [
        "checkpoint",
        "tile/entries/000",
        "tile/0/000",
        "tile/1/000.p/1",
        &blob,
    ] {
        let dir = log.copy("fifo");
        fifo(&dir.join(rel));
        refused(&log.verify(&dir, b""), rel, "a FIFO");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn verify_log_follows_no_link_out_of_the_directory() {
    let log = Published::new();
    let good = log.path("pub");

    // A checkpoint linked to standard input, which holds the real checkpoint: not read.
    let dir = log.copy("stdin");
    link(Path::new("/dev/stdin"), &dir.join("checkpoint"));
    let checkpoint = std::fs::read(good.join("checkpoint")).unwrap();
    refused(
        &log.verify(&dir, &checkpoint),
        "checkpoint",
        "a symbolic link",
    );

    // A blob linked to a file outside: its digest is never printed.
    let dir = log.copy("outside");
    let secret = log.path("secret");
    std::fs::write(&secret, "a file outside the log\n").unwrap();
    let blob = log.a_blob();
    link(&secret, &dir.join(&blob));
    let o = log.verify(&dir, b"");
    refused(&o, &blob, "a symbolic link");
    let digest: String = Sha256::digest(std::fs::read(&secret).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(!text(&o.stderr).contains(&digest));

    // Links to the very files they replace, and a directory on the way that is a link to a
    // faithful copy: still refused, the copy would not be the log.
    for rel in ["checkpoint", "tile/entries/000", &blob] {
        let dir = log.copy("same");
        link(&good.join(rel), &dir.join(rel));
        refused(&log.verify(&dir, b""), rel, "a symbolic link");
        std::fs::remove_dir_all(&dir).unwrap();
    }
    let dir = log.copy("tiledir");
    link(&good.join("tile"), &dir.join("tile"));
    refused(&log.verify(&dir, b""), "tile", "a symbolic link");
}

#[test]
fn publish_prove_and_site_build_refuse_them_too() {
    let log = Published::new();
    let (db, key) = (log.path("log.db"), log.path("key"));
    let publish = |dir: &Path| {
        let args = [
            "log",
            "publish",
            "--db",
            p(&db),
            "--key",
            p(&key),
            "--out",
            p(dir),
        ];
        pinlog(&args, b"")
    };
    let prove = |dir: &Path| pinlog(&["log", "prove", "--dir", p(dir), "--index", "7"], b"");
    let site = |dir: &Path| {
        let out = log.path("site");
        let args = [
            "site",
            "build",
            "--db",
            p(&db),
            "--log",
            p(dir),
            "--vkey",
            &log.vkey,
            "--out",
            p(&out),
        ];
        pinlog(&args, b"")
    };
    assert_eq!(publish(&log.path("pub")).status.code(), Some(0));
    assert_eq!(prove(&log.path("pub")).status.code(), Some(0));
    let o = site(&log.path("pub"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));

    let dir = log.copy("fifo");
    fifo(&dir.join("checkpoint"));
    refused(&publish(&dir), "checkpoint", "a FIFO");
    refused(&prove(&dir), "checkpoint", "a FIFO");
    refused(&site(&dir), "checkpoint", "a FIFO");

    let dir = log.copy("tile-fifo");
    fifo(&dir.join("tile/entries/000"));
    refused(&prove(&dir), "tile/entries/000", "a FIFO");

    // A blob linked to its own faithful copy: the site refuses the log copy, it does not skip
    // the link.
    let dir = log.copy("link");
    let blob = log.a_blob();
    link(&log.path("pub").join(&blob), &dir.join(&blob));
    refused(&site(&dir), &blob, "a symbolic link");
    let dir = log.copy("blobs-link");
    link(&log.path("pub/blobs"), &dir.join("blobs"));
    refused(&site(&dir), "blobs", "a symbolic link");
}
