//! `pinlog verify-log URL` and `pinlog log mirror URL DIR` against pinlog's own published log,
//! served on loopback by tests/fixtures/log_server.py: a plain static server that can stall, cut an
//! answer short, fail, serve a wrong file, or grow the log mid-run.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use pinlog_log::publish::publish;
use pinlog_log::store::Store;
use pinlog_testkit::differential::python;
use pinlog_testkit::log::{append_more, key, store_with, Chain};
use pinlog_testkit::repo::root;

/// A log store and its published directory.
struct Log {
    tmp: tempfile::TempDir,
    store: Store,
    size: u64,
    servers: u64,
}

impl Log {
    fn new(size: u64) -> Log {
        Log::with_servers(size, 7)
    }

    /// Logs of the same key and origin with other numbers of servers have other histories.
    fn with_servers(size: u64, servers: u64) -> Log {
        let tmp = tempfile::tempdir().unwrap();
        let mut store = store_with(&tmp.path().join("log.db"), size, servers);
        publish(&mut store, &key(), &tmp.path().join("pub"), |_, _| {}).unwrap();
        std::fs::write(tmp.path().join("vkey"), key().verifier().to_string()).unwrap();
        Log {
            tmp,
            store,
            size,
            servers,
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    fn grow(&mut self, to: u64) {
        let mut chain = Chain::from_store(&self.store);
        append_more(&mut self.store, &mut chain, self.size, to, self.servers);
        let out = self.path("pub");
        publish(&mut self.store, &key(), &out, |_, _| {}).unwrap();
        self.size = to;
    }

    fn vkey(&self) -> String {
        self.path("vkey").to_str().unwrap().to_string()
    }
}

/// log_server.py serving `dir`, stopped when dropped.
struct Server {
    child: Child,
    url: String,
    faults: PathBuf,
}

impl Server {
    fn start(dir: &Path, work: &Path) -> Server {
        let port_file = work.join("port");
        let _ = std::fs::remove_file(&port_file);
        let faults = work.join("faults.json");
        std::fs::write(&faults, "{}").unwrap();
        let child = Command::new(python())
            .arg(root().join("tests/fixtures/log_server.py"))
            .arg(dir)
            .arg("--port-file")
            .arg(&port_file)
            .arg("--faults")
            .arg(&faults)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let port = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                break text.trim().to_string();
            }
            assert!(Instant::now() < deadline, "the log server did not start");
            std::thread::sleep(Duration::from_millis(50));
        };
        Server {
            child,
            url: format!("http://127.0.0.1:{port}/"),
            faults,
        }
    }

    fn faults(&self, json: &str) {
        std::fs::write(&self.faults, json).unwrap();
    }

    /// (requests, body bytes, paths asked for) so far.
    fn stats(&self) -> (u64, u64, Vec<String>) {
        let addr = self.url.trim_start_matches("http://").trim_end_matches('/');
        let mut conn = std::net::TcpStream::connect(addr).unwrap();
        write!(
            conn,
            "GET /_fixture/stats HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        conn.read_to_string(&mut answer).unwrap();
        let (_, body) = answer.split_once("\r\n\r\n").unwrap();
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        let paths = v["paths"].as_array().unwrap();
        (
            v["requests"].as_u64().unwrap(),
            v["bytes"].as_u64().unwrap(),
            paths
                .iter()
                .map(|p| p.as_str().unwrap().to_string())
                .collect(),
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn pinlog(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pinlog"))
        .args(args)
        .output()
        .unwrap()
}

fn out(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn verify_url(log: &Log, url: &str, extra: &[&str]) -> Output {
    let vkey = log.vkey();
    let mut args = vec!["verify-log", url, "--vkey-file", &vkey, "--timeout", "1s"];
    args.extend_from_slice(extra);
    pinlog(&args)
}

#[test]
fn a_served_log_verifies_and_a_later_run_reads_only_what_was_added() {
    let mut log = Log::new(3000);
    let server = Server::start(&log.path("pub"), log.tmp.path());
    let state = log.path("state");
    let state_arg = state.to_str().unwrap().to_string();
    let o = verify_url(&log, &server.url, &["--state", &state_arg]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("log OK: "));
    let (_, full, paths) = server.stats();
    let first_paths = paths.len();

    // 1% more entries: the second run proves the old tree from the hash tiles and reads the
    // new entries only, never a bundle that was whole before.
    log.grow(3030);
    let o = verify_url(&log, &server.url, &["--state", &state_arg]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("read the 30 entries added since"),
        "{}",
        out(&o)
    );
    let (_, total, paths) = server.stats();
    let second = total - full;
    let second_paths = &paths[first_paths..];
    let bundles: Vec<&String> = second_paths
        .iter()
        .filter(|p| p.starts_with("tile/entries/"))
        .collect();
    assert_eq!(bundles, ["tile/entries/011.p/214"], "{second_paths:?}");
    let blobs = second_paths
        .iter()
        .filter(|p| p.starts_with("blobs/"))
        .count();
    assert!(blobs <= 30, "{blobs} blobs fetched for 30 new entries");
    // The partial bundle holds 214 entries, 30 of them new; each new entry has a new blob.
    assert!(
        second * 100 < full * 15,
        "the incremental run fetched {second} bytes, the whole log {full}"
    );

    // Nothing new: the checkpoint and the tiles of the resumed tree, no bundle at all.
    let before = server.stats().2.len();
    let o = verify_url(&log, &server.url, &["--state", &state_arg]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let (_, _, paths) = server.stats();
    assert!(
        paths[before..]
            .iter()
            .all(|p| !p.starts_with("tile/entries/")),
        "{:?}",
        &paths[before..]
    );

    // A change to an entry that was read before is not what the state proves: a fork of the
    // old tree still is. Served a copy with another history, the run fails with both
    // checkpoints printed.
    let other = Log::with_servers(3040, 3);
    let other_server = Server::start(&other.path("pub"), other.tmp.path());
    let o = verify_url(&log, &other_server.url, &["--state", &state_arg]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("log BAD: checkpoint: fork: "), "{text}");
    assert!(
        text.contains("the checkpoint verified before:\n  "),
        "{text}"
    );
    assert!(text.contains("the checkpoint served now:\n  "), "{text}");
}

#[test]
fn a_rollback_is_refused_and_both_checkpoints_are_printed() {
    let mut log = Log::new(600);
    let old = log.path("old");
    copy_dir(&log.path("pub"), &old);
    log.grow(700);
    let state = log.path("state");
    let state_arg = state.to_str().unwrap().to_string();
    let server = Server::start(&log.path("pub"), log.tmp.path());
    let o = verify_url(&log, &server.url, &["--state", &state_arg]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    drop(server);
    let stale = Server::start(&old, log.tmp.path());
    let o = verify_url(&log, &stale.url, &["--state", &state_arg]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.starts_with("log BAD: checkpoint: rollback: the log serves size 600 but size 700"),
        "{text}"
    );
    let notes: Vec<&str> = text.lines().filter(|l| l.starts_with("  ")).collect();
    assert!(notes.iter().any(|l| l.trim() == "700"), "{text}");
    assert!(notes.iter().any(|l| l.trim() == "600"), "{text}");
}

#[test]
fn stalls_cut_answers_and_server_errors_are_retried() {
    let log = Log::new(600);
    let server = Server::start(&log.path("pub"), log.tmp.path());
    server.faults(
        r#"{"stall_once": ["tile/entries/001"], "cut_once": ["tile/entries/000", "tile/0/001"],
            "error_once": ["checkpoint", "tile/0/000"]}"#,
    );
    let o = verify_url(&log, &server.url, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let (_, _, paths) = server.stats();
    for p in [
        "checkpoint",
        "tile/entries/000",
        "tile/entries/001",
        "tile/0/000",
    ] {
        assert_eq!(
            paths.iter().filter(|x| *x == p).count(),
            2,
            "{p}: {paths:?}"
        );
    }
}

#[test]
fn a_server_that_never_answers_is_named_and_proves_nothing() {
    let log = Log::new(600);
    let server = Server::start(&log.path("pub"), log.tmp.path());
    server.faults(r#"{"stall": ["tile/entries/002.p/88"]}"#);
    let started = Instant::now();
    let o = verify_url(&log, &server.url, &[]);
    assert_eq!(o.status.code(), Some(4), "{}", out(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("{}tile/entries/002.p/88", server.url)) && err.contains("attempts"),
        "{err}"
    );
    // Four attempts of a second, and the pauses between them.
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn wrong_or_missing_files_are_proof_of_a_bad_log() {
    let log = Log::new(600);
    let server = Server::start(&log.path("pub"), log.tmp.path());
    let garbage = log.path("garbage");
    std::fs::write(&garbage, vec![7u8; 8192]).unwrap();
    server.faults(&format!(
        r#"{{"replace": {{"tile/0/001": "{}"}}}}"#,
        garbage.display()
    ));
    let o = verify_url(&log, &server.url, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with("log BAD: tile/0/001: tile-mismatch: "),
        "{}",
        out(&o)
    );
    let blob = a_blob(&log.path("pub"));
    server.faults(&format!(r#"{{"missing": ["{blob}"]}}"#));
    let o = verify_url(&log, &server.url, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with(&format!(
            "log BAD: {blob}: missing: {blob} is not in the log"
        )),
        "{}",
        out(&o)
    );
}

#[test]
fn a_log_that_grows_mid_run_verifies_at_the_checkpoint_read_first() {
    let mut log = Log::new(3000);
    let old = log.path("old");
    copy_dir(&log.path("pub"), &old);
    log.grow(3100);
    // The grown log dropped the partial tiles that became whole: they are read from the whole
    // ones.
    for rel in ["tile/entries/011.p/184", "tile/0/011.p/184"] {
        std::fs::remove_file(log.path("pub").join(rel)).unwrap();
    }
    let server = Server::start(&old, log.tmp.path());
    server.faults(&format!(
        r#"{{"root_after_checkpoint": "{}"}}"#,
        log.path("pub").display()
    ));
    let o = verify_url(&log, &server.url, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(", 3000 entries, "),
        "{}",
        out(&o)
    );
    let (_, _, paths) = server.stats();
    assert!(paths.contains(&"tile/entries/011".to_string()), "{paths:?}");
}

#[test]
fn a_mirror_always_verifies_and_fetches_only_what_is_new() {
    let mut log = Log::new(1000);
    let server = Server::start(&log.path("pub"), log.tmp.path());
    let copy = log.path("copy");
    let copy_arg = copy.to_str().unwrap().to_string();
    let vkey = log.vkey();
    let mirror = || {
        pinlog(&[
            "log",
            "mirror",
            &server.url,
            &copy_arg,
            "--vkey-file",
            &vkey,
            "-q",
        ])
    };
    let verify_copy = || pinlog(&["verify-log", &copy_arg, "--vkey-file", &vkey, "-q"]);
    let o = mirror();
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("mirror OK: "));
    let o = verify_copy();
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));

    log.grow(1100);
    let before = server.stats().2.len();
    let o = mirror();
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let (_, _, paths) = server.stats();
    let fetched = &paths[before..];
    assert!(
        !fetched
            .iter()
            .any(|p| p == "tile/entries/000" || p == "tile/0/000"),
        "{fetched:?}"
    );
    let o = verify_copy();
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains(", 1100 entries, "));

    // Growth served with a wrong tile: refused, and the copy stays the one that verified.
    log.grow(1300);
    let garbage = log.path("garbage");
    std::fs::write(&garbage, vec![7u8; 8192]).unwrap();
    server.faults(&format!(
        r#"{{"replace": {{"tile/0/004": "{}"}}}}"#,
        garbage.display()
    ));
    let o = mirror();
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with("mirror BAD: tile/0/004: "),
        "{}",
        out(&o)
    );
    assert!(!copy.join(".pinlog-mirror-incoming").exists());
    assert!(!copy.join("tile/0/004").exists());
    let o = verify_copy();
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains(", 1100 entries, "));
    // Served right again, the next run completes the copy.
    server.faults("{}");
    let o = mirror();
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let o = verify_copy();
    assert!(String::from_utf8_lossy(&o.stdout).contains(", 1300 entries, "));
}

fn a_blob(dir: &Path) -> String {
    let first = std::fs::read_dir(dir.join("blobs/sha256"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    format!("blobs/sha256/{}", first.file_name().to_str().unwrap())
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}
