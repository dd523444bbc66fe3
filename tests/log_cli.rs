//! `pinlog log …` and `pinlog verify-log` end to end: key handling, appends refused by rule,
//! publishing, exit codes, receipts, and a publisher killed mid-way.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use pinlog_testkit::log::{append_more, store_with, surface, Chain, ORIGIN};

fn pinlog(args: &[&str]) -> Output {
    pinlog_env(args, &[])
}

fn pinlog_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pinlog"));
    c.args(args).env_remove("CI");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("the pinlog binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A store and its key made with `log init`, and the vkey it printed.
fn init(dir: &Path) -> String {
    let o = pinlog(&[
        "log",
        "init",
        "--db",
        p(&dir.join("log.db")),
        "--origin",
        ORIGIN,
        "--key",
        p(&dir.join("key")),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    text(&o.stdout).trim().to_string()
}

#[test]
fn init_creates_a_private_key_once_and_never_in_ci() {
    let tmp = tempfile::tempdir().unwrap();
    let vkey = init(tmp.path());
    assert!(vkey.starts_with(&format!("{ORIGIN}+")), "{vkey}");
    let key = std::fs::read_to_string(tmp.path().join("key")).unwrap();
    assert!(key.starts_with(&format!("PRIVATE+KEY+{ORIGIN}+")));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(tmp.path().join("key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // A second init reads the same key and prints the same vkey.
    assert_eq!(init(tmp.path()), vkey);
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("key")).unwrap(),
        key
    );

    // In CI, no key is minted.
    let ci = tmp.path().join("ci");
    let o = pinlog_env(
        &[
            "log",
            "init",
            "--db",
            p(&ci.join("log.db")),
            "--origin",
            ORIGIN,
            "--key",
            p(&ci.join("key")),
        ],
        &[("CI", "true")],
    );
    assert_eq!(o.status.code(), Some(4));
    assert!(
        text(&o.stderr).contains("never created in CI"),
        "{}",
        text(&o.stderr)
    );
    assert!(!ci.join("key").exists());

    // A key for another log is refused.
    let o = pinlog(&[
        "log",
        "init",
        "--db",
        p(&tmp.path().join("other.db")),
        "--origin",
        "example.org/other",
        "--key",
        p(&tmp.path().join("key")),
    ]);
    assert_eq!(o.status.code(), Some(4));
    assert!(text(&o.stderr).contains("not \"example.org/other\""));
}

#[test]
fn append_publish_prove_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let vkey = init(dir);
    let db = dir.join("log.db");
    let mut chain = Chain::default();
    for i in 0..3u64 {
        let s = surface(i);
        let entry = dir.join(format!("e{i}.json"));
        let blob = dir.join(format!("b{i}.json"));
        std::fs::write(&entry, chain.entry("pkg", &s, i as u32)).unwrap();
        std::fs::write(&blob, s.bytes()).unwrap();
        let o = pinlog(&[
            "log",
            "append",
            "--db",
            p(&db),
            p(&entry),
            "--blob",
            p(&blob),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        assert_eq!(text(&o.stdout), format!("appended entry {i}\n"));
    }
    // The same entry again: its previous pointer is stale now.
    let o = pinlog(&["log", "append", "--db", p(&db), p(&dir.join("e2.json"))]);
    assert_eq!(o.status.code(), Some(4));
    assert!(
        text(&o.stderr).starts_with("error: entry-previous: "),
        "{}",
        text(&o.stderr)
    );
    // An entry past the bundle's limit is named by its rule, not by the read.
    let big = dir.join("big.json");
    std::fs::write(&big, vec![b' '; 70_000]).unwrap();
    let o = pinlog(&["log", "append", "--db", p(&db), p(&big)]);
    assert_eq!(o.status.code(), Some(4));
    assert!(
        text(&o.stderr).starts_with("error: entry-too-large: "),
        "{}",
        text(&o.stderr)
    );
    // A non-canonical entry.
    let spaced = dir.join("spaced.json");
    std::fs::write(&spaced, b"{ \"v\": 1 }").unwrap();
    let o = pinlog(&["log", "append", "--db", p(&db), p(&spaced)]);
    assert_eq!(o.status.code(), Some(4));
    assert!(text(&o.stderr).starts_with("error: entry-not-canonical: "));

    let out = dir.join("out");
    let key = dir.join("key");
    let publish = || {
        pinlog(&[
            "log",
            "publish",
            "--db",
            p(&db),
            "--key",
            p(&key),
            "--out",
            p(&out),
        ])
    };
    let o = publish();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("3 entries"));
    assert!(text(&o.stdout).contains("signed a new checkpoint"));
    let o = publish();
    assert!(
        text(&o.stdout).contains("nothing new to sign; 0 files written"),
        "{}",
        text(&o.stdout)
    );

    let o = pinlog(&["verify-log", p(&out), "--vkey", &vkey]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let line = text(&o.stdout);
    assert!(
        line.starts_with(&format!("log OK: {ORIGIN}, 3 entries, root ")),
        "{line}"
    );
    assert_eq!(line.lines().count(), 1);

    let receipt = dir.join("e1.tlog-proof");
    let o = pinlog(&[
        "log",
        "prove",
        "--dir",
        p(&out),
        "--index",
        "1",
        "-o",
        p(&receipt),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(std::fs::read_to_string(&receipt)
        .unwrap()
        .starts_with("c2sp.org/tlog-proof@v1\nextra "));
    let o = pinlog(&["log", "prove", "--dir", p(&out), "--index", "3"]);
    assert_eq!(o.status.code(), Some(4), "entry 3 is past the end");
    assert!(
        text(&o.stderr).contains("index 3 is not in a tree of size 3"),
        "{}",
        text(&o.stderr)
    );
    let o = pinlog(&["verify-log", "--proof", p(&receipt), "--vkey", &vkey]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).starts_with("proof OK: entry 1 (npm:pkg sha256:"));
    let o = pinlog(&[
        "verify-log",
        "--proof",
        p(&receipt),
        "--vkey",
        &vkey,
        "--state",
        "s",
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "--state means nothing for one receipt"
    );
    let forged = std::fs::read_to_string(&receipt)
        .unwrap()
        .replace("index 1\n", "index 2\n");
    std::fs::write(&receipt, forged).unwrap();
    let o = pinlog(&["verify-log", "--proof", p(&receipt), "--vkey", &vkey]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stdout).starts_with("proof BAD: proof file: inclusion: entry 2: "),
        "{}",
        text(&o.stdout)
    );

    // Exit codes: a tampered tile is proven bad (1); a wrong key proves nothing good (1); a
    // malformed key is a usage error (2); a directory without a checkpoint is unreadable (4).
    let tile = out.join("tile/0/000.p/3");
    let original = std::fs::read(&tile).unwrap();
    let mut bad = original.clone();
    bad[5] ^= 4;
    std::fs::write(&tile, &bad).unwrap();
    let o = pinlog(&["verify-log", p(&out), "--vkey", &vkey]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stdout),
        "log BAD: tile/0/000.p/3: tile-mismatch: hash 0 differs from the one computed from the entries\n"
    );
    std::fs::write(&tile, &original).unwrap();
    let other = pinlog_log::note::SignerKey::from_seed(ORIGIN, [3; 32])
        .verifier()
        .to_string();
    let o = pinlog(&["verify-log", p(&out), "--vkey", &other]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stdout).starts_with("log BAD: checkpoint: checkpoint-signature: "));
    let o = pinlog(&["verify-log", p(&out), "--vkey", "not-a-key"]);
    assert_eq!(o.status.code(), Some(2));
    let o = pinlog(&["verify-log", p(&out)]);
    assert_eq!(o.status.code(), Some(2));
    let o = pinlog(&["verify-log", p(dir), "--vkey", &vkey]);
    assert_eq!(o.status.code(), Some(4));
    assert!(
        text(&o.stderr).starts_with("error: checkpoint: "),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_publisher_killed_at_any_point_leaves_a_verifiable_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let db = dir.join("log.db");
    let key = dir.join("key");
    std::fs::write(
        &key,
        format!("{}\n", pinlog_testkit::log::key().to_private_text()),
    )
    .unwrap();
    let vkey = pinlog_testkit::log::key().verifier().to_string();
    let out = dir.join("out");
    let mut store = store_with(&db, 2_000, 40);
    pinlog_log::publish::publish(&mut store, &pinlog_testkit::log::key(), &out, |_, _| {}).unwrap();
    let mut chain = Chain::from_store(&store);
    append_more(&mut store, &mut chain, 2_000, 40_000, 40);
    drop(store);

    let mut sizes = Vec::new();
    let mut caught_mid_way = false;
    // Under load a publish takes longer to reach its tiles: the later kills still land mid-way.
    for delay_ms in [1u64, 5, 15, 30, 60, 120, 250, 500, 1000] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pinlog"))
            .args([
                "log",
                "publish",
                "--db",
                p(&db),
                "--key",
                p(&key),
                "--out",
                p(&out),
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        child.wait().unwrap();
        let o = pinlog(&["verify-log", p(&out), "--vkey", &vkey]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "killed after {delay_ms} ms: {}{}",
            text(&o.stdout),
            text(&o.stderr)
        );
        let line = text(&o.stdout);
        let size = line.split(", ").nth(1).unwrap().to_string();
        if size == "2000 entries" && out.join("tile/entries/010").exists() {
            caught_mid_way = true;
        }
        sizes.push(size);
    }
    assert!(
        caught_mid_way,
        "no kill landed between the new tiles and the checkpoint: {sizes:?}"
    );
    // Whatever the kills left, a full publish completes and verifies.
    let o = pinlog(&[
        "log",
        "publish",
        "--db",
        p(&db),
        "--key",
        p(&key),
        "--out",
        p(&out),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = pinlog(&["verify-log", p(&out), "--vkey", &vkey]);
    assert!(
        text(&o.stdout).contains(", 40000 entries, "),
        "{sizes:?} {}",
        text(&o.stdout)
    );
    assert!(
        sizes
            .iter()
            .all(|s| s == "2000 entries" || s == "40000 entries"),
        "{sizes:?}"
    );
}
