//! The proxy against the public record: a fixture server probed into a test log, then run through
//! `pinlog proxy --log` unchanged (matches), serving this client something else (differs: warn,
//! hold and block), under a name the log never saw (not in the record), and with a log that does
//! not verify (not used, plain pinning).
//!
//! The fixture runs as `python -m drift_server` (with `tests/fixtures` on PYTHONPATH), so its
//! public identity is `pypi:drift-server`. The log's entry for it is made from what `pinlog probe`
//! reads of the same fixture, with the default surface.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pinlog_log::surface_blob::SurfaceBlob;
use pinlog_testkit::log::{blob_of_manifest, key, published};
use pinlog_testkit::output::text;
use pinlog_testkit::repo::installed;
use serde_json::{json, Value as J};

fn python() -> String {
    std::env::var("PINLOG_PYTHON").unwrap_or_else(|_| installed(".ci/venv/bin/python"))
}

fn fixtures() -> String {
    installed("tests/fixtures")
}

/// The fixture as a module, so that its command line names a public identity.
fn server(module: &str) -> Vec<String> {
    vec![python(), "-m".into(), module.into()]
}

/// The surface `pinlog probe` reads of the fixture with `env`, as a surface blob.
fn probed(env: &[(&str, &str)]) -> SurfaceBlob {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pinlog"));
    c.args(["probe", "--"]).args(server("drift_server"));
    c.env("PYTHONPATH", fixtures());
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    blob_of_manifest(&o.stdout)
}

/// A published log holding one entry for `pypi:drift-server` (the fixture's default surface)
/// and one for another server; its directory.
fn public_log(tmp: &Path) -> PathBuf {
    let drift = probed(&[]);
    let other = pinlog_testkit::log::surface(3);
    published(tmp, &[("pypi:drift-server", &drift), ("npm:other", &other)])
}

/// The Python SDK client through `pinlog proxy [proxy…] -- server…`, with a fresh pin store.
fn through(
    home: &Path,
    client: &[&str],
    proxy: &[&str],
    server: &[String],
    env: &[(&str, &str)],
) -> (J, Output) {
    let mut c = Command::new(python());
    c.arg(installed("tests/fixtures/sdk_client.py"))
        .args(client)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_pinlog"))
        .arg("proxy")
        .args(proxy)
        .arg("--")
        .args(server);
    c.env("PINLOG_HOME", home).env("PYTHONPATH", fixtures());
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    let line = text(&o.stdout);
    let answer: J = serde_json::from_str(line.trim())
        .unwrap_or_else(|e| panic!("{e}: {line}\n{}", text(&o.stderr)));
    (answer, o)
}

fn pins(home: &Path) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_pinlog"))
        .args(["pins"])
        .env("PINLOG_HOME", home)
        .output()
        .unwrap();
    text(&o.stdout)
}

struct World {
    tmp: tempfile::TempDir,
    log: PathBuf,
    vkey: String,
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let log = public_log(tmp.path());
        World {
            vkey: key().verifier().to_string(),
            log,
            tmp,
        }
    }

    fn home(&self, name: &str) -> PathBuf {
        let home = self.tmp.path().join(name);
        std::fs::create_dir_all(&home).unwrap();
        home
    }

    fn proxy<'a>(&'a self, mode: &'a str) -> Vec<&'a str> {
        vec![
            "--name",
            "drift",
            "--log",
            self.log.to_str().unwrap(),
            "--log-vkey",
            &self.vkey,
            "--on-public-mismatch",
            mode,
        ]
    }
}

#[test]
fn an_unchanged_server_matches_the_public_record_and_is_pinned() {
    let w = World::new();
    let home = w.home("matches");
    let (a, o) = through(&home, &[], &w.proxy("block"), &server("drift_server"), &[]);
    let err = text(&o.stderr);
    assert_eq!(a["ok"], true, "{a}\n{err}");
    assert!(
        err.contains("pypi:drift-server matches the public record: entry 0 of example.com/pinlog-test, unchanged for "),
        "{err}"
    );
    assert!(err.contains("pinned 1 tool(s)"), "{err}");
    assert!(pins(&home).contains("drift"), "{}", pins(&home));
    // The outcome is an event of the local log, which still verifies: the pin, then it.
    let o = Command::new(env!("CARGO_BIN_EXE_pinlog"))
        .arg("audit")
        .env("PINLOG_HOME", &home)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let db = rusqlite::Connection::open(home.join("pins.db")).unwrap();
    let kinds: Vec<String> = db
        .prepare("SELECT json_extract(CAST(record AS TEXT), '$.kind') || ' ' || json_extract(CAST(record AS TEXT), '$.labels') FROM events ORDER BY idx")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(kinds, ["public [\"public-matches\"]", "pin []"]);
}

#[test]
fn a_difference_warns_holds_or_blocks_as_asked() {
    let w = World::new();
    // Warn: said, with the change, and pinned as without the log.
    let home = w.home("warn");
    let env = [("DRIFT_TOOLS", "v2")];
    let (a, o) = through(&home, &[], &w.proxy("warn"), &server("drift_server"), &env);
    let err = text(&o.stderr);
    assert_eq!(a["ok"], true, "{a}\n{err}");
    assert!(
        err.contains(
            "pypi:drift-server DIFFERS FROM THE PUBLIC RECORD: entry 0 of example.com/pinlog-test"
        ),
        "{err}"
    );
    assert!(err.contains("weather"), "the change is shown: {err}");
    assert!(err.contains("pinned 1 tool(s)"), "{err}");

    // Hold: the tool the public log never saw is hidden, the other works; nothing pinned.
    let home = w.home("hold");
    let env = [("DRIFT_EXTRA_TOOL", "1")];
    let (a, o) = through(&home, &[], &w.proxy("hold"), &server("drift_server"), &env);
    let err = text(&o.stderr);
    assert_eq!(a["ok"], true, "{a}\n{err}");
    assert_eq!(a["tools"], json!(["weather"]), "{err}");
    assert!(err.contains("was not pinned"), "{err}");
    assert!(!pins(&home).contains("drift"), "{}", pins(&home));

    // Block: nothing reaches the client, nothing is pinned, exit 1.
    let home = w.home("block");
    let env = [("DRIFT_TOOLS", "v2")];
    let (a, o) = through(&home, &[], &w.proxy("block"), &server("drift_server"), &env);
    let err = text(&o.stderr);
    assert_eq!(a["ok"], false, "{a}\n{err}");
    assert!(
        err.contains("differs from the public record, and nothing was pinned"),
        "{err}"
    );
    assert!(!pins(&home).contains("drift"), "{}", pins(&home));
}

#[test]
fn a_server_the_log_never_saw_is_said_so_and_pinned() {
    let w = World::new();
    let home = w.home("absent");
    // The same fixture under another module name: another public identity.
    let alias = w.tmp.path().join("alias");
    std::fs::create_dir_all(&alias).unwrap();
    std::fs::copy(
        Path::new(&fixtures()).join("drift_server.py"),
        alias.join("other_server.py"),
    )
    .unwrap();
    let mut c = vec![python(), "-m".into(), "other_server".into()];
    c.truncate(3);
    let path = format!("{}:{}", alias.display(), fixtures());
    let (a, o) = through(&home, &[], &w.proxy("block"), &c, &[("PYTHONPATH", &path)]);
    let err = text(&o.stderr);
    assert_eq!(a["ok"], true, "{a}\n{err}");
    assert!(
        err.contains("pypi:other-server is not in the public record of example.com/pinlog-test"),
        "{err}"
    );
    assert!(err.contains("pinned 1 tool(s)"), "{err}");
}

#[test]
fn a_log_that_does_not_verify_is_not_used() {
    let w = World::new();
    let tile = w.log.join("tile/0/000.p/2");
    let mut bytes = std::fs::read(&tile).unwrap();
    bytes[0] ^= 1;
    std::fs::write(&tile, bytes).unwrap();
    let home = w.home("bad");
    let env = [("DRIFT_TOOLS", "v2")];
    let (a, o) = through(&home, &[], &w.proxy("block"), &server("drift_server"), &env);
    let err = text(&o.stderr);
    assert_eq!(a["ok"], true, "{a}\n{err}");
    assert!(
        err.contains("does not verify (tile/0/000.p/2: tile-mismatch"),
        "{err}"
    );
    assert!(
        err.contains("so it is not used; pinning as without it"),
        "{err}"
    );
    assert!(!err.contains("public record"), "{err}");
    assert!(err.contains("pinned 1 tool(s)"), "{err}");
}

#[test]
fn the_pinlog_home_can_name_the_public_log() {
    let w = World::new();
    let home = w.home("setting");
    std::fs::write(
        home.join("public-log"),
        format!(
            "# the public log\nlog {}\nvkey {}\n",
            w.log.display(),
            w.vkey
        ),
    )
    .unwrap();
    let (a, o) = through(
        &home,
        &[],
        &["--name", "drift"],
        &server("drift_server"),
        &[],
    );
    let err = text(&o.stderr);
    assert_eq!(a["ok"], true, "{a}\n{err}");
    assert!(
        err.contains("pypi:drift-server matches the public record: entry 0"),
        "{err}"
    );
    // Kept with a state beside the setting.
    let state = std::fs::read_to_string(home.join("public-log.state")).unwrap();
    assert!(state.starts_with("example.com/pinlog-test\n2\n"), "{state}");

    // A setting that breaks its rules is named, and the proxy pins as without it.
    let home = w.home("bad-setting");
    std::fs::write(
        home.join("public-log"),
        format!("log {}\n", w.log.display()),
    )
    .unwrap();
    let (a, o) = through(
        &home,
        &[],
        &["--name", "drift"],
        &server("drift_server"),
        &[],
    );
    let err = text(&o.stderr);
    assert_eq!(a["ok"], true, "{a}\n{err}");
    assert!(err.contains("public-log line 1: no `vkey` line"), "{err}");
    assert!(err.contains("pinning as without the public log"), "{err}");
    assert!(err.contains("pinned 1 tool(s)"), "{err}");
}
