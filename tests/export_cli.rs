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

/// server-memory's entry point, as `.ci/setup` installs it.
fn memory_script() -> String {
    installed(".ci/npm/node_modules/@modelcontextprotocol/server-memory/dist/index.js")
}

/// `pinlog wrap --config FILE` with this binary as the proxy, its backups in `data`.
fn wrap(config: &str, data: &Path) {
    let o = pinlog(
        &[
            "wrap",
            "--config",
            config,
            "--pinlog",
            env!("CARGO_BIN_EXE_pinlog"),
        ],
        &[("PINLOG_HOME", data.to_str().unwrap())],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
}

/// `pinlog export` of `config` to `out` with `data` as the pinlog home; the manifest read back.
fn export_to(config: &str, out: &Path, data: &Path) -> serde_json::Value {
    let o = pinlog(
        &["export", "--config", config, "-o", out.to_str().unwrap()],
        &[("PINLOG_HOME", data.to_str().unwrap())],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    serde_json::from_slice(&std::fs::read(out).unwrap()).unwrap()
}

/// Every file under `dir` with its bytes, in path order.
fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.push((p, bytes));
            }
        }
    }
    out.sort();
    out
}

fn tool_names(m: &serde_json::Value, server: usize) -> Vec<String> {
    m["servers"][server]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// VS Code's `mcp.json` is JSONC: export reads it with its comments and trailing commas, before
/// `pinlog wrap` edits it and after, through the reader wrap edits it with.
#[test]
fn export_reads_a_vs_code_jsonc_configuration_before_and_after_wrap() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("pinlog-home");
    let config = tmp.path().join("mcp.json");
    std::fs::write(
        &config,
        format!(
            "// VS Code user MCP configuration (JSONC).\n{{\n  \"servers\": {{\n    \
             /* The knowledge graph, run from the checkout. */\n    \"memory\": {{\n      \
             \"type\": \"stdio\",\n      \"command\": \"node\",\n      \
             \"args\": [{},], // a trailing comma, as VS Code allows\n    }},\n  }},\n  \
             \"inputs\": [],\n}}\n",
            serde_json::to_string(&memory_script()).unwrap()
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let plain = export_to(config, &tmp.path().join("plain.json"), &data);
    assert_eq!(plain["servers"][0]["id"], "memory");
    assert!(
        tool_names(&plain, 0).contains(&"read_graph".to_string()),
        "{plain}"
    );

    wrap(config, &data);
    let wrapped_text = std::fs::read_to_string(config).unwrap();
    assert!(
        wrapped_text.contains("\"proxy\"") && wrapped_text.contains("// a trailing comma"),
        "{wrapped_text}"
    );
    let wrapped = export_to(config, &tmp.path().join("wrapped.json"), &data);
    assert_eq!(wrapped["servers"][0]["id"], "memory");
    assert_eq!(wrapped["servers"][0]["tools"], plain["servers"][0]["tools"]);

    // What is not JSON nor JSONC is refused with where it stops.
    std::fs::write(config, "{\"servers\": {\"a\": {\"command\": 'node'}}}").unwrap();
    let o = pinlog(
        &["export", "--config", config, "-o", "/dev/null"],
        &[("PINLOG_HOME", data.to_str().unwrap())],
    );
    assert_eq!(o.status.code(), Some(4));
    assert!(
        text(&o.stderr).contains("line 1, column 31: a value was expected"),
        "{}",
        text(&o.stderr)
    );
}

/// Export of a wrapped configuration runs each server without the proxy: no pin is made in a
/// fresh pinlog home, and a pin store that exists keeps every byte.
#[test]
fn export_of_a_wrapped_configuration_leaves_the_pin_store_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("pinlog-home");
    let config = write_config(
        tmp.path(),
        serde_json::json!({"memory": {"command": "node", "args": [memory_script()]}}),
    );
    wrap(&config, &data);
    assert!(std::fs::read_to_string(&config)
        .unwrap()
        .contains("\"proxy\""));
    let m = export_to(&config, &tmp.path().join("m.json"), &data);
    assert!(tool_names(&m, 0).contains(&"read_graph".to_string()), "{m}");
    assert!(
        !data.join("pins.db").exists(),
        "export made a pin store: {:?}",
        snapshot(&data).iter().map(|(p, _)| p).collect::<Vec<_>>()
    );

    // A store with a pin in it, made by a real session through the proxy.
    let o = Command::new(
        std::env::var("PINLOG_PYTHON").unwrap_or_else(|_| installed(".ci/venv/bin/python")),
    )
    .args([installed("tests/fixtures/sdk_client.py"), "--".into()])
    .args([
        env!("CARGO_BIN_EXE_pinlog"),
        "proxy",
        "--name",
        "memory",
        "node",
    ])
    .arg(memory_script())
    .env("PINLOG_HOME", &data)
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let pins = pinlog(&["pins"], &[("PINLOG_HOME", data.to_str().unwrap())]);
    assert!(
        text(&pins.stdout).contains("memory"),
        "{}",
        text(&pins.stdout)
    );
    let before = snapshot(&data);
    export_to(&config, &tmp.path().join("m.json"), &data);
    assert!(snapshot(&data) == before, "export changed the pinlog home");
}

/// A server run by a registry's runner at an exact version gets that package in the exported
/// manifest; locked, a capture of the same tools from another version is `package-changed`. The
/// runner is a stand-in named `npx` (the test machine has no registry) that runs the installed
/// server-memory whatever version it is asked for: what is under test is what export reads from
/// the configuration's command line.
#[test]
fn export_records_the_package_a_runner_pins_and_the_gate_sees_it_change() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let npx = bin.join("npx");
    std::fs::write(
        &npx,
        format!("#!/bin/sh\nexec node '{}'\n", memory_script()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&npx, std::fs::Permissions::from_mode(0o755)).unwrap();
    let npx = npx.to_str().unwrap();
    let data = dir.join("pinlog-home");
    let export_at = |version: &str, out: &str| {
        let config = write_config(
            dir,
            serde_json::json!({
                "memory": {"command": npx, "args": ["-y", format!("@modelcontextprotocol/server-memory@{version}")]},
                "unpinned": {"command": npx, "args": ["-y", "@modelcontextprotocol/server-memory"]},
            }),
        );
        export_to(&config, &dir.join(out), &data)
    };
    let m = export_at("2026.8.31", "m.json");
    assert_eq!(
        m["servers"][0]["package"],
        serde_json::json!({"digest": null, "name": "@modelcontextprotocol/server-memory", "registry": "npm", "version": "2026.8.31"})
    );
    // No exact version, no package.
    assert_eq!(m["servers"][1]["id"], "unpinned");
    assert!(m["servers"][1].get("package").is_none(), "{m}");

    let gate = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_pinlog"))
            .current_dir(dir)
            .args(args)
            .output()
            .unwrap()
    };
    let o = gate(&["lock", "m.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = gate(&["verify", "m.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));

    export_at("2026.9.1", "later.json");
    let o = gate(&["verify", "later.json"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains(
            "VIOLATION package-changed\n  memory: runs another package than was approved\n    \
             - npm:@modelcontextprotocol/server-memory@2026.8.31"
        ),
        "{out}"
    );
    assert!(
        out.contains("+ npm:@modelcontextprotocol/server-memory@2026.9.1"),
        "{out}"
    );
    assert!(out.contains("tool-changed         PASS"), "{out}");
}
