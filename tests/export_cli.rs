//! `pinlog export` end to end: a client configuration of real servers (stdio and Streamable
//! HTTP), narrowed, expanded, and failing whole when one server cannot be read.

use std::path::Path;
use std::process::{Command, Output};

use pinlog_testkit::output::text;
use pinlog_testkit::repo::installed;
use pinlog_testkit::server::{free_port, listening};

fn pinlog(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pinlog"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("pinlog runs")
}

fn write_config(dir: &Path, servers: serde_json::Value) -> String {
    let path = dir.join("mcp.json");
    std::fs::write(
        &path,
        serde_json::json!({ "mcpServers": servers }).to_string(),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn export_reads_every_server_into_one_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let config = write_config(
        tmp.path(),
        serde_json::json!({
            "everything": {
                "command": "node",
                "args": ["${SE_SCRIPT}", "stdio"]
            },
            "time": {"command": installed(".ci/venv/bin/mcp-server-time"), "env": {"TZ": "${TZ_NAME:-UTC}"}},
        }),
    );
    let out = tmp.path().join("manifest.json");
    let script =
        installed(".ci/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let o = pinlog(
        &["export", "-config", &config, "-o", out.to_str().unwrap()],
        &[("SE_SCRIPT", &script)],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let bytes = std::fs::read(&out).unwrap();
    // pinlog's own strict manifest reader takes what export wrote, and writes the same bytes.
    let read = pinlog_core::manifest::Manifest::read(&bytes).unwrap();
    assert_eq!(read.to_bytes(), bytes);
    let m: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(m["schema_version"], 2);
    assert_eq!(m["complete"], true);
    assert!(m.get("scope").is_none());
    let ids: Vec<&str> = m["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["everything", "time"]);
    assert_eq!(m["servers"][1]["reported_name"], "mcp-time");

    // Narrowed to one server: the scope says so.
    let o = pinlog(
        &[
            "export",
            "--config",
            &config,
            "-server",
            "time",
            "-o",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(m["scope"], serde_json::json!(["time"]));
    assert_eq!(m["servers"].as_array().unwrap().len(), 1);
    // A server the configuration does not declare is a usage error.
    let o = pinlog(
        &[
            "export",
            "-config",
            &config,
            "-server",
            "nope",
            "-o",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn export_reads_http_and_legacy_sse_servers() {
    let tmp = tempfile::tempdir().unwrap();
    let script =
        installed(".ci/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let (http_port, sse_port) = (free_port(), free_port());
    let mut http = Command::new("node");
    http.args([script.as_str(), "streamableHttp"])
        .env("PORT", http_port.to_string());
    let mut sse = Command::new("node");
    sse.args([script.as_str(), "sse"])
        .env("PORT", sse_port.to_string());
    let _servers = (listening(http, http_port), listening(sse, sse_port));
    let config = write_config(
        tmp.path(),
        serde_json::json!({
            "new": {"type": "http", "url": format!("http://127.0.0.1:{http_port}/mcp"), "headers": {"X-Test": "1"}},
            "old": {"type": "sse", "url": format!("http://127.0.0.1:{sse_port}/sse")},
        }),
    );
    let out = tmp.path().join("manifest.json");
    let o = pinlog(
        &["export", "-config", &config, "-o", out.to_str().unwrap()],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    for s in m["servers"].as_array().unwrap() {
        assert_eq!(s["reported_name"], "mcp-servers/everything", "{}", s["id"]);
    }
    assert_eq!(m["complete"], true);
}

#[test]
fn one_unreadable_server_fails_the_whole_export_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let config = write_config(
        tmp.path(),
        serde_json::json!({
            "time": {"command": installed(".ci/venv/bin/mcp-server-time")},
            "broken": {"command": installed(".ci/venv/bin/python"), "args": [installed("mcp/tests/fixtures/scripted_server.py"), "escapes"]},
        }),
    );
    let out = tmp.path().join("manifest.json");
    std::fs::write(&out, "previous").unwrap();
    let o = pinlog(
        &["export", "-config", &config, "-o", out.to_str().unwrap()],
        &[],
    );
    assert_eq!(o.status.code(), Some(4));
    let err = text(&o.stderr);
    assert!(
        err.starts_with("error: server \"broken\" could not be read, so nothing was exported: "),
        "{err}"
    );
    assert!(!err.contains('\u{1b}'), "{err:?}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous");

    // A variable with no value and no default is named.
    let config = write_config(
        tmp.path(),
        serde_json::json!({"x": {"command": "${PINLOG_TEST_UNSET_VAR}"}}),
    );
    let o = pinlog(
        &["export", "-config", &config, "-o", out.to_str().unwrap()],
        &[],
    );
    assert_eq!(o.status.code(), Some(4));
    assert!(
        text(&o.stderr).contains("PINLOG_TEST_UNSET_VAR"),
        "{}",
        text(&o.stderr)
    );
    let config = write_config(
        tmp.path(),
        serde_json::json!({"old": {"type": "sse", "url": "http://127.0.0.1:9/sse"}}),
    );
    let o = pinlog(
        &["export", "-config", &config, "-o", out.to_str().unwrap()],
        &[],
    );
    assert_eq!(o.status.code(), Some(4));
    // A server nothing answers for fails the export by name rather than being skipped.
    assert!(
        text(&o.stderr).contains("server \"old\" could not be read"),
        "{}",
        text(&o.stderr)
    );
}

/// A server that answers a listing with a message that is both a request and an answer (the
/// changed tool under the listing's id) is refused as not strict JSON-RPC, not answered as a
/// request while the reading waits.
#[test]
fn a_server_message_that_is_both_request_and_answer_fails_the_export() {
    let tmp = tempfile::tempdir().unwrap();
    let config = write_config(
        tmp.path(),
        serde_json::json!({
            "hybrid": {"command": installed(".ci/venv/bin/python"), "args": [installed("mcp/tests/fixtures/scripted_server.py"), "hybrid"]},
        }),
    );
    let out = tmp.path().join("manifest.json");
    let started = std::time::Instant::now();
    let o = pinlog(
        &["export", "-config", &config, "-o", out.to_str().unwrap()],
        &[],
    );
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.starts_with("error: server \"hybrid\" could not be read")
            && err.contains("\"method\" beside \"result\" or \"error\""),
        "{err}"
    );
    assert!(!err.contains("Changed: first send"), "{err}");
    assert!(!out.exists());
    // Refused when read, not after the reading's deadline.
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}
