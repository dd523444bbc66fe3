//! `pinlog proxy` end to end, with real clients (the official Python SDK client, a raw client that
//! writes its whole opening in one burst) and real servers (server-everything, server-memory) or
//! the SDK-built drift fixture: first use pins, drift blocks with the queued call never reaching the
//! server, hold hides exactly the changed tool and releases it when it changes back, a change
//! announced mid-session blocks, a listing naming a tool twice never reaches the client, the
//! server's error text is not echoed, sixteen proxies pin at once, a corrupt store fails closed,
//! a server message that is both a request and an answer never reaches the client, nothing is
//! listed or pinned before the handshake, and a listing is read as the client library reads it.

use std::path::Path;
use std::process::{Command, Output};

use pinlog_testkit::output::text;
use pinlog_testkit::repo::installed;
use serde_json::{json, Value as J};

fn pinlog_bin() -> &'static str {
    env!("CARGO_BIN_EXE_pinlog")
}

fn python() -> String {
    std::env::var("PINLOG_PYTHON").unwrap_or_else(|_| installed(".ci/venv/bin/python"))
}

/// Runs a client script with `-- pinlog proxy [proxy args] -- server…`; its one JSON line.
fn through(
    home: &Path,
    client: &[&str],
    proxy: &[&str],
    server: &[String],
    env: &[(&str, &str)],
) -> (J, Output) {
    let mut c = Command::new(python());
    c.args(client)
        .arg("--")
        .arg(pinlog_bin())
        .arg("proxy")
        .args(proxy)
        .arg("--")
        .args(server);
    c.env("PINLOG_HOME", home);
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().expect("the client runs");
    let line = text(&o.stdout);
    let answer: J = serde_json::from_str(line.trim())
        .unwrap_or_else(|e| panic!("{e}: {line}\n{}", text(&o.stderr)));
    (answer, o)
}

fn sdk(args: &[&str]) -> Vec<String> {
    let mut v = vec![installed("tests/fixtures/sdk_client.py")];
    v.extend(args.iter().map(|s| s.to_string()));
    v
}

fn drift_server() -> Vec<String> {
    vec![python(), installed("tests/fixtures/drift_server.py")]
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn pinlog(home: &Path, args: &[&str]) -> Output {
    Command::new(pinlog_bin())
        .args(args)
        .env("PINLOG_HOME", home)
        .output()
        .unwrap()
}

#[test]
fn real_clients_and_servers_pin_on_first_use_and_work_through_the_proxy() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let everything = vec![
        "node".to_string(),
        installed(".ci/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
        "stdio".to_string(),
    ];
    let memory = vec![
        "node".to_string(),
        installed(".ci/npm/node_modules/@modelcontextprotocol/server-memory/dist/index.js"),
    ];
    let client = sdk(&[
        "--call",
        "echo",
        "--args",
        r#"{"message":"through"}"#,
        "--list-prompts",
    ]);
    for run in 0..2 {
        let (a, o) = through(
            home,
            &strs(&client),
            &["--name", "everything"],
            &everything,
            &[],
        );
        assert_eq!(a["ok"], true, "{a}\n{}", text(&o.stderr));
        assert_eq!(a["call"]["content"][0]["text"], "Echo: through");
        assert!(a["tools"].as_array().unwrap().len() >= 10);
        let err = text(&o.stderr);
        assert_eq!(err.contains("pinned"), run == 0, "{err}");
    }
    let client = sdk(&["--call", "read_graph"]);
    let (a, o) = through(
        home,
        &strs(&client),
        &["--name", "memory"],
        &memory,
        &[(
            "MEMORY_FILE_PATH",
            &home.join("memory.json").to_string_lossy(),
        )],
    );
    assert_eq!(a["ok"], true, "{a}\n{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("pinned"));
    // The store lists both, and its log verifies.
    let o = pinlog(home, &["pins"]);
    let out = text(&o.stdout);
    assert!(
        out.contains("everything") && out.contains("memory"),
        "{out}"
    );
    let o = pinlog(home, &["audit"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
}

/// The server's command without `--`, as a launcher that swallows it (the MCP Inspector's command
/// line) passes it: the first argument that is not an option starts it, after the proxy's options
/// have taken their values, and everything from there on is the server's (node's own
/// `--no-warnings` here). It is the same server as with `--`: the pin the first spelling made
/// holds for the second. A mistyped option is refused, never run as the command.
#[test]
fn the_servers_command_may_follow_the_proxys_options_without_dash_dash() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let everything =
        installed(".ci/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let server = ["node", "--no-warnings", everything.as_str(), "stdio"];
    let client = sdk(&["--call", "echo", "--args", r#"{"message":"no dash dash"}"#]);
    let o = Command::new(python())
        .args(&client)
        .arg("--")
        .arg(pinlog_bin())
        .args(["proxy", "--on-drift", "hold", "--name", "everything"])
        .args(server)
        .env("PINLOG_HOME", home)
        .output()
        .unwrap();
    let a: J =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o.stderr)));
    assert_eq!(a["ok"], true, "{a}\n{}", text(&o.stderr));
    assert_eq!(a["call"]["content"][0]["text"], "Echo: no dash dash");
    assert!(text(&o.stderr).contains("pinned"), "{}", text(&o.stderr));

    let server: Vec<String> = server.map(String::from).to_vec();
    let (a, o) = through(
        home,
        &strs(&client),
        &["--name", "everything"],
        &server,
        &[],
    );
    assert_eq!(a["ok"], true, "{a}\n{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("pinned"), "{}", text(&o.stderr));
    let o = pinlog(home, &["pins"]);
    assert_eq!(
        text(&o.stdout).matches("everything").count(),
        1,
        "{}",
        text(&o.stdout)
    );

    let marker = home.join("started");
    let o = pinlog(
        home,
        &["proxy", "--nmae", "x", "touch", &marker.to_string_lossy()],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("'--nmae'"), "{}", text(&o.stderr));
    assert!(!marker.exists(), "nothing ran");
}

#[test]
fn the_typescript_sdk_client_pins_and_is_blocked_on_drift() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let ts = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = Command::new("node");
        c.arg(installed("tests/fixtures/sdk_client.mjs")).args(args);
        c.arg("--")
            .arg(pinlog_bin())
            .args(["proxy", "--name", "drift", "--"])
            .args(drift_server());
        c.env("PINLOG_HOME", home);
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        let a: J = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", text(&o.stderr)));
        (a, o)
    };
    let (a, o) = ts(&["--call", "weather", "--args", r#"{"city":"Oslo"}"#], &[]);
    assert_eq!(a["ok"], true, "{a}\n{}", text(&o.stderr));
    assert_eq!(a["call"]["content"][0]["text"], "sunny in Oslo");
    assert!(
        text(&o.stderr).contains("pinned 1 tool(s)"),
        "{}",
        text(&o.stderr)
    );
    let (a, _) = ts(
        &["--call", "weather", "--args", r#"{"city":"Oslo"}"#],
        &[("DRIFT_TOOLS", "v2")],
    );
    assert_eq!(a["code"], -32090, "{a}");
}

#[test]
fn the_typescript_sdk_client_works_through_the_proxy_with_the_reference_servers() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let servers = [
        (
            "everything",
            vec![
                "node".to_string(),
                installed(
                    ".ci/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
                ),
                "stdio".to_string(),
            ],
            vec!["--call", "echo", "--args", r#"{"message":"ts"}"#],
        ),
        (
            "memory",
            vec![
                "node".to_string(),
                installed(".ci/npm/node_modules/@modelcontextprotocol/server-memory/dist/index.js"),
            ],
            vec!["--call", "read_graph"],
        ),
    ];
    for (name, server, call) in servers {
        for run in 0..2 {
            let o = Command::new("node")
                .arg(installed("tests/fixtures/sdk_client.mjs"))
                .args(&call)
                .arg("--")
                .arg(pinlog_bin())
                .args(["proxy", "--name", name, "--"])
                .args(&server)
                .env("PINLOG_HOME", home)
                .env("MEMORY_FILE_PATH", home.join("memory.json"))
                .output()
                .unwrap();
            let a: J = serde_json::from_slice(&o.stdout)
                .unwrap_or_else(|e| panic!("{e}: {}", text(&o.stderr)));
            assert_eq!(a["ok"], true, "{name} run {run}: {a}\n{}", text(&o.stderr));
            assert!(!a["call"].is_null(), "{name}: {a}");
            assert_eq!(
                text(&o.stderr).contains("pinned"),
                run == 0,
                "{name}: {}",
                text(&o.stderr)
            );
        }
    }
}

/// Pins the drift fixture as it serves by default, under `home`.
fn pin_fixture(home: &Path, env: &[(&str, &str)]) {
    let (a, o) = through(
        home,
        &strs(&sdk(&["--list-prompts"])),
        &["--name", "drift"],
        &drift_server(),
        env,
    );
    assert_eq!(a["ok"], true, "{a}\n{}", text(&o.stderr));
}

fn burst(home: &Path, proxy: &[&str], env: &[(&str, &str)]) -> (J, Output) {
    let client = [installed("tests/fixtures/burst_client.py")];
    through(home, &strs(&client), proxy, &drift_server(), env)
}

#[test]
fn drift_blocks_and_the_queued_call_never_reaches_the_server() {
    for (what, variable, label) in [
        ("tools", "DRIFT_TOOLS", "tool-changed"),
        ("prompts", "DRIFT_PROMPTS", "prompt-changed"),
        ("instructions", "DRIFT_INSTRUCTIONS", "instructions-changed"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        let marker = home.join("called");
        let marker_s = marker.to_string_lossy().to_string();
        pin_fixture(home, &[("DRIFT_EXTRA_TOOL", "1")]);
        // initialize, initialized and a tools/call in one write, before any answer.
        let (a, o) = burst(
            home,
            &["--name", "drift"],
            &[
                ("DRIFT_EXTRA_TOOL", "1"),
                (variable, "v2"),
                ("DRIFT_MARKER", &marker_s),
            ],
        );
        assert!(
            !marker.exists(),
            "{what}: the queued call reached the server"
        );
        for answer in [&a["initialize"], &a["call"]] {
            assert_eq!(answer["error"]["code"], -32090, "{what}: {a}");
            let m = answer["error"]["message"].as_str().unwrap();
            assert!(
                m.contains("\"drift\"") && m.contains("pinlog review") && m.contains(label),
                "{m}"
            );
            assert!(
                !m.contains("notes"),
                "{what}: the changed text is never in the message: {m}"
            );
        }
        assert_eq!(o.status.code(), Some(0));
        let err = text(&o.stderr);
        assert!(err.contains("CHANGED SINCE IT WAS APPROVED"), "{err}");
        // The proxy itself exits 1 (the burst client reports it).
        assert_eq!(a["exit_code"], 1, "{what}: {a}");
        // The drift is pending review, field by field.
        let o = pinlog(home, &["review", "drift"]);
        assert!(
            text(&o.stdout).contains(label),
            "{}{}",
            text(&o.stdout),
            text(&o.stderr)
        );
    }
}

#[test]
fn hold_hides_exactly_the_changed_tool_and_releases_it_when_it_changes_back() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let marker = home.join("called");
    let marker_s = marker.to_string_lossy().to_string();
    pin_fixture(home, &[("DRIFT_EXTRA_TOOL", "1")]);
    let env = [
        ("DRIFT_EXTRA_TOOL", "1"),
        ("DRIFT_TOOLS", "v2"),
        ("DRIFT_MARKER", marker_s.as_str()),
    ];
    let hold = ["--name", "drift", "--on-drift", "hold"];
    let (a, o) = through(home, &strs(&sdk(&[])), &hold, &drift_server(), &env);
    assert_eq!(a["ok"], true, "{a}\n{}", text(&o.stderr));
    assert_eq!(a["tools"], json!(["forecast"]));
    let (a, _) = through(
        home,
        &strs(&sdk(&["--call", "weather", "--args", r#"{"city":"Oslo"}"#])),
        &hold,
        &drift_server(),
        &env,
    );
    assert_eq!(a["code"], -32091, "{a}");
    assert!(!marker.exists(), "the held tool was called");
    // The unchanged tool still works.
    let (a, _) = through(
        home,
        &strs(&sdk(&[
            "--call",
            "forecast",
            "--args",
            r#"{"city":"Oslo","days":2}"#,
        ])),
        &hold,
        &drift_server(),
        &env,
    );
    assert_eq!(a["ok"], true, "{a}");
    // Changed back: released.
    let back = [
        ("DRIFT_EXTRA_TOOL", "1"),
        ("DRIFT_MARKER", marker_s.as_str()),
    ];
    let (a, o) = through(
        home,
        &strs(&sdk(&["--call", "weather", "--args", r#"{"city":"Oslo"}"#])),
        &hold,
        &drift_server(),
        &back,
    );
    assert_eq!(a["ok"], true, "{a}\n{}", text(&o.stderr));
    assert_eq!(a["tools"], json!(["weather", "forecast"]));
    assert!(marker.exists());
}

#[test]
fn a_change_announced_mid_session_blocks_the_rest_of_it() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let marker = home.join("called");
    let marker_s = marker.to_string_lossy().to_string();
    let env = [
        ("DRIFT_MIDSESSION", "1"),
        ("DRIFT_MARKER", marker_s.as_str()),
    ];
    pin_fixture(home, &[]);
    // The session starts as approved; the server changes and says so; the client's next call
    // finds the session blocked, and the notification never reached it.
    let client = sdk(&[
        "--mode",
        "legacy",
        "--pause",
        "1",
        "--call",
        "weather",
        "--args",
        r#"{"city":"Oslo"}"#,
    ]);
    let (a, o) = through(
        home,
        &strs(&client),
        &["--name", "drift"],
        &drift_server(),
        &env,
    );
    assert_eq!(a["ok"], false, "{a}");
    assert_eq!(a["code"], -32090, "{a}\n{}", text(&o.stderr));
    assert!(!marker.exists(), "the call reached the changed server");
}

#[test]
fn a_listing_naming_a_tool_twice_and_a_servers_error_text_never_reach_the_client() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let (a, o) = through(
        home,
        &strs(&sdk(&["--mode", "legacy"])),
        &["--name", "dup"],
        &drift_server(),
        &[("DRIFT_DUPLICATE", "2")],
    );
    assert_eq!(a["ok"], false, "{a}");
    assert_eq!(a["code"], -32092);
    assert!(!a.to_string().contains("notes"), "{a}");
    assert!(text(&o.stderr).contains("twice"));
    // A server that fails initialize with terminal escapes in its message and on stderr.
    let scripted = vec![
        python(),
        installed("mcp/tests/fixtures/scripted_server.py"),
        "escapes".to_string(),
    ];
    let (a, o) = through(
        home,
        &strs(&sdk(&["--mode", "legacy"])),
        &["--name", "esc"],
        &scripted,
        &[],
    );
    assert_eq!(a["code"], -32092, "{a}");
    assert!(
        !a.to_string().contains("\\u001b") && !a.to_string().contains('\u{1b}'),
        "{a}"
    );
    let err = text(&o.stderr);
    assert!(!err.contains('\u{1b}'), "{err:?}");
}

#[test]
fn sixteen_proxies_pinning_at_once_lose_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().to_path_buf();
    let threads: Vec<_> = (0..16)
        .map(|i| {
            let home = home.clone();
            std::thread::spawn(move || {
                // Each its own server (another argv, another key).
                let mut server = drift_server();
                server.push(format!("--instance={i}"));
                let (a, o) = through(
                    &home,
                    &strs(&sdk(&["--mode", "legacy"])),
                    &["--name", &format!("s{i}")],
                    &server,
                    &[],
                );
                assert_eq!(a["ok"], true, "{a}\n{}", text(&o.stderr));
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let o = pinlog(&home, &["pins"]);
    let out = text(&o.stdout);
    assert_eq!(
        (0..16).filter(|i| out.contains(&format!("s{i}"))).count(),
        16,
        "{out}"
    );
    let o = pinlog(&home, &["audit"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
}

#[test]
fn a_corrupt_store_fails_closed() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    pin_fixture(home, &[]);
    let db = std::fs::read_dir(home)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "db"))
        .expect("the store's database");
    std::fs::write(
        &db,
        b"this is not a database, and must not be trusted again",
    )
    .unwrap();
    let marker = home.join("started");
    let (a, o) = burst(
        home,
        &["--name", "drift"],
        &[("DRIFT_MARKER", &marker.to_string_lossy())],
    );
    assert!(a["initialize"].is_null(), "{a}");
    assert!(!marker.exists());
    assert_eq!(a["exit_code"], 4, "{a}\n{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("never re-trusts") || text(&o.stderr).contains("cannot be read"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn the_server_gets_the_clients_environment_and_nothing_of_the_proxys() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let env_file = home.join("server.env");
    // A shell records its environment, then becomes the MCP server.
    let server = vec![
        "sh".to_string(),
        "-c".to_string(),
        format!("env > '{}'; exec \"$0\" \"$1\"", env_file.display()),
        python(),
        installed("tests/fixtures/drift_server.py"),
    ];
    let (a, o) = through(
        home,
        &strs(&sdk(&["--mode", "legacy"])),
        &["--name", "env"],
        &server,
        &[("FROM_THE_CLIENT", "yes")],
    );
    assert_eq!(a["ok"], true, "{a}\n{}", text(&o.stderr));
    let env = std::fs::read_to_string(&env_file).unwrap();
    assert!(env.contains("FROM_THE_CLIENT=yes"));
    assert!(
        !env.contains("PINLOG_PROXY_LEAN") && !env.contains("MIMALLOC_"),
        "{env}"
    );
}

#[test]
fn a_team_lock_decides_instead_of_first_use_and_pins_what_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let config = json!({"mcpServers": {"drift": {"command": python(), "args": [installed("tests/fixtures/drift_server.py")]}}});
    std::fs::write(home.join("mcp.json"), config.to_string()).unwrap();
    let run = |args: &[&str]| {
        let o = Command::new(pinlog_bin())
            .current_dir(home)
            .args(args)
            .env("PINLOG_HOME", home)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
    };
    run(&["export", "-config", "mcp.json", "-o", "manifest.json"]);
    run(&["lock", "-o", "mcp.lock.json", "manifest.json"]);
    let lock = home.join("mcp.lock.json").to_string_lossy().to_string();
    let locked = ["--name", "drift", "--lock", lock.as_str()];
    let (a, o) = through(
        home,
        &strs(&sdk(&["--mode", "legacy"])),
        &locked,
        &drift_server(),
        &[],
    );
    assert_eq!(a["ok"], true, "{a}\n{}", text(&o.stderr));
    assert!(
        !text(&o.stderr).contains("pinned"),
        "the lock decides: nothing is pinned"
    );
    let (a, _) = through(
        home,
        &strs(&sdk(&["--mode", "legacy"])),
        &locked,
        &drift_server(),
        &[("DRIFT_TOOLS", "v2")],
    );
    assert_eq!(a["code"], -32090, "{a}");
    assert!(
        a["message"]
            .as_str()
            .unwrap()
            .contains("pinlog verify -lock"),
        "{a}"
    );
    // A server the lock does not name: pinned on first use, or refused with --only-locked.
    let other = ["--name", "other", "--lock", lock.as_str(), "--only-locked"];
    let marker = home.join("started");
    let starts = format!("touch '{}'", marker.display());
    let server = vec!["sh".to_string(), "-c".to_string(), starts];
    let (a, o) = through(
        home,
        &strs(&sdk(&["--mode", "legacy"])),
        &other,
        &server,
        &[],
    );
    assert_eq!(a["ok"], false, "{a}");
    assert!(
        text(&o.stderr).contains("does not name the server \"other\""),
        "{}",
        text(&o.stderr)
    );
    assert!(!marker.exists(), "refused before the server ran");

    // A lock that pins a package: a command asking for another version is refused before it runs.
    let mut m: J =
        serde_json::from_slice(&std::fs::read(home.join("manifest.json")).unwrap()).unwrap();
    m["servers"][0]["package"] =
        json!({"registry": "npm", "name": "drift-mcp", "version": "1.2.3", "digest": null});
    std::fs::write(home.join("manifest.json"), m.to_string()).unwrap();
    run(&["lock", "-o", "mcp.lock.json", "manifest.json"]);
    // The wire never names the package, so the locked one is no drift: the server the lock
    // names runs (its runner cannot be pinned to the version, which the proxy says) and holds.
    let (a, o) = through(
        home,
        &strs(&sdk(&["--mode", "legacy"])),
        &locked,
        &drift_server(),
        &[],
    );
    assert_eq!(a["ok"], true, "{a}\n{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("the lock pins npm:drift-mcp@1.2.3"),
        "{}",
        text(&o.stderr)
    );
    let o = Command::new(pinlog_bin())
        .args([
            "proxy",
            "--name",
            "drift",
            "--lock",
            &lock,
            "--",
            "npx",
            "-y",
            "drift-mcp@9.9.9",
        ])
        .env("PINLOG_HOME", home)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("the lock pins npm:drift-mcp@1.2.3"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn the_demo_pins_then_blocks_and_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let o = Command::new(pinlog_bin())
        .arg("demo")
        .env("TMPDIR", tmp.path())
        .env("PINLOG_HOME", &home)
        .output()
        .unwrap();
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    assert!(out.contains("pinned 1 tool(s)"), "{out}");
    assert!(
        out.contains("(tool-changed, new-field, new-instruction)"),
        "{out}"
    );
    assert!(out.contains("/inputSchema/properties/notes"), "{out}");
    assert!(out.contains("refused by the proxy with error -32090; it never reached the server"));
    // Its pins lived in a temporary directory, now gone; the user's store was never touched.
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    assert!(!home.exists());
}

#[test]
fn approving_takes_a_person_and_then_the_changed_server_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    pin_fixture(home, &[]);
    let (a, _) = burst(home, &["--name", "drift"], &[("DRIFT_TOOLS", "v2")]);
    assert_eq!(a["call"]["error"]["code"], -32090, "{a}");
    // Without a terminal (as an agent's shell tool runs it), approve refuses.
    let o = Command::new(pinlog_bin())
        .args(["approve", "drift"])
        .env("PINLOG_HOME", home)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("--yes"));
    let o = pinlog(home, &["approve", "drift", "--yes"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let (a, o) = burst(home, &["--name", "drift"], &[("DRIFT_TOOLS", "v2")]);
    assert!(a["call"]["result"].is_object(), "{a}\n{}", text(&o.stderr));
    assert_eq!(pinlog(home, &["audit"]).status.code(), Some(0));
}

/// A raw client over the proxy's standard input and output: after `pause`, writes `lines` at
/// once, reads every line the proxy writes until the answer to `last` (or 20 s), then closes its
/// side.
fn raw_session(
    home: &Path,
    proxy: &[&str],
    server: &[String],
    pause: std::time::Duration,
    lines: &[J],
    last: &J,
) -> (Vec<J>, Output) {
    use std::io::{BufRead, Write};
    let mut child = Command::new(pinlog_bin())
        .arg("proxy")
        .args(proxy)
        .arg("--")
        .args(server)
        .env("PINLOG_HOME", home)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::thread::sleep(pause);
    for l in lines {
        writeln!(stdin, "{l}").unwrap();
    }
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(stdout).lines() {
            let Ok(l) = l else { break };
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    let mut got = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while let Ok(l) = rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()))
    {
        let v: J = serde_json::from_str(&l).unwrap_or_else(|e| panic!("{e}: {l}"));
        let done = v["id"] == *last && v.get("method").is_none();
        got.push(v);
        if done {
            break;
        }
    }
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    (got, o)
}

fn opening(then: &[J]) -> Vec<J> {
    let mut v = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ];
    v.extend_from_slice(then);
    v
}

fn scripted(behaviour: &str) -> Vec<String> {
    vec![
        python(),
        installed("mcp/tests/fixtures/scripted_server.py"),
        behaviour.to_string(),
    ]
}

#[test]
fn a_server_message_that_is_both_request_and_answer_never_reaches_the_client() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    // The server answers the client's tools/list (its second reading, after the proxy's own) with
    // one message holding "method" and "result": a changed tool under the request's id.
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let (got, o) = raw_session(
        home,
        &["--name", "hybrid"],
        &scripted("hybrid"),
        std::time::Duration::ZERO,
        &opening(&[list]),
        &json!(1),
    );
    let err = text(&o.stderr);
    assert!(
        got.iter().all(|m| !m.to_string().contains("Changed")),
        "{got:?}"
    );
    let answer = got.last().unwrap();
    assert_eq!(answer["error"]["code"], -32092, "{got:?}\n{err}");
    assert!(answer.get("method").is_none() && answer.get("result").is_none());
    assert!(err.contains("neither a request nor a response"), "{err}");
    assert!(err.contains("refused 1 message"), "{err}");
    // The official client hears the same refusal, not the changed tool.
    let (a, o) = through(
        home,
        &strs(&sdk(&["--mode", "legacy"])),
        &["--name", "hybrid"],
        &scripted("hybrid"),
        &[],
    );
    assert_eq!(a["code"], -32092, "{a}\n{}", text(&o.stderr));
    assert!(!a.to_string().contains("Changed"), "{a}");
}

#[test]
fn a_notification_before_the_handshake_lists_and_pins_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    // The server says its tools changed before the client's initialize reaches the proxy.
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let (got, o) = raw_session(
        home,
        &["--name", "early"],
        &scripted("early-notice"),
        std::time::Duration::from_secs(1),
        &opening(&[list]),
        &json!(1),
    );
    let err = text(&o.stderr);
    assert_eq!(got.len(), 2, "{got:?}\n{err}");
    assert_eq!(
        got[0]["result"]["serverInfo"]["name"], "scripted-early-notice",
        "{got:?}\n{err}"
    );
    assert_eq!(got[1]["result"]["tools"][0]["name"], "a", "{got:?}");
    assert!(err.contains("before the handshake"), "{err}");
    assert!(err.contains("pinned 1 tool(s) and 0 prompt(s)"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
    // What was pinned is the surface served after the handshake: a later session holds.
    let (a, o) = through(
        home,
        &strs(&sdk(&["--mode", "legacy"])),
        &["--name", "early"],
        &scripted("early-notice"),
        &[],
    );
    assert_eq!(a["ok"], true, "{a}\n{}", text(&o.stderr));
    assert_eq!(a["tools"], json!(["a"]));
}

#[test]
fn the_proxy_reads_a_listing_as_the_client_library_does() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    // A stateless server whose tools/list pages say resultType "input_required": a page that is
    // not complete cannot be listed, so nothing is pinned and the client hears why.
    let (a, o) = through(
        home,
        &strs(&sdk(&["--mode", "2026-07-28"])),
        &["--name", "needs-input"],
        &scripted("input-required"),
        &[],
    );
    let err = text(&o.stderr);
    assert_eq!(a["code"], -32092, "{a}\n{err}");
    assert!(
        err.contains("tools/list answered with resultType \"input_required\""),
        "{err}"
    );
    let o = pinlog(home, &["pins"]);
    assert!(
        !text(&o.stdout).contains("needs-input"),
        "{}",
        text(&o.stdout)
    );
}

/// Drives `pinlog approve ARGS…` under a real pseudo-terminal: see [`on_a_terminal`].
fn approve_on_a_terminal(home: &Path, answer: &str, args: &[&str]) -> (bool, i32, String) {
    on_a_terminal(home, "approve", answer, args)
}

/// Drives `pinlog COMMAND ARGS…` under a real pseudo-terminal (Python's `pty`): waits for the
/// question, then answers as `answer` says: `eof` (Ctrl-D: the input ends), `enter`, `y`, `code`
/// (the code shown, read off the screen) or `other` (a code of the right shape, not the one
/// shown). Returns whether it was asked, the exit code and everything the terminal showed.
fn on_a_terminal(home: &Path, command: &str, answer: &str, args: &[&str]) -> (bool, i32, String) {
    const DRIVE: &str = r#"
import json, os, pty, re, select, sys, time
answer, argv = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
screen = b""
def read(until, seconds):
    global screen
    deadline = time.time() + seconds
    while not until() and time.time() < deadline:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                return
            if not chunk:
                return
            screen += chunk
asked = lambda: b"press Enter" in screen
read(asked, 20)
if asked():
    code = re.search(rb"type the code ([0-9A-Z]{6}) ", screen).group(1)
    typed = {"eof": b"\x04", "enter": b"\n", "y": b"y\n", "code": code + b"\n",
             "other": (b"22222" + (b"3" if code.endswith(b"2") else b"2")) + b"\n"}[answer]
    os.write(fd, typed)
read(lambda: False, 20)
_, status = os.waitpid(pid, 0)
print(json.dumps({"asked": asked(), "exit": os.waitstatus_to_exitcode(status),
                  "screen": screen.decode("utf-8", "replace")}))
"#;
    let o = Command::new(python())
        .args(["-c", DRIVE, answer, pinlog_bin(), command])
        .args(args)
        .env("PINLOG_HOME", home)
        .output()
        .unwrap();
    let a: J = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&o.stdout), text(&o.stderr)));
    (
        a["asked"].as_bool().unwrap(),
        i32::try_from(a["exit"].as_i64().unwrap()).unwrap(),
        a["screen"].as_str().unwrap().to_string(),
    )
}

/// The issue's report: with standard input on a pseudo-terminal, `pinlog approve` approved at
/// once, showing nothing and asking nothing. Now it shows the change (labels and diff) with a
/// code, and only that code approves: the end of input, an empty line, a blind "y" or another
/// code approve nothing (exit 1, still pending); `--yes` approves without a terminal.
#[test]
fn approve_on_a_terminal_shows_the_change_and_takes_only_its_code() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    pin_fixture(home, &[]);
    let (a, _) = burst(home, &["--name", "drift"], &[("DRIFT_TOOLS", "v2")]);
    assert_eq!(a["call"]["error"]["code"], -32090, "{a}");
    let pending = |home: &Path| {
        let o = pinlog(home, &["pins"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        text(&o.stdout).contains("PENDING")
    };
    assert!(pending(home));
    let mut codes = Vec::new();
    for answer in ["eof", "enter", "y", "other"] {
        let (asked, exit, screen) = approve_on_a_terminal(home, answer, &["drift"]);
        assert!(asked, "{answer}: never asked: {screen}");
        assert_eq!(exit, 1, "{answer}: {screen}");
        assert!(screen.contains("nothing approved"), "{answer}: {screen}");
        // What changes was shown before the question: the labels and the diff.
        assert!(
            screen.contains("changed since it was approved: ") && screen.contains("tool-changed"),
            "{answer}: {screen}"
        );
        assert!(
            screen.contains("/inputSchema/properties/notes"),
            "{answer}: {screen}"
        );
        assert!(!screen.contains("approved every"), "{answer}: {screen}");
        assert!(pending(home), "{answer}: approved anyway");
        let code = screen.split("type the code ").nth(1).unwrap()[..6].to_string();
        codes.push(code);
    }
    // One change, one code: it names the change, not the run.
    assert!(codes.windows(2).all(|w| w[0] == w[1]), "{codes:?}");

    let (asked, exit, screen) = approve_on_a_terminal(home, "code", &["drift"]);
    assert!(asked, "{screen}");
    assert_eq!(exit, 0, "{screen}");
    assert!(
        screen.contains("approved every pending change of \"drift\"")
            && screen.contains("approval 2"),
        "{screen}"
    );
    assert!(!pending(home));
    let (a, o) = burst(home, &["--name", "drift"], &[("DRIFT_TOOLS", "v2")]);
    assert!(a["call"]["result"].is_object(), "{a}\n{}", text(&o.stderr));

    // Without a terminal, --yes approves (for scripts); without it, approve refuses (exit 2).
    let (a, _) = burst(home, &["--name", "drift"], &[("DRIFT_TOOLS", "v1")]);
    assert_eq!(a["call"]["error"]["code"], -32090, "{a}");
    let o = Command::new(pinlog_bin())
        .args(["approve", "drift"])
        .env("PINLOG_HOME", home)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(pending(home));
    let o = Command::new(pinlog_bin())
        .args(["approve", "drift", "--yes"])
        .env("PINLOG_HOME", home)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("approval 3"),
        "{}",
        text(&o.stdout)
    );
    assert!(!pending(home));
    assert_eq!(pinlog(home, &["audit"]).status.code(), Some(0));
}

/// Forgetting a pin lets the next session pin whatever it is served, unseen: an approval by
/// another name. So `pinlog forget` asks as approve does: on a terminal only the code shown
/// forgets; without one, only `--yes`.
#[test]
fn forget_on_a_terminal_takes_only_its_code() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    pin_fixture(home, &[]);
    let (a, _) = burst(home, &["--name", "drift"], &[("DRIFT_TOOLS", "v2")]);
    assert_eq!(a["call"]["error"]["code"], -32090, "{a}");
    let pinned = |home: &Path| text(&pinlog(home, &["pins"]).stdout).contains("drift");
    let o = Command::new(pinlog_bin())
        .args(["forget", "drift"])
        .env("PINLOG_HOME", home)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("--yes"), "{}", text(&o.stderr));
    assert!(pinned(home), "forgotten without a terminal");
    for answer in ["eof", "y", "other"] {
        let (asked, exit, screen) = on_a_terminal(home, "forget", answer, &["drift"]);
        assert!(asked, "{answer}: never asked: {screen}");
        assert_eq!(exit, 1, "{answer}: {screen}");
        assert!(screen.contains("nothing forgotten"), "{answer}: {screen}");
        assert!(
            screen.contains("a change is pending (tool-changed")
                && screen.contains("pins whatever the server serves then, unseen"),
            "{answer}: {screen}"
        );
        assert!(pinned(home), "{answer}: forgotten anyway");
    }
    let (asked, exit, screen) = on_a_terminal(home, "forget", "code", &["drift"]);
    assert!(asked, "{screen}");
    assert_eq!(exit, 0, "{screen}");
    assert!(screen.contains("forgot \"drift\""), "{screen}");
    assert!(!pinned(home));
    assert_eq!(pinlog(home, &["audit"]).status.code(), Some(0));
}

/// With the approvers' keys in the pinlog home, no one without an approver's key approves:
/// `pinlog approve` refuses (--yes and on a terminal alike), and the proxy runs a server only
/// under a lockfile an approver signed, held to it alone.
#[test]
fn where_approvals_come_only_from_a_signed_lockfile_no_one_else_approves() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let config = json!({"mcpServers": {"drift": {"command": python(), "args": [installed("tests/fixtures/drift_server.py")]}}});
    std::fs::write(home.join("mcp.json"), config.to_string()).unwrap();
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = Command::new(pinlog_bin());
        c.current_dir(home).args(args).env("PINLOG_HOME", home);
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
    };
    pin_fixture(home, &[]);
    let (a, _) = burst(home, &["--name", "drift"], &[("DRIFT_TOOLS", "v2")]);
    assert_eq!(a["call"]["error"]["code"], -32090, "{a}");
    run(&["key", "-o", "approver.pem"], &[]);
    run(&["key", "-o", "someone.pem"], &[]);
    std::fs::copy(home.join("approver.pem.pub"), home.join("approvers")).unwrap();

    let o = pinlog(home, &["approve", "drift", "--yes"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("only from a lockfile signed by an approver key"),
        "{}",
        text(&o.stderr)
    );
    let (asked, exit, screen) = approve_on_a_terminal(home, "code", &["drift"]);
    assert!(!asked && exit == 2, "{screen}");
    assert!(text(&pinlog(home, &["pins"]).stdout).contains("PENDING"));

    // The pin no longer decides: without --lock, nothing runs.
    let (a, o) = burst(home, &["--name", "drift"], &[]);
    assert_eq!(a["exit_code"], 4, "{a}\n{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("run the proxy with --lock"),
        "{}",
        text(&o.stderr)
    );

    run(
        &["export", "-config", "mcp.json", "-o", "manifest.json"],
        &[],
    );
    run(&["lock", "-o", "mcp.lock.json", "manifest.json"], &[]);
    let lock = home.join("mcp.lock.json").to_string_lossy().to_string();
    let locked = ["--name", "drift", "--lock", lock.as_str()];
    let refused = |env: &[(&str, &str)], why: &str| {
        let (a, o) = burst(home, &locked, env);
        assert_eq!(a["exit_code"], 4, "{why}: {a}\n{}", text(&o.stderr));
        assert!(a["initialize"].is_null(), "{a}");
        assert!(text(&o.stderr).contains(why), "{}", text(&o.stderr));
    };
    refused(&[], "has no signature");
    run(
        &["sign", "-lock", "mcp.lock.json", "-key", "someone.pem"],
        &[],
    );
    refused(&[], "signature-foreign-key");
    run(
        &["sign", "-lock", "mcp.lock.json", "-key", "approver.pem"],
        &[],
    );
    let (a, o) = burst(home, &locked, &[]);
    assert!(a["call"]["result"].is_object(), "{a}\n{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("is signed by the approver key"),
        "{}",
        text(&o.stderr)
    );
    // The change the pin store holds pending is not what the lock approves: blocked.
    let (a, _) = burst(home, &locked, &[("DRIFT_TOOLS", "v2")]);
    assert_eq!(a["call"]["error"]["code"], -32090, "{a}");
    // A server the lock does not name is never pinned on first use: that would approve it.
    let (a, o) = burst(home, &["--name", "other", "--lock", lock.as_str()], &[]);
    assert_eq!(a["exit_code"], 4, "{a}\n{}", text(&o.stderr));

    // The approver approves the change: locks what is served now and signs it.
    run(
        &["export", "-config", "mcp.json", "-o", "manifest.json"],
        &[("DRIFT_TOOLS", "v2")],
    );
    run(&["lock", "-o", "mcp.lock.json", "manifest.json"], &[]);
    refused(&[("DRIFT_TOOLS", "v2")], "signature-other-lockfile");
    run(
        &["sign", "-lock", "mcp.lock.json", "-key", "approver.pem"],
        &[],
    );
    let (a, o) = burst(home, &locked, &[("DRIFT_TOOLS", "v2")]);
    assert!(a["call"]["result"].is_object(), "{a}\n{}", text(&o.stderr));
}

/// The lines `pinlog proxy` wrote after `pinlog: the last lines of its standard error:`, up to
/// its next line of its own.
fn last_lines_said(err: &str) -> Vec<String> {
    err.lines()
        .skip_while(|l| *l != "pinlog: the last lines of its standard error:")
        .skip(1)
        .take_while(|l| l.starts_with("pinlog:   | "))
        .map(|l| l["pinlog:   | ".len()..].to_string())
        .collect()
}

#[test]
fn a_server_that_ends_at_once_is_said_with_its_last_lines_and_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    // Twenty lines, then a reason with a terminal escape in it, then a line of 1000 characters;
    // and exit 3 before reading anything.
    let script = r#"i=1; while [ $i -le 20 ]; do echo "starting step $i" >&2; i=$((i+1)); done
printf 'Error: \033[31mGITHUB_TOKEN is not set\n' >&2
printf '%01000d\n' 0 >&2
exit 3"#;
    let server = vec!["sh".to_string(), "-c".to_string(), script.to_string()];
    let (a, o) = through(
        home,
        &strs(&sdk(&[])),
        &["--name", "ends-at-once"],
        &server,
        &[],
    );
    let err = text(&o.stderr);
    assert_eq!(a["code"], -32092, "{a}\n{err}");
    let message = a["message"].as_str().unwrap();
    // No pin exists to review, and the server's own words never reach the client.
    assert!(!message.contains("pinlog review"), "{message}");
    assert!(!message.contains("GITHUB_TOKEN"), "{message}");
    assert!(
        message.contains("the server ended before it answered"),
        "{message}"
    );
    assert!(message.contains("Run the server's command"), "{message}");
    assert!(
        err.contains("the server ended (exit status 3) before it answered"),
        "{err}"
    );
    assert!(!err.contains("pinlog review"), "{err}");
    assert!(!err.contains('\u{1b}'), "{err}");
    let said = last_lines_said(&err);
    assert_eq!(said.len(), 8, "{err}");
    assert_eq!(said[0], "starting step 15");
    assert_eq!(said[6], "Error: <U+001B>[31mGITHUB_TOKEN is not set");
    assert_eq!(said[7], format!("{}…", "0".repeat(200)));
    assert!(
        err.contains("pinlog: nothing was pinned. Run the server's command"),
        "{err}"
    );
    let o = pinlog(home, &["pins"]);
    assert!(
        !text(&o.stdout).contains("ends-at-once"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn a_server_command_that_does_not_exist_is_said_with_what_to_check() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-server");
    let o = Command::new(pinlog_bin())
        .args(["proxy", "--name", "missing", "--"])
        .arg(&missing)
        .env("PINLOG_HOME", tmp.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(
        err.contains(&format!("cannot start \"{}\"", missing.display())),
        "{err}"
    );
    assert!(err.contains("the server was not started"), "{err}");
    assert!(
        err.contains("Check its command in the client's configuration"),
        "{err}"
    );
    assert!(!err.contains("pinlog review"), "{err}");
}

#[test]
fn review_of_a_proxy_pin_says_what_was_read_and_alarms_only_on_what_is_missing() {
    // The proxy reads each listing once. A change with nothing approved missing is no alarm; a
    // pinned tool the server no longer listed cannot be proven removed, and says so.
    for (served, missing) in [(vec![("DRIFT_EXTRA_TOOL", "1")], false), (vec![], true)] {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        pin_fixture(home, &[("DRIFT_EXTRA_TOOL", "1")]);
        let mut env = served.clone();
        env.push(("DRIFT_TOOLS", "v2"));
        let (a, o) = burst(home, &["--name", "drift"], &env);
        assert_eq!(a["exit_code"], 1, "{a}\n{}", text(&o.stderr));
        let o = pinlog(home, &["review", "drift"]);
        let out = text(&o.stdout);
        let manifest_line = out
            .lines()
            .find(|l| l.starts_with("manifest: "))
            .unwrap_or_else(|| panic!("{out}"));
        if missing {
            assert!(manifest_line.ends_with(", NOT complete)"), "{out}");
            assert!(out.contains("UNSEEN tool-removed"), "{out}");
            assert!(out.contains("note: the capture is not complete"), "{out}");
        } else {
            assert!(
                manifest_line.ends_with(
                    ", read once: 2 tool(s) and 1 prompt(s); nothing approved is missing from it)"
                ),
                "{out}"
            );
            assert!(!out.contains("NOT complete"), "{out}");
            assert!(!out.contains("not complete"), "{out}");
            assert!(out.contains("VIOLATION tool-changed"), "{out}");
        }
    }
}
