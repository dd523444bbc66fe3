//! The proxy against the public record: a fixture server probed into a test log, then run through
//! `pinlog proxy --log` unchanged (matches), serving this client something else (differs: warn,
//! hold and block), under a name the log never saw (not in the record), and with a log that does
//! not verify (not used, plain pinning); with witnesses required, with a remembered state whose
//! rules file was forged, and with a log host that never answers.
//!
//! The fixture runs as `python -m drift_server` (with `tests/fixtures` on PYTHONPATH), so its
//! public identity is `pypi:drift-server`. The log's entry for it is made from what `pinlog probe`
//! reads of the same fixture, with the default surface.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use pinlog_log::cosignature::WitnessKey;
use pinlog_log::note::Note;
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
        err.contains("cannot be used, log BAD: tile/0/000.p/2: tile-mismatch"),
        "{err}"
    );
    assert!(err.contains("; pinning as without it"), "{err}");
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

/// A witness that cosigns the test log's checkpoint, and one that does not.
fn witnesses() -> (WitnessKey, WitnessKey) {
    (
        WitnessKey::from_seed("w1.example", [1; 32]),
        WitnessKey::from_seed("w2.example", [2; 32]),
    )
}

#[test]
fn witnesses_the_user_requires_must_have_cosigned() {
    let w = World::new();
    let (signs, absent) = witnesses();
    let path = w.log.join("checkpoint");
    let mut note = Note::parse(&std::fs::read(&path).unwrap()).unwrap();
    let body = note.text.clone();
    note.signatures.push(signs.cosign(&body, 1_800_000_000));
    std::fs::write(&path, note.to_text()).unwrap();
    let with = |witness: &str, mode: &str| {
        let mut p: Vec<String> = w.proxy("block").iter().map(|a| a.to_string()).collect();
        p.extend(["--log-witness".into(), witness.into()]);
        p.extend(["--on-public-unavailable".into(), mode.into()]);
        p
    };

    // Cosigned by the witness required: used.
    let home = w.home("cosigned");
    let args = with(&signs.vkey(), "block");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (a, o) = through(&home, &[], &args, &server("drift_server"), &[]);
    let err = text(&o.stderr);
    assert_eq!(a["ok"], true, "{a}\n{err}");
    assert!(
        err.contains("pypi:drift-server matches the public record"),
        "{err}"
    );

    // Not cosigned by the one required: a fork shown to this proxy alone cannot be used. Under
    // block the session is refused and nothing is pinned.
    let home = w.home("uncosigned-block");
    let args = with(&absent.vkey(), "block");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (a, o) = through(&home, &[], &args, &server("drift_server"), &[]);
    let err = text(&o.stderr);
    assert_eq!(a["ok"], false, "{a}\n{err}");
    assert!(
        err.contains("checkpoint: witness-quorum: 0 of the 1 witnesses"),
        "{err}"
    );
    assert!(
        err.contains("--on-public-unavailable block refuses"),
        "{err}"
    );
    assert!(!err.contains("matches the public record"), "{err}");
    assert!(!pins(&home).contains("drift"), "{}", pins(&home));

    // Under warn it is said, and the proxy pins as without the log.
    let home = w.home("uncosigned-warn");
    let args = with(&absent.vkey(), "warn");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (a, o) = through(&home, &[], &args, &server("drift_server"), &[]);
    let err = text(&o.stderr);
    assert_eq!(a["ok"], true, "{a}\n{err}");
    assert!(err.contains("witness-quorum"), "{err}");
    assert!(err.contains("pinning as without it"), "{err}");
    assert!(err.contains("pinned 1 tool(s)"), "{err}");
}

#[test]
fn the_pinlog_home_setting_can_require_a_witness_policy() {
    let w = World::new();
    let (_, absent) = witnesses();
    let home = w.home("setting-policy");
    std::fs::write(
        home.join("witnesses.policy"),
        format!("log {}\nwitness w2 {}\nquorum w2\n", w.vkey, absent.vkey()),
    )
    .unwrap();
    std::fs::write(
        home.join("public-log"),
        format!(
            "log {}\nwitness-policy witnesses.policy\non-unavailable block\n",
            w.log.display()
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
    assert_eq!(a["ok"], false, "{a}\n{err}");
    assert!(err.contains("witness-quorum"), "{err}");
    assert!(!pins(&home).contains("drift"), "{}", pins(&home));
}

#[test]
fn a_forged_rules_file_cannot_point_a_server_at_another_servers_entry() {
    // The log: the drift server's default surface, and another server whose surface is the
    // drift server's v2 (the one a rug pull would serve).
    let tmp = tempfile::tempdir().unwrap();
    let v2 = probed(&[("DRIFT_TOOLS", "v2")]);
    let log = published(
        tmp.path(),
        &[("pypi:drift-server", &probed(&[])), ("npm:evil", &v2)],
    );
    let w = World {
        vkey: key().verifier().to_string(),
        log,
        tmp,
    };
    let state = w.tmp.path().join("public.state");
    let mut args: Vec<String> = w.proxy("block").iter().map(|a| a.to_string()).collect();
    args.extend(["--log-state".into(), state.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // A first start remembers the log and what its rules carry.
    let (a, o) = through(&w.home("first"), &[], &args, &server("drift_server"), &[]);
    assert_eq!(a["ok"], true, "{a}\n{}", text(&o.stderr));
    let rules_path = w.tmp.path().join("public.state.rules");
    let rules = std::fs::read_to_string(&rules_path).unwrap();
    // The forger points pypi:drift-server at npm:evil's entry and surface.
    let evil = rules.lines().find(|l| l.ends_with(" npm:evil")).unwrap();
    let evil = evil.strip_suffix(" npm:evil").unwrap();
    let forged: String = rules
        .lines()
        .map(|l| match l.strip_suffix(" pypi:drift-server") {
            Some(_) => format!("{evil} pypi:drift-server\n"),
            None => format!("{l}\n"),
        })
        .collect();
    assert_ne!(forged, rules);
    std::fs::write(&rules_path, &forged).unwrap();

    // The drift server now serves v2: what the log holds for it is v1, so the session is
    // blocked, never "matched" at the other server's entry.
    let home = w.home("forged");
    let env = [("DRIFT_TOOLS", "v2")];
    let (a, o) = through(&home, &[], &args, &server("drift_server"), &env);
    let err = text(&o.stderr);
    assert!(!err.contains("matches the public record"), "{err}");
    assert!(
        err.contains("pypi:drift-server DIFFERS FROM THE PUBLIC RECORD: entry 0 of"),
        "{err}"
    );
    assert_eq!(a["ok"], false, "{a}\n{err}");
    assert!(!pins(&home).contains("drift"), "{}", pins(&home));
    // The log was read whole again, and the rules file says what the log says.
    assert_eq!(std::fs::read_to_string(&rules_path).unwrap(), rules);
}

/// A log host that accepts connections and never answers, for as long as the test runs.
fn silent_host() -> (String, TcpListener) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/log", listener.local_addr().unwrap());
    (url, listener)
}

#[test]
fn a_log_host_that_never_answers_holds_nothing_past_the_deadline() {
    let w = World::new();
    let (url, _held) = silent_host();
    let proxy = |mode: &'static str| {
        vec![
            "--name".to_string(),
            "drift".into(),
            "--log".into(),
            url.clone(),
            "--log-vkey".into(),
            w.vkey.clone(),
            "--log-deadline".into(),
            "2s".into(),
            "--on-public-unavailable".into(),
            mode.into(),
        ]
    };
    for (mode, ok) in [("warn", true), ("block", false)] {
        let home = w.home(mode);
        let args = proxy(mode);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let started = Instant::now();
        let (a, o) = through(&home, &[], &args, &server("drift_server"), &[]);
        let took = started.elapsed();
        eprintln!("proxy, a silent log host, {mode}: the whole session took {took:?}");
        let err = text(&o.stderr);
        assert_eq!(a["ok"], ok, "{mode}: {a}\n{err}");
        assert!(
            err.contains("was not read and verified within 2s"),
            "{mode}: {err}"
        );
        // The whole session, server start and Python client included, well within the 126 s a
        // silent host held it before; the deadline itself is 2 s.
        assert!(took < Duration::from_secs(30), "{mode}: took {took:?}");
        assert_eq!(pins(&home).contains("drift"), ok, "{mode}: {}", pins(&home));
    }
}
