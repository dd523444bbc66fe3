//! `pinlog policy`: each product's file read back with an independent parser and checked against
//! the shape its documentation gives (docs/POLICY.md), only wrapped and locked command lines
//! allowed, and every refusal leaving nothing written.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use pinlog_clients::policy::plan::{plan, write, PolicyOptions};
use pinlog_clients::policy::Product;
use serde_json::Value;

const LOCK: &str = "/srv/team/mcp.lock.json";

/// Three wrapped, locked servers in the forms `pinlog wrap` writes: a plain one, one with a full
/// path to pinlog, `--only-locked` and an env reference, and one whose name needs quoting in TOML
/// and whose options are glued (`--name=-dash`), with a tab and a backslash in an argument.
const FIXTURE: &str = r#"{
  "mcpServers": {
    "weather": {"command": "/usr/local/bin/pinlog", "args": ["proxy", "--name", "weather", "--lock", "/srv/team/mcp.lock.json", "--", "node", "weather-server.js"]},
    "billing": {"type": "stdio", "command": "/usr/local/bin/pinlog", "args": ["proxy", "--name", "billing", "--lock", "/srv/team/mcp.lock.json", "--only-locked", "--", "npx", "-y", "@acme/billing-mcp@1.4.2"], "env": {"BILLING_TOKEN": "${BILLING_TOKEN}"}},
    "odd.name \"q\"": {"command": "/usr/local/bin/pinlog", "args": ["proxy", "--name=-dash", "--lock=/srv/team/mcp.lock.json", "--on-drift", "hold", "--", "python3", "-m", "srv", "a\\b\tc"], "cwd": "/srv"}
  },
  "inputs": []
}"#;

fn expected() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        (
            "billing",
            vec![
                "/usr/local/bin/pinlog",
                "proxy",
                "--name",
                "billing",
                "--lock",
                LOCK,
                "--only-locked",
                "--",
                "npx",
                "-y",
                "@acme/billing-mcp@1.4.2",
            ],
        ),
        (
            "odd.name \"q\"",
            vec![
                "/usr/local/bin/pinlog",
                "proxy",
                "--name=-dash",
                "--lock=/srv/team/mcp.lock.json",
                "--on-drift",
                "hold",
                "--",
                "python3",
                "-m",
                "srv",
                "a\\b\tc",
            ],
        ),
        (
            "weather",
            vec![
                "/usr/local/bin/pinlog",
                "proxy",
                "--name",
                "weather",
                "--lock",
                LOCK,
                "--",
                "node",
                "weather-server.js",
            ],
        ),
    ]
}

fn expected_argvs() -> BTreeSet<Vec<String>> {
    expected()
        .into_iter()
        .map(|(_, a)| a.into_iter().map(String::from).collect())
        .collect()
}

struct Run {
    _tmp: tempfile::TempDir,
    out: PathBuf,
    code: u8,
}

fn run(product: Product, config: &str, lock: &str) -> Run {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("approved.json");
    std::fs::write(&cfg, config).unwrap();
    let out = tmp.path().join("out");
    let code = policy(args(product, &cfg, lock, &out));
    Run {
        _tmp: tmp,
        out,
        code,
    }
}

fn args(product: Product, config: &Path, lock: &str, out: &Path) -> PolicyOptions {
    PolicyOptions {
        product,
        config: config.to_path_buf(),
        lock: lock.to_string(),
        out: out.to_path_buf(),
    }
}

/// `pinlog policy` as the binary runs it, without the printing: the exit code.
fn policy(options: PolicyOptions) -> u8 {
    match plan(&options).and_then(|p| write(&options.out, &p)) {
        Ok(_) => 0,
        Err(e) => e.exit.code(),
    }
}

/// The refusal `plan` gives for a configuration (exit code and message); nothing is written.
fn refusal(product: Product, config: &str, lock: &str) -> (u8, String) {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("approved.json");
    std::fs::write(&cfg, config).unwrap();
    match plan(&args(product, &cfg, lock, &tmp.path().join("out"))) {
        Ok(p) => panic!("expected a refusal, got {} files", p.files.len()),
        Err(e) => (e.exit.code(), e.message),
    }
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    k.sort_unstable();
    k
}

fn string_array(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|s| s.as_str().expect("a string").to_string())
        .collect()
}

/// Every file under `dir`, relative, `/`-separated.
fn files_under(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap();
                out.insert(
                    rel.components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect::<Vec<_>>()
                        .join("/"),
                );
            }
        }
    }
    out
}

/// `allowedMcpServers` as Claude Code and Copilot document it: an array of objects, each with
/// exactly one matcher key; here always `serverCommand`, an array of strings.
fn server_commands(allowed: &Value) -> Vec<Vec<String>> {
    allowed
        .as_array()
        .expect("allowedMcpServers is an array")
        .iter()
        .map(|entry| {
            assert_eq!(
                keys(entry),
                ["serverCommand"],
                "one matcher per entry: {entry}"
            );
            string_array(&entry["serverCommand"])
        })
        .collect()
}

/// What a wrapped, locked command line must be: pinlog, `proxy`, `--lock LOCK` before `--`,
/// and a command after it.
fn assert_wrapped_and_locked(argv: &[String]) {
    let base = argv[0].rsplit(['/', '\\']).next().unwrap();
    assert_eq!(base, "pinlog", "{argv:?}");
    assert_eq!(argv[1], "proxy", "{argv:?}");
    let dd = argv.iter().position(|a| a == "--").expect("--");
    assert!(dd + 1 < argv.len(), "{argv:?}");
    let opts = &argv[2..dd];
    let locked = opts.windows(2).any(|w| w[0] == "--lock" && w[1] == LOCK)
        || opts.iter().any(|o| o == &format!("--lock={LOCK}"));
    assert!(locked, "{argv:?}");
    assert!(argv.iter().all(|a| !a.contains("${")), "{argv:?}");
}

#[test]
fn claude_code_writes_the_documented_allowlist_and_managed_mcp_file() {
    let r = run(Product::ClaudeCode, FIXTURE, LOCK);
    assert_eq!(r.code, 0);
    assert_eq!(
        files_under(&r.out),
        BTreeSet::from([
            "claude-code/managed-mcp.json".to_string(),
            "claude-code/managed-settings.json".to_string()
        ])
    );

    // managed-settings.json: allowedMcpServers of serverCommand entries, and
    // allowManagedMcpServersOnly so no user or project allowlist widens it.
    let s = read_json(&r.out.join("claude-code/managed-settings.json"));
    assert_eq!(
        keys(&s),
        ["allowManagedMcpServersOnly", "allowedMcpServers"]
    );
    assert_eq!(s["allowManagedMcpServersOnly"], Value::Bool(true));
    let cmds = server_commands(&s["allowedMcpServers"]);
    assert_eq!(cmds.len(), 3);
    cmds.iter().for_each(|c| assert_wrapped_and_locked(c));
    assert_eq!(cmds.into_iter().collect::<BTreeSet<_>>(), expected_argvs());

    // managed-mcp.json: the .mcp.json form, {"mcpServers": {name: {type, command, args, env?}}}.
    let m = read_json(&r.out.join("claude-code/managed-mcp.json"));
    assert_eq!(keys(&m), ["mcpServers"]);
    let servers = m["mcpServers"].as_object().unwrap();
    let names: Vec<&str> = servers.keys().map(String::as_str).collect();
    assert_eq!(names.len(), 3);
    for (name, argv) in expected() {
        let e = &servers[name];
        let ks = keys(e);
        assert!(
            ks == ["args", "command", "type"] || ks == ["args", "command", "env", "type"],
            "{name}: {ks:?}"
        );
        assert_eq!(e["type"], "stdio");
        let mut got = vec![e["command"].as_str().unwrap().to_string()];
        got.extend(string_array(&e["args"]));
        assert_eq!(got, argv, "{name}");
    }
    assert_eq!(
        servers["billing"]["env"],
        serde_json::json!({"BILLING_TOKEN": "${BILLING_TOKEN}"})
    );
    // `cwd` is not part of the documented entry and is not carried.
    assert!(servers["odd.name \"q\""].get("cwd").is_none());
}

#[test]
fn copilot_writes_the_documented_managed_settings() {
    let r = run(Product::Copilot, FIXTURE, LOCK);
    assert_eq!(r.code, 0);
    assert_eq!(
        files_under(&r.out),
        BTreeSet::from(["copilot/managed-settings.json".to_string()])
    );
    let s = read_json(&r.out.join("copilot/managed-settings.json"));
    assert_eq!(keys(&s), ["allowedMcpServers"]);
    let cmds = server_commands(&s["allowedMcpServers"]);
    assert_eq!(cmds.len(), 3);
    cmds.iter().for_each(|c| assert_wrapped_and_locked(c));
    assert_eq!(cmds.into_iter().collect::<BTreeSet<_>>(), expected_argvs());
}

#[test]
fn codex_writes_name_qualified_exact_command_matchers() {
    let r = run(Product::Codex, FIXTURE, LOCK);
    assert_eq!(r.code, 0);
    assert_eq!(
        files_under(&r.out),
        BTreeSet::from(["codex/requirements.toml".to_string()])
    );
    let text = std::fs::read_to_string(r.out.join("codex/requirements.toml")).unwrap();
    let doc: toml_edit::DocumentMut = text.parse().expect("requirements.toml is TOML");
    let top: Vec<&str> = doc.as_table().iter().map(|(k, _)| k).collect();
    assert_eq!(top, ["mcp_servers"]);
    let servers = doc["mcp_servers"].as_table().expect("[mcp_servers]");
    let mut seen = Vec::new();
    for (name, server) in servers.iter() {
        // mcp_servers.<name>.identity.command = { executable, args = [{ match, value }…] }
        let server = server.as_table().expect("a table per server");
        assert_eq!(
            server.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            ["identity"]
        );
        let identity = server["identity"].as_table().unwrap();
        assert_eq!(
            identity.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            ["command"]
        );
        let command = identity["command"]
            .as_table()
            .expect("the matcher table form, never the string form that ignores args");
        assert_eq!(
            command.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            ["executable", "args"]
        );
        let mut argv = vec![command["executable"].as_str().unwrap().to_string()];
        for m in command["args"].as_array().unwrap().iter() {
            let m = m.as_inline_table().expect("an inline matcher table");
            assert_eq!(
                m.iter().map(|(k, _)| k).collect::<Vec<_>>(),
                ["match", "value"]
            );
            assert_eq!(m.get("match").unwrap().as_str(), Some("exact"));
            argv.push(m.get("value").unwrap().as_str().unwrap().to_string());
        }
        assert_wrapped_and_locked(&argv);
        seen.push((name.to_string(), argv));
    }
    let want: Vec<(String, Vec<String>)> = expected()
        .into_iter()
        .map(|(n, a)| (n.to_string(), a.into_iter().map(String::from).collect()))
        .collect();
    assert_eq!(seen, want, "names and command lines, in name order");
}

#[test]
fn all_writes_every_documented_file_and_nothing_for_cursor() {
    let r = run(Product::All, FIXTURE, LOCK);
    assert_eq!(r.code, 0);
    assert_eq!(
        files_under(&r.out),
        BTreeSet::from([
            "claude-code/managed-mcp.json".to_string(),
            "claude-code/managed-settings.json".to_string(),
            "codex/requirements.toml".to_string(),
            "copilot/managed-settings.json".to_string(),
        ])
    );
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("c.json");
    std::fs::write(&cfg, FIXTURE).unwrap();
    let p = plan(&args(Product::All, &cfg, LOCK, &tmp.path().join("o"))).unwrap();
    assert!(
        p.notes.iter().any(|n| n.starts_with("cursor:")),
        "{:?}",
        p.notes
    );
}

#[test]
fn cursor_is_refused_with_a_reason_and_writes_nothing() {
    let r = run(Product::Cursor, FIXTURE, LOCK);
    assert_eq!(r.code, 2);
    assert!(!r.out.exists());
    let (code, msg) = refusal(Product::Cursor, FIXTURE, LOCK);
    assert_eq!(code, 2);
    assert!(
        msg.contains("team dashboard") && msg.contains("writes nothing"),
        "{msg}"
    );
}

#[test]
fn vs_code_servers_read_like_mcp_servers() {
    let vs = r#"{"servers": {"weather": {"type": "stdio", "command": "/usr/local/bin/pinlog", "args": ["proxy", "--name", "weather", "--lock", "/srv/team/mcp.lock.json", "--", "node", "weather-server.js"]}}}"#;
    let r = run(Product::Copilot, vs, LOCK);
    assert_eq!(r.code, 0);
    let s = read_json(&r.out.join("copilot/managed-settings.json"));
    assert_eq!(
        server_commands(&s["allowedMcpServers"]),
        [expected()[2]
            .1
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()]
    );
}

/// A command line written without `--` is read as `pinlog proxy` reads it (the server's command
/// starts at the first argument that is not an option or an option's value): wrapped and locked
/// like any other, and allowed exactly as written, since that is what the client runs.
#[test]
fn a_server_command_without_dash_dash_is_allowed_as_written() {
    let argv = [
        "/usr/local/bin/pinlog",
        "proxy",
        "--name",
        "weather",
        "--lock",
        LOCK,
        "--on-drift",
        "hold",
        "node",
        "weather-server.js",
        "--name",
        "x",
    ];
    let config =
        serde_json::json!({"mcpServers": {"weather": {"command": argv[0], "args": argv[1..]}}});
    let r = run(Product::Copilot, &config.to_string(), LOCK);
    assert_eq!(r.code, 0);
    let s = read_json(&r.out.join("copilot/managed-settings.json"));
    assert_eq!(
        server_commands(&s["allowedMcpServers"]),
        [argv.map(String::from).to_vec()]
    );
}

/// Each refusal: the exit code, words the message must hold, and no file written, for every
/// product that writes files.
#[test]
fn servers_that_are_not_wrapped_and_locked_are_refused_and_nothing_is_written() {
    let wrapped =
        |args: &str| format!(r#"{{"mcpServers": {{"good": {}, "bad": {args}}}}}"#, good());
    let cases: Vec<(String, &str, &[&str])> = vec![
        (
            wrapped(r#"{"command": "node", "args": ["x.js"]}"#),
            LOCK,
            &["server \"bad\" is not wrapped", "wrap it first"],
        ),
        (
            wrapped(r#"{"command": "/usr/local/bin/pinlog", "args": ["verify", "x"]}"#),
            LOCK,
            &["\"bad\"", "wrap it first"],
        ),
        (
            wrapped(
                r#"{"command": "pinlog", "args": ["proxy", "--name", "bad", "--lock", "/srv/team/mcp.lock.json", "--", "node", "x.js"]}"#,
            ),
            LOCK,
            &["\"bad\"", "relative name", "absolute path"],
        ),
        (
            wrapped(
                r#"{"command": "/usr/local/bin/pinlog", "args": ["proxy", "--name", "bad", "--", "node", "x.js"]}"#,
            ),
            LOCK,
            &["\"bad\"", "not locked", "--lock"],
        ),
        (
            wrapped(
                r#"{"command": "/usr/local/bin/pinlog", "args": ["proxy", "--name", "bad", "--lock", "other.lock.json", "--", "node", "x.js"]}"#,
            ),
            LOCK,
            &["\"bad\"", "locked to \"other.lock.json\""],
        ),
        (
            wrapped(
                r#"{"command": "/usr/local/bin/pinlog", "args": ["proxy", "--name", "bad", "--lock", "/srv/team/mcp.lock.json", "--verbose", "node", "x.js"]}"#,
            ),
            LOCK,
            &["\"bad\"", "\"--verbose\" (args[5])", "not one of its options"],
        ),
        (
            wrapped(
                r#"{"command": "/usr/local/bin/pinlog", "args": ["proxy", "--name", "bad", "--lock", "/srv/team/mcp.lock.json", "--listen", "127.0.0.1:8080", "node"]}"#,
            ),
            LOCK,
            &["\"bad\"", "--listen", "HTTP server"],
        ),
        (
            wrapped(
                r#"{"command": "/usr/local/bin/pinlog", "args": ["proxy", "--name", "bad", "--lock", "/srv/team/mcp.lock.json"]}"#,
            ),
            LOCK,
            &["\"bad\"", "is not wrapped", "options only"],
        ),
        (
            wrapped(
                r#"{"command": "/usr/local/bin/pinlog", "args": ["proxy", "--lock", "/srv/team/mcp.lock.json", "--", "node"]}"#,
            ),
            LOCK,
            &["\"bad\"", "without --name"],
        ),
        (
            // `pinlog proxy` reads the first `--` as the end of its options, even for a value.
            wrapped(
                r#"{"command": "/usr/local/bin/pinlog", "args": ["proxy", "--name", "--", "--lock", "/srv/team/mcp.lock.json", "--", "node"]}"#,
            ),
            LOCK,
            &["\"bad\"", "--name with no value"],
        ),
        (
            wrapped(
                r#"{"command": "/usr/local/bin/pinlog", "args": ["proxy", "--name", "bad", "--lock", "/srv/team/mcp.lock.json", "--", "node", "${HOME}/x.js"]}"#,
            ),
            LOCK,
            &["\"bad\"", "environment variable", "${HOME}"],
        ),
        (
            wrapped(r#"{"url": "https://mcp.example.com/mcp"}"#),
            LOCK,
            &["\"bad\"", "remote"],
        ),
        (
            wrapped(r#"{"type": "sse", "command": "/usr/local/bin/pinlog"}"#),
            LOCK,
            &["\"bad\"", "remote"],
        ),
        (
            wrapped(r#"{"command": "/usr/local/bin/pinlog", "args": "proxy"}"#),
            LOCK,
            &["server \"bad\" has args that are string"],
        ),
        (
            wrapped(
                r#"{"command": "/usr/local/bin/pinlog", "args": ["proxy", "--name", "bad", "--lock", "/srv/team/mcp.lock.json", "--", "x"], "env": {"K": 1}}"#,
            ),
            LOCK,
            &["\"bad\"", "number in env \"K\""],
        ),
        (
            // A name rendered safe in the message: the escape never reaches the terminal.
            format!(
                r#"{{"mcpServers": {{"good": {}, "b\u001b[2Jad": {{"command": "node"}}}}}}"#,
                good()
            ),
            LOCK,
            &["\"b<U+001B>[2Jad\"", "not wrapped"],
        ),
        (
            r#"{"mcpServers": {"a": {"command": "/usr/local/bin/pinlog"}, "a": {"command": "/usr/local/bin/pinlog"}}}"#.into(),
            LOCK,
            &["not strict JSON"],
        ),
        (
            format!(
                r#"{{"mcpServers": {{"good": {}}}, "servers": {{}}}}"#,
                good()
            ),
            LOCK,
            &["both \"mcpServers\" and \"servers\""],
        ),
        (r#"{"other": {}}"#.into(), LOCK, &["no \"mcpServers\""]),
    ];
    for product in [
        Product::ClaudeCode,
        Product::Copilot,
        Product::Codex,
        Product::All,
    ] {
        for (config, lock, needles) in &cases {
            let (code, msg) = refusal(product, config, lock);
            assert_eq!(code, 4, "{config}: {msg}");
            for n in *needles {
                assert!(msg.contains(n), "{config}: {msg:?} lacks {n:?}");
            }
            assert!(!msg.contains('\u{1b}'), "{msg:?}");
            let r = run(product, config, lock);
            assert_eq!(r.code, 4, "{config}");
            assert!(!r.out.exists(), "{config}: something was written");
        }
    }
}

fn good() -> &'static str {
    r#"{"command": "/usr/local/bin/pinlog", "args": ["proxy", "--name", "good", "--lock", "/srv/team/mcp.lock.json", "--", "node", "good.js"]}"#
}

#[test]
fn a_wrong_command_line_is_refused_with_exit_2_and_nothing_written() {
    for lock in ["", "${TEAM}/mcp.lock.json", "$HOME/mcp.lock.json"] {
        let r = run(Product::All, FIXTURE, lock);
        assert_eq!(r.code, 2, "{lock:?}");
        assert!(!r.out.exists());
    }
    // A missing configuration is an input that cannot be read.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let code = policy(args(
        Product::All,
        &tmp.path().join("missing.json"),
        LOCK,
        &out,
    ));
    assert_eq!(code, 4);
    assert!(!out.exists());
}

#[test]
#[cfg(unix)]
fn out_is_never_a_directory_a_product_reads_policy_from() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("c.json");
    std::fs::write(&cfg, FIXTURE).unwrap();
    // `plan` only: it decides before anything is written, so no file can reach /etc here.
    for out in [
        "/etc",
        "/etc/claude-code",
        "/tmp/../etc/pinlog",
        "/Library/Application Support",
    ] {
        let e = plan(&args(Product::All, &cfg, LOCK, Path::new(out))).unwrap_err();
        assert_eq!(e.exit.code(), 2, "{out}");
        assert!(e.message.contains("never installs"), "{}", e.message);
    }
    // A link to /etc is followed.
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink("/etc", &link).unwrap();
    let e = plan(&args(Product::All, &cfg, LOCK, &link.join("x"))).unwrap_err();
    assert_eq!(e.exit.code(), 2);
}

#[test]
fn output_is_deterministic_whatever_the_order_and_layout_of_the_input() {
    let a = run(Product::All, FIXTURE, LOCK);
    let b = run(Product::All, FIXTURE, LOCK);
    // The same servers listed in another order, on one line.
    let v: Value = serde_json::from_str(FIXTURE).unwrap();
    let mut reordered = String::from(r#"{"mcpServers":{"#);
    let servers = v["mcpServers"].as_object().unwrap();
    let mut names: Vec<&String> = servers.keys().collect();
    names.reverse();
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            reordered.push(',');
        }
        reordered.push_str(&serde_json::to_string(n).unwrap());
        reordered.push(':');
        reordered.push_str(&serde_json::to_string(&servers[*n]).unwrap());
    }
    reordered.push_str("}}");
    let c = run(Product::All, &reordered, LOCK);
    assert_eq!((a.code, b.code, c.code), (0, 0, 0));
    for f in files_under(&a.out) {
        let x = std::fs::read(a.out.join(&f)).unwrap();
        assert_eq!(x, std::fs::read(b.out.join(&f)).unwrap(), "{f}");
        assert_eq!(x, std::fs::read(c.out.join(&f)).unwrap(), "{f}");
        assert_eq!(x.last(), Some(&b'\n'), "{f} ends with a line feed");
    }
}

#[test]
fn two_servers_with_one_command_line_give_one_allowlist_entry() {
    let cfg = format!(r#"{{"mcpServers": {{"a": {0}, "b": {0}}}}}"#, good());
    let r = run(Product::All, &cfg, LOCK);
    assert_eq!(r.code, 0);
    for f in [
        "claude-code/managed-settings.json",
        "copilot/managed-settings.json",
    ] {
        let s = read_json(&r.out.join(f));
        assert_eq!(server_commands(&s["allowedMcpServers"]).len(), 1, "{f}");
    }
    // Codex keys its allowlist by name: both names are there.
    let text = std::fs::read_to_string(r.out.join("codex/requirements.toml")).unwrap();
    let doc: toml_edit::DocumentMut = text.parse().unwrap();
    assert_eq!(doc["mcp_servers"].as_table().unwrap().len(), 2);
}

#[test]
fn an_empty_configuration_allows_nothing() {
    let r = run(Product::All, r#"{"mcpServers": {}}"#, LOCK);
    assert_eq!(r.code, 0);
    // Documented: an empty allowedMcpServers array blocks every server (Claude Code, Copilot).
    for f in [
        "claude-code/managed-settings.json",
        "copilot/managed-settings.json",
    ] {
        let s = read_json(&r.out.join(f));
        assert_eq!(s["allowedMcpServers"], serde_json::json!([]), "{f}");
    }
    assert_eq!(
        read_json(&r.out.join("claude-code/managed-mcp.json")),
        serde_json::json!({"mcpServers": {}})
    );
    // Documented: an empty `mcp_servers` table denies every configured MCP server (Codex).
    let text = std::fs::read_to_string(r.out.join("codex/requirements.toml")).unwrap();
    let doc: toml_edit::DocumentMut = text.parse().unwrap();
    assert!(doc["mcp_servers"].as_table().unwrap().is_empty());
}

#[test]
#[cfg(unix)]
fn files_are_readable_by_everyone() {
    use std::os::unix::fs::PermissionsExt;
    let r = run(Product::All, FIXTURE, LOCK);
    for f in files_under(&r.out) {
        let mode = std::fs::metadata(r.out.join(&f))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o644, "{f}");
    }
}
