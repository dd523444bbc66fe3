//! `pinlog wrap`, `unwrap`, `policy` and `lookup` end to end, through the binary, on a fake home
//! whose configurations (JSON, JSONC and TOML, pretty and minified) hold secrets in `env`, in
//! headers, in arguments and in unrelated top-level keys: none of them may appear in anything the
//! commands print. Every secret contains `s3cr3t`, so one search finds any of them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pinlog_testkit::output::text;
use pinlog_testkit::repo::installed;
use serde_json::{json, Value as J};

const MARK: &str = "s3cr3t";
const PINLOG: &str = "/opt/pinlog/bin/pinlog";

const DESKTOP: &str = ".config/Claude/claude_desktop_config.json";
const DESKTOP_TEXT: &str = r#"{
  "globalShortcut": "s3cr3t-top-desktop",
  "mcpServers": {
    "weather": {
      "command": "node",
      "args": ["weather.js"],
      "env": {"WEATHER_TOKEN": "s3cr3t-env-desktop"}
    },
    "remote": {
      "url": "https://mcp.example/mcp",
      "headers": {"Authorization": "Bearer s3cr3t-hdr-desktop"}
    }
  }
}
"#;

const CURSOR: &str = ".cursor/mcp.json";
const CURSOR_TEXT: &str = r#"{"apiKey":"s3cr3t-top-cursor","mcpServers":{"db":{"command":"npx","args":["-y","@modelcontextprotocol/server-postgres@0.6.2","postgresql://me:s3cr3t-url-cursor@localhost/db"],"env":{"PGPASSWORD":"s3cr3t-env-cursor"}},"gh":{"command":"docker","args":["run","-i","--rm","-e","GITHUB_TOKEN=s3cr3t-arg-cursor","ghcr.io/github/github-mcp-server@sha256:abc"]},"remote":{"url":"https://x.example/mcp","headers":{"X-Api-Key":"s3cr3t-hdr-cursor"}}}}"#;

const VSCODE: &str = ".config/Code/User/mcp.json";
const VSCODE_TEXT: &str = r#"// User MCP servers
{
  "inputs": [{"id": "key", "type": "promptString", "default": "s3cr3t-top-vscode"}],
  "servers": {
    "bridge": {
      "type": "stdio",
      "command": "npx",
      "args": ["mcp-remote@0.1.0", "https://mcp.example/sse", "--header", "Authorization: Bearer s3cr3t-arg-vscode"],
      "env": {"API_KEY": "s3cr3t-env-vscode"}, // the bridge's own key
    },
    "remote": {"type": "http", "url": "https://x.example/mcp", "headers": {"Authorization": "Bearer s3cr3t-hdr-vscode"}},
  },
}
"#;

const CODE: &str = ".claude.json";
const CODE_TEXT: &str = r#"{"oauthAccount":{"accessToken":"s3cr3t-top-code"},"mcpServers":{"time":{"command":"uvx","args":["mcp-server-time==2026.1.2","--api-key","s3cr3t-arg-code"],"env":{"TZ_TOKEN":"s3cr3t-env-code"}},"remote":{"type":"sse","url":"https://x.example/sse","headers":{"Cookie":"s3cr3t-hdr-code"}}},"projects":{"/home/me/project":{"mcpServers":{"files":{"command":"node","args":["files.js","--token=s3cr3t-arg2-code"],"env":{"KEY":"s3cr3t-env2-code"}}}}}}"#;

const CODEX: &str = ".codex/config.toml";
const CODEX_TEXT: &str = r#"# Codex
api_key = "s3cr3t-top-codex"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp@1.0.0", "https://docs.example/api?key=s3cr3t-url-codex"]
env = { DOCS_TOKEN = "s3cr3t-env-codex" }

[mcp_servers.remote]
url = "https://mcp.example/mcp"
http_headers = { Authorization = "Bearer s3cr3t-hdr-codex" }
"#;

const MINI_TOML: &str = "mini.toml";
const MINI_TOML_TEXT: &str = r#"token="s3cr3t-top-toml"
mcp_servers={a={command="node",args=["a.js"],env={A_SECRET="s3cr3t-env-toml"}},g={command="uvx",args=["--from","git+https://me:s3cr3t-git-toml@git.example/x.git","x"]},r={url="https://x.example",http_headers={Authorization="s3cr3t-hdr-toml"}}}"#;

const BROKEN: &str = "broken.json";
const BROKEN_TEXT: &str = r#"{"token":"s3cr3t-broken","mcpServers":{"a":{"command":"node","env":{"K":"s3cr3t-broken-env"}"#;

/// Every configuration of the fake home, relative to it.
const FILES: [(&str, &str); 7] = [
    (DESKTOP, DESKTOP_TEXT),
    (CURSOR, CURSOR_TEXT),
    (VSCODE, VSCODE_TEXT),
    (CODE, CODE_TEXT),
    (CODEX, CODEX_TEXT),
    (MINI_TOML, MINI_TOML_TEXT),
    (BROKEN, BROKEN_TEXT),
];

struct Home {
    tmp: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let h = Home {
            tmp: tempfile::tempdir().unwrap(),
        };
        for (rel, body) in FILES {
            let p = h.home().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
        h
    }

    fn home(&self) -> PathBuf {
        self.tmp.path().join("home")
    }

    fn data(&self) -> PathBuf {
        self.tmp.path().join("data")
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.home().join(rel)).unwrap()
    }

    /// `pinlog ARGS` with this home, run from it; both outputs checked for secrets.
    fn pinlog(&self, args: &[&str]) -> (Output, String) {
        let o = self.command(args).output().unwrap();
        let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
        for (what, s) in [("stdout", &stdout), ("stderr", &stderr)] {
            assert!(
                !s.contains(MARK),
                "a secret in the {what} of {args:?}:\n{s}"
            );
            assert!(
                !s.contains('\u{1b}'),
                "a raw control in the {what} of {args:?}"
            );
        }
        (o, stdout)
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_pinlog"));
        c.args(args)
            .current_dir(self.home())
            .env("HOME", self.home())
            .env("PINLOG_HOME", self.data());
        for var in [
            "XDG_CONFIG_HOME",
            "CODEX_HOME",
            "CLAUDE_CONFIG_DIR",
            "APPDATA",
        ] {
            c.env_remove(var);
        }
        c
    }

    fn snapshot(&self) -> Vec<String> {
        FILES.iter().map(|(rel, _)| self.read(rel)).collect()
    }
}

#[test]
fn no_secret_of_a_configuration_is_printed_by_wrap_unwrap_policy_or_lookup() {
    let h = Home::new();
    let before = h.snapshot();

    // A dry run: each changed server's command line, before and after, its secrets masked.
    let (o, out) = h.pinlog(&["wrap", "--dry-run", "--pinlog", PINLOG]);
    assert_eq!(o.status.code(), Some(0), "{out}");
    for line in [
        "  would wrap        weather\n                    - node weather.js\n                    \
         + /opt/pinlog/bin/pinlog proxy --name weather node weather.js\n  remote            \
         remote (left alone)\n"
            .to_string(),
        format!(
            "- docker run -i --rm -e 'GITHUB_TOKEN=<masked>' \
             ghcr.io/github/github-mcp-server@sha256:abc\n{:20}+ {PINLOG} proxy --name gh \
             docker run -i --rm -e 'GITHUB_TOKEN=<masked>' \
             ghcr.io/github/github-mcp-server@sha256:abc\n",
            ""
        ),
        "- npx -y @modelcontextprotocol/server-postgres@0.6.2 'postgresql://me:<masked>@localhost/db'\n".into(),
        "- npx mcp-remote@0.1.0 https://mcp.example/sse --header 'Authorization: <masked>'\n".into(),
        "- uvx 'mcp-server-time==2026.1.2' --api-key '<masked>'\n".into(),
        "would wrap        files [project /home/me/project]\n".into(),
        "- node files.js '--token=<masked>'\n".into(),
        "- npx -y docs-mcp@1.0.0 'https://docs.example/api?key=<masked>'\n".into(),
        "would wrap 7 servers in 5 files; 5 remote servers left alone".into(),
        "Dry run: nothing was written.".into(),
    ] {
        assert!(out.contains(&line), "{line:?} not in\n{out}");
    }
    // Nothing else of the files: no member name the servers do not use.
    for other in [
        "globalShortcut",
        "apiKey",
        "inputs",
        "oauthAccount",
        "api_key",
        "env",
    ] {
        assert!(!out.contains(other), "{other:?} in\n{out}");
    }
    assert_eq!(h.snapshot(), before);
    assert!(!h.data().exists(), "a dry run backs nothing up");

    // A file given by name, minified TOML, and one that does not parse.
    let (o, out) = h.pinlog(&[
        "wrap",
        "--dry-run",
        "--pinlog",
        PINLOG,
        "--config",
        MINI_TOML,
        "--config",
        BROKEN,
    ]);
    assert_eq!(o.status.code(), Some(4), "{out}");
    assert!(
        out.contains(&format!(
            "  would wrap        a\n{:20}- node a.js\n{:20}+ {PINLOG} proxy --name a node a.js\n",
            "", ""
        )),
        "{out}"
    );
    assert!(
        out.contains(
            "  unpinned package  g: uvx runs \"git+https://me:<masked>@git.example/x.git\" \
             without an exact version"
        ),
        "{out}"
    );
    assert!(
        out.contains("error: does not parse: line 1, column"),
        "{out}"
    );
    assert_eq!(h.snapshot(), before);

    // The real thing, twice, then unwrap (dry run first): every file back to its bytes.
    for args in [
        &["wrap", "--pinlog", PINLOG][..],
        &["wrap", "--pinlog", PINLOG, "--config", MINI_TOML],
        &["wrap", "--pinlog", PINLOG],
    ] {
        let (o, out) = h.pinlog(args);
        assert_eq!(o.status.code(), Some(0), "{out}");
    }
    let wrapped = h.snapshot();
    assert_ne!(wrapped, before);
    assert!(h.read(CURSOR).contains("s3cr3t-env-cursor"), "env is kept");
    let (o, out) = h.pinlog(&[
        "unwrap",
        "--dry-run",
        "--config",
        MINI_TOML,
        "--client",
        "codex",
    ]);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains(&format!(
            "  would unwrap      docs\n{:20}- {PINLOG} proxy --name docs npx -y docs-mcp@1.0.0 \
             'https://docs.example/api?key=<masked>'\n",
            ""
        )),
        "{out}"
    );
    assert_eq!(h.snapshot(), wrapped);
    let (o, out) = h.pinlog(&["unwrap", "--config", MINI_TOML]);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let (o, out) = h.pinlog(&["unwrap"]);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert_eq!(h.snapshot(), before);

    // policy: a configuration wrapped with the team lock, its env a literal secret.
    let lock = h.home().join("mcp.lock.json");
    std::fs::write(&lock, "{}").unwrap();
    let lock = lock.to_str().unwrap();
    let approved = h.home().join("approved.json");
    std::fs::write(
        &approved,
        json!({"note": "s3cr3t-top-policy", "mcpServers": {
            "db": {"command": "npx", "args": ["-y", "db-mcp@1.0.0"],
                   "env": {"DB_PASSWORD": "s3cr3t-env-policy"}}}})
        .to_string(),
    )
    .unwrap();
    let (o, out) = h.pinlog(&["wrap", "--config", "approved.json", "--lock", lock]);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let (o, out) = h.pinlog(&[
        "policy",
        "all",
        "--config",
        "approved.json",
        "--lock",
        lock,
        "--out",
        "policy",
    ]);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("env \"DB_PASSWORD\" written as given"));
    // A refused server: its reason names the option, not the value glued to it.
    let mut v: J = serde_json::from_str(&std::fs::read_to_string(&approved).unwrap()).unwrap();
    v["mcpServers"]["db"]["args"]
        .as_array_mut()
        .unwrap()
        .insert(1, json!("--api-key=s3cr3t-arg-policy"));
    std::fs::write(&approved, v.to_string()).unwrap();
    let (o, _) = h.pinlog(&[
        "policy",
        "all",
        "--config",
        "approved.json",
        "--lock",
        lock,
        "--out",
        "policy2",
    ]);
    assert_eq!(o.status.code(), Some(4));
    assert!(
        text(&o.stderr).contains("server \"db\" gives pinlog proxy \"--api-key\" (args[1])"),
        "{}",
        text(&o.stderr)
    );
    assert!(!h.home().join("policy2").exists());

    // lookup's instructions for each client, asked with this home.
    let mut c = Command::new(
        std::env::var("PINLOG_PYTHON").unwrap_or_else(|_| installed(".ci/venv/bin/python")),
    );
    c.arg(installed("tests/fixtures/lookup_client.py"))
        .env("HOME", h.home())
        .env("PINLOG_HOME", h.data());
    for client in ["claude-desktop", "claude-code", "cursor", "vscode", "codex"] {
        c.arg("--call")
            .arg("pinlog_how_to_protect")
            .arg(json!({ "client": client }).to_string());
    }
    c.args([
        "--call",
        "pinlog_my_servers",
        "{}",
        "--",
        env!("CARGO_BIN_EXE_pinlog"),
        "lookup",
    ]);
    let o = c.output().unwrap();
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    let v: J = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    assert_eq!(v["ok"], true, "{v}\n{stderr}");
    assert_eq!(v["calls"].as_array().unwrap().len(), 6, "{v}");
    assert!(
        !stdout.contains(MARK) && !stderr.contains(MARK),
        "{stdout}\n{stderr}"
    );
}

/// The `program` member each backup index records, removed: backups as a pinlog that did not
/// record it left them.
fn forget_programs(data: &Path) {
    for run in std::fs::read_dir(data.join("backups")).unwrap() {
        let index = run.unwrap().path().join("index.json");
        let mut v: J = serde_json::from_str(&std::fs::read_to_string(&index).unwrap()).unwrap();
        for f in v["files"].as_array_mut().unwrap() {
            f.as_object_mut().unwrap().remove("program");
        }
        std::fs::write(&index, v.to_string()).unwrap();
    }
}

#[test]
fn a_server_wrapped_with_pinlog_path_is_known_by_later_wraps_and_unwrap() {
    const OTHER: &str = "/opt/tools/pl";
    let h = Home::new();
    let (o, out) = h.pinlog(&[
        "wrap", "--pinlog", OTHER, "--client", "cursor", "--client", "codex",
    ]);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let wrapped = h.snapshot();
    assert!(h.read(CURSOR).contains(&format!(
        r#""command":"{OTHER}","args":["proxy","--name","db","npx""#
    )));

    // A later wrap, with this binary's own path or yet another one, sees it wrapped.
    for args in [
        &["wrap", "--client", "cursor", "--client", "codex"][..],
        &[
            "wrap", "--pinlog", PINLOG, "--client", "cursor", "--client", "codex",
        ],
    ] {
        let (o, out) = h.pinlog(args);
        assert_eq!(o.status.code(), Some(0), "{out}");
        assert!(out.contains("  already wrapped   db\n"), "{out}");
        assert!(out.contains("  already wrapped   docs\n"), "{out}");
        assert!(
            out.contains("wrapped 0 servers in 0 files; 3 already wrapped"),
            "{out}"
        );
        assert_eq!(h.snapshot(), wrapped);
    }

    // Edited since: unwrap cannot restore the backup and takes the proxy off each server.
    let edit = |h: &Home| {
        for (rel, from, to) in [
            (CURSOR, "@localhost/db", "@localhost/db2"),
            (CODEX, "docs-mcp@1.0.0", "docs-mcp@1.0.1"),
        ] {
            let body = h.read(rel).replace(from, to);
            std::fs::write(h.home().join(rel), body).unwrap();
        }
    };
    let unwrapped = |h: &Home| {
        assert!(
            h.read(CURSOR)
                .contains(r#""db":{"command":"npx","args":["-y","#),
            "{}",
            h.read(CURSOR)
        );
        assert!(
            h.read(CODEX)
                .contains("command = \"npx\"\nargs = [\"-y\", \"docs-mcp@1.0.1\","),
            "{}",
            h.read(CODEX)
        );
        assert!(!h.read(CURSOR).contains(OTHER) && !h.read(CODEX).contains(OTHER));
    };
    edit(&h);
    let (o, out) = h.pinlog(&["unwrap", "--client", "cursor", "--client", "codex"]);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("  unwrapped         db\n"), "{out}");
    unwrapped(&h);

    // Backups that do not record the command: unwrap --pinlog names it.
    let h = Home::new();
    h.pinlog(&[
        "wrap", "--pinlog", OTHER, "--client", "cursor", "--client", "codex",
    ]);
    forget_programs(&h.data());
    edit(&h);
    let (o, out) = h.pinlog(&["unwrap", "--client", "cursor", "--client", "codex"]);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("  not wrapped       db\n"), "{out}");
    let (o, out) = h.pinlog(&[
        "unwrap", "--pinlog", OTHER, "--client", "cursor", "--client", "codex",
    ]);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("  unwrapped         docs\n"), "{out}");
    unwrapped(&h);
}

/// The command line of wrap, unwrap and policy as the binary reads it: each flag reaches the
/// command, and a value outside a list is refused as a usage error before anything is read.
#[test]
fn the_command_lines_of_wrap_unwrap_and_policy() {
    let h = Home::new();
    std::fs::write(h.home().join("x.json"), r#"{"mcpServers": {}}"#).unwrap();
    std::fs::write(h.home().join("mcp.lock.json"), "{}").unwrap();
    let (o, out) = h.pinlog(&[
        "wrap",
        "--client",
        "claude-code",
        "--client",
        "codex",
        "--config",
        "x.json",
        "--project",
        "--lock",
        "mcp.lock.json",
        "--dry-run",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    for named in ["Claude Code", "Codex", "x.json", ".mcp.json"] {
        assert!(out.contains(named), "{named} missing from:\n{out}");
    }
    for other in ["Claude Desktop", "Cursor", "VS Code"] {
        assert!(!out.contains(other), "{other} in:\n{out}");
    }
    let before = h.snapshot();

    let (o, out) = h.pinlog(&["unwrap", "--client", "vscode", "--dry-run"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(out.contains("VS Code") && !out.contains("Cursor"), "{out}");

    let (o, _) = h.pinlog(&["wrap", "--client", "notepad"]);
    assert_eq!(o.status.code(), Some(2));
    // A lockfile that is not there is a usage error, before anything is read.
    let (o, _) = h.pinlog(&["wrap", "--lock", "/nonexistent/mcp.lock.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).starts_with("error: the lockfile"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(h.snapshot(), before, "a refused wrap changed a file");

    // Every product name is taken (the configuration is then missing: exit 4), Cursor documents
    // no policy file (exit 2), and an unknown product or a missing --lock is a usage error.
    for product in ["claude-code", "copilot", "codex", "all"] {
        let (o, _) = h.pinlog(&[
            "policy",
            product,
            "--config",
            "missing.json",
            "--lock",
            "/l",
            "--out",
            "o",
        ]);
        assert_eq!(o.status.code(), Some(4), "{product}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains("cannot read the configuration"));
    }
    let (o, _) = h.pinlog(&[
        "policy", "cursor", "--config", "x.json", "--lock", "/l", "--out", "o",
    ]);
    assert_eq!(o.status.code(), Some(2));
    for args in [
        &[
            "policy", "windsurf", "--config", "a", "--lock", "l", "--out", "o",
        ][..],
        &["policy", "all", "--config", "a", "--out", "o"][..],
    ] {
        let (o, _) = h.pinlog(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
    assert!(!h.home().join("o").exists());
}
