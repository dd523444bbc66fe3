//! `pinlog probe` end to end: a real server's manifest, and nothing a server sends reaching the
//! terminal raw.

use std::process::{Command, Output};

use pinlog_testkit::output::text;
use pinlog_testkit::repo::installed;
use pinlog_testkit::server::{free_port, listening};

fn pinlog(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pinlog"))
        .args(args)
        .output()
        .expect("pinlog runs")
}

#[test]
fn probe_prints_a_one_server_manifest() {
    let script =
        installed(".ci/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let o = pinlog(&[
        "probe",
        "--id",
        "everything",
        "--",
        "node",
        &script,
        "stdio",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let m: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(m["schema_version"], 2);
    assert_eq!(m["complete"], true);
    assert_eq!(m["protocol_version"], "2025-11-25");
    assert!(m["captured_by"].as_str().unwrap().starts_with("pinlog/"));
    let s = &m["servers"][0];
    assert_eq!(s["id"], "everything");
    assert_eq!(s["reported_name"], "mcp-servers/everything");
    assert_eq!(s["passes"], 2);
    assert!(s["tools"].as_array().unwrap().len() >= 10);
    assert!(text(&o.stderr).starts_with("probed \"mcp-servers/everything\" (2025-11-25): "));

    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("m.json");
    let o = pinlog(&[
        "probe",
        "-o",
        file.to_str().unwrap(),
        "--",
        &installed(".ci/venv/bin/mcp-server-time"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty());
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(m["servers"][0]["reported_name"], "mcp-time");
}

#[test]
fn a_failing_server_is_reported_safely_with_exit_4() {
    let o = pinlog(&[
        "probe",
        "--",
        &installed(".ci/venv/bin/python"),
        &installed("mcp/tests/fixtures/scripted_server.py"),
        "escapes",
    ]);
    assert_eq!(o.status.code(), Some(4));
    let err = text(&o.stderr);
    assert!(
        err.starts_with("error: the server could not be probed: rpc-error: initialize: "),
        "{err}"
    );
    assert!(
        !err.contains('\u{1b}') && !err.contains('\u{202e}'),
        "{err:?}"
    );
    assert!(
        err.contains("<U+001B>[2J") && err.contains("<U+202E>"),
        "{err}"
    );
    assert!(o.stdout.is_empty());

    // Caps are the user's to set.
    let o = pinlog(&[
        "probe",
        "--max-items",
        "3",
        "--",
        &installed(".ci/venv/bin/python"),
        &installed("mcp/tests/fixtures/scripted_server.py"),
        "paginated",
    ]);
    assert_eq!(o.status.code(), Some(4));
    assert!(text(&o.stderr).contains("too-large: tools/list lists more than 3 items"));
    let o = pinlog(&["probe", "--protocol", "2099-01-01", "--", "true"]);
    assert_eq!(o.status.code(), Some(2));
    let o = pinlog(&["probe"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn probe_reads_a_streamable_http_endpoint() {
    let port = free_port();
    let mut cmd = Command::new(installed(".ci/venv/bin/python"));
    cmd.arg(installed("mcp/tests/fixtures/sdk_http_server.py"))
        .arg(port.to_string());
    let server = listening(cmd, port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let o = pinlog(&["probe", "--protocol", "auto", "--header", "X-Test: 1", &url]);
    drop(server);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let m: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(m["servers"][0]["protocol_version"], "2026-07-28");
    assert_eq!(m["servers"][0]["reported_name"], "sdk-http-fixture");
    let o = pinlog(&["probe", "--header", "X", &url]);
    assert_eq!(o.status.code(), Some(2));
}
