//! The small `pinlog-verify` binary: the same verify-log, its lines and exit codes.

use std::process::{Command, Output};

use pinlog_log::publish::publish;
use pinlog_testkit::log::{key, store_with, ORIGIN};

fn verify(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pinlog-verify"))
        .args(args)
        .output()
        .expect("pinlog-verify runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

#[test]
fn verifies_states_and_fails_with_the_contracted_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = store_with(&tmp.path().join("log.db"), 300, 4);
    let out = tmp.path().join("out");
    publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    let dir = out.to_str().unwrap();
    let vkey_file = tmp.path().join("vkey");
    std::fs::write(
        &vkey_file,
        format!("# the log's key\n{}\n", key().verifier()),
    )
    .unwrap();
    let state = tmp.path().join("state");
    let args = [
        "verify-log",
        dir,
        "--vkey-file",
        vkey_file.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ];
    let o = verify(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let root = store.last_checkpoint().unwrap().unwrap().root;
    assert_eq!(
        text(&o.stdout),
        format!("log OK: {ORIGIN}, 300 entries, root {root}\n")
    );
    assert!(std::fs::read_to_string(&state).unwrap().starts_with(ORIGIN));
    // The state file is read and kept on the next run.
    assert_eq!(verify(&args).status.code(), Some(0));

    // A damaged state file is unreadable input, not a verdict.
    std::fs::write(&state, "garbage").unwrap();
    let o = verify(&args);
    assert_eq!(o.status.code(), Some(4));
    assert!(
        text(&o.stderr).starts_with("error: state file: "),
        "{}",
        text(&o.stderr)
    );

    // A witness key where the log key belongs, and the other way round, are usage errors.
    let witness = pinlog_log::cosignature::WitnessKey::from_seed("w.example", [4; 32]).vkey();
    assert_eq!(
        verify(&["verify-log", dir, "--vkey", &witness])
            .status
            .code(),
        Some(2)
    );
    let log_key = key().verifier().to_string();
    let o = verify(&["verify-log", dir, "--vkey", &log_key, "--witness", &log_key]);
    assert_eq!(o.status.code(), Some(2));
    let o = verify(&[
        "verify-log",
        dir,
        "--vkey",
        &log_key,
        "--witness",
        &witness,
        "--quorum",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(2));
    // One witness given and none cosigned: the default quorum is every witness given.
    let o = verify(&["verify-log", dir, "--vkey", &log_key, "--witness", &witness]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stdout).starts_with("log BAD: checkpoint: witness-quorum: 0 of the 1"));

    let o = verify(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).contains("verify-log"));
}

/// The auditors' binary carries the gate too: approve, then check, with one-dash flags.
#[test]
fn the_small_binary_locks_and_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let manifest = |description: &str| {
        format!(
            r#"{{"schema_version":2,"protocol_version":"2025-11-25","complete":true,"captured_at":"2026-11-30T12:00:00Z","captured_by":"t","servers":[{{"id":"s","reported_name":"s","protocol_version":"2025-11-25","passes":2,"tools":[{{"name":"t","description":"{description}"}}]}}]}}"#
        )
    };
    std::fs::write(dir.join("a.json"), manifest("One.")).unwrap();
    std::fs::write(dir.join("b.json"), manifest("Two.")).unwrap();
    let lock = dir.join("mcp.lock.json");
    let lock = lock.to_str().unwrap();
    let at = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let o = verify(&["lock", "-output", lock, &at("a.json")]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = verify(&["verify", "-lock", lock, &at("a.json")]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let o = verify(&["verify", "-lock", lock, &at("b.json")]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("VIOLATION tool-changed\n  s: tool t changed"));
}
