//! `pinlog wrap` / `pinlog unwrap` on fixture homes (tests/fixtures/wrap): a home with a
//! configuration for every client, and one with files that do not parse. Every test works on a
//! copy under a temporary directory, never on the real home.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use pinlog_clients::policy::read_allowed;
use pinlog_clients::wrap::clients::{Client, Env, Os};
use pinlog_clients::wrap::command::Proxy;
use pinlog_clients::wrap::{self, Op, Options, Outcome, Report, Status};
use pinlog_clients::wrapped::{is_pinlog_name, WrappedCommand};
use serde_json::{json, Value};

const PROGRAM: &str = "/opt/pinlog/bin/pinlog";

const DESKTOP: &str = ".config/Claude/claude_desktop_config.json";
const CODE: &str = ".claude.json";
const CURSOR: &str = ".cursor/mcp.json";
const VSCODE: &str = ".config/Code/User/mcp.json";
const GEMINI: &str = ".gemini/settings.json";
const WINDSURF: &str = ".codeium/windsurf/mcp_config.json";
const CLINE: &str =
    ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json";
const CODEX: &str = ".codex/config.toml";
const PROJECT: &str = "proj/.mcp.json";

struct Home {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    data: PathBuf,
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            fs::copy(e.path(), dest).unwrap();
        }
    }
}

fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/wrap")
        .join(name)
}

fn home(name: &str) -> Home {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    copy_tree(&fixture_dir(name), &home);
    let data = tmp.path().join("data");
    Home {
        _tmp: tmp,
        home,
        data,
    }
}

impl Home {
    fn env(&self) -> Env {
        let mut env = Env::with_home(&self.home);
        env.cwd = self.home.join("proj");
        env
    }

    fn opts(&self) -> Options {
        Options {
            clients: Vec::new(),
            configs: Vec::new(),
            project: false,
            proxy: Proxy {
                program: PROGRAM.into(),
                lock: None,
                others: Vec::new(),
            },
            dry_run: false,
            data_dir: self.data.clone(),
        }
    }

    fn wrap(&self, opts: &Options) -> Report {
        wrap::run(Op::Wrap, opts, &self.env())
    }

    fn unwrap(&self, opts: &Options) -> Report {
        wrap::run(Op::Unwrap, opts, &self.env())
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.home.join(rel)
    }

    fn read(&self, rel: &str) -> Vec<u8> {
        fs::read(self.path(rel)).unwrap()
    }

    fn json(&self, rel: &str) -> Value {
        serde_json::from_slice(&self.read(rel)).unwrap()
    }

    fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        snapshot(&self.home)
    }

    fn backup_runs(&self) -> usize {
        fs::read_dir(self.data.join("backups")).map_or(0, |d| d.count())
    }
}

fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    fs::read(&p).unwrap(),
                );
            }
        }
    }
    out
}

fn fixture(name: &str, rel: &str) -> Vec<u8> {
    fs::read(fixture_dir(name).join(rel)).unwrap()
}

/// The outcome of server `name` in the report of the file ending in `rel`.
fn outcome(report: &Report, rel: &str, name: &str) -> Outcome {
    let f = report
        .files
        .iter()
        .find(|f| f.target.path.ends_with(rel))
        .unwrap_or_else(|| panic!("no report for {rel}"));
    f.servers
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no server {name} in {rel}"))
        .outcome
        .clone()
}

fn status(report: &Report, rel: &str) -> Status {
    report
        .files
        .iter()
        .find(|f| f.target.path.ends_with(rel))
        .unwrap_or_else(|| panic!("no report for {rel}"))
        .status
        .clone()
}

fn wrapped(name: &str, inner: &[&str]) -> Value {
    let mut args = vec![json!("proxy"), json!("--name"), json!(name)];
    args.extend(inner.iter().map(|a| json!(a)));
    Value::Array(args)
}

const ALL_FILES: [&str; 8] = [
    DESKTOP, CODE, CURSOR, VSCODE, GEMINI, WINDSURF, CLINE, CODEX,
];

#[test]
fn every_client_wraps_and_unwraps_to_the_same_bytes() {
    let h = home("home");
    let before = h.snapshot();
    let mut opts = h.opts();
    opts.project = true;
    let report = h.wrap(&opts);
    assert_eq!(report.exit_code(), 0, "{}", report.render());
    assert!(report.missing.is_empty(), "{:?}", report.missing);
    for rel in ALL_FILES.iter().chain([&PROJECT]) {
        assert!(
            matches!(status(&report, rel), Status::Changed { .. }),
            "{rel}: {:?}",
            status(&report, rel)
        );
        assert_ne!(h.read(rel), before[Path::new(rel)], "{rel} did not change");
    }

    // What each client's servers became.
    let desktop = h.json(DESKTOP);
    let w = &desktop["mcpServers"]["weather"];
    assert_eq!(w["command"], PROGRAM);
    assert_eq!(
        w["args"],
        wrapped(
            "weather",
            &["node", "/srv/weather/index.js", "--units", "metric"]
        )
    );
    assert_eq!(w["env"], json!({"WEATHER_TOKEN": "secret-token"}));

    let code = h.json(CODE);
    assert_eq!(
        code["mcpServers"]["filesystem"]["args"],
        wrapped(
            "filesystem",
            &[
                "npx",
                "-y",
                "@modelcontextprotocol/server-filesystem@2026.1.14",
                "/home/user/notes"
            ]
        )
    );
    assert_eq!(code["mcpServers"]["filesystem"]["type"], "stdio");
    // A server with no args gets them.
    assert_eq!(
        code["mcpServers"]["local-script"]["args"],
        wrapped("local-script", &["/home/user/bin/mcp-script"])
    );
    // Per-project servers too.
    assert_eq!(
        code["projects"]["/home/user/proj"]["mcpServers"]["git"]["args"],
        wrapped(
            "git",
            &["uvx", "mcp-server-git", "--repository", "/home/user/proj"]
        )
    );
    assert_eq!(
        code["mcpServers"]["linear"],
        json!({"type": "http", "url": "https://mcp.linear.app/mcp"})
    );

    let cursor = h.json(CURSOR);
    assert_eq!(cursor["mcpServers"]["github"]["command"], PROGRAM);
    assert_eq!(
        cursor["mcpServers"]["pinned"]["command"], "pinlog",
        "an already wrapped server is left as it was"
    );

    let gemini = h.json(GEMINI);
    assert_eq!(
        gemini["mcpServers"]["sqlite"]["args"],
        wrapped(
            "sqlite",
            &["uvx", "mcp-server-sqlite", "--db-path", "/tmp/t.db"]
        )
    );
    assert_eq!(gemini["mcpServers"]["sqlite"]["cwd"], "./server-directory");

    let windsurf = h.json(WINDSURF);
    assert_eq!(
        windsurf["mcpServers"]["sequential-thinking"]["command"],
        PROGRAM
    );
    let cline = h.json(CLINE);
    assert_eq!(
        cline["mcpServers"]["brave-search"]["args"],
        wrapped(
            "brave-search",
            &["npx", "-y", "@brave/brave-search-mcp-server"]
        )
    );
    assert_eq!(cline["mcpServers"]["brave-search"]["disabled"], false);

    let project = h.json(PROJECT);
    assert_eq!(
        project["mcpServers"]["project-db"]["args"],
        wrapped("project-db", &["python3", "-m", "project_db_mcp"])
    );

    let codex: toml_edit::DocumentMut = String::from_utf8(h.read(CODEX)).unwrap().parse().unwrap();
    let docs = &codex["mcp_servers"]["docs"];
    assert_eq!(docs["command"].as_str(), Some(PROGRAM));
    let args: Vec<&str> = docs["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        args,
        ["proxy", "--name", "docs", "npx", "-y", "@acme/docs-mcp"]
    );
    let plain: Vec<&str> = codex["mcp_servers"]["plain"]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        plain,
        ["proxy", "--name", "plain", "/usr/local/bin/plain-mcp"]
    );

    // Unwrap restores every byte of every file.
    let report = h.unwrap(&opts);
    assert_eq!(report.exit_code(), 0, "{}", report.render());
    assert_eq!(outcome(&report, DESKTOP, "weather"), Outcome::Unwrapped);
    // Wrapped before pinlog wrap came: the exact bytes keep it so.
    assert!(matches!(
        outcome(&report, CURSOR, "pinned"),
        Outcome::Skipped(_)
    ));
    let after = h.snapshot();
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &before {
        assert!(
            after[path] == *bytes,
            "{} differs after unwrap:\n{}",
            path.display(),
            String::from_utf8_lossy(&after[path])
        );
    }
    assert!(report
        .render()
        .contains("the exact bytes come back from the backup at"));
}

#[test]
fn wrapping_twice_changes_nothing() {
    let h = home("home");
    let mut opts = h.opts();
    opts.project = true;
    assert_eq!(h.wrap(&opts).exit_code(), 0);
    let once = h.snapshot();
    let runs = h.backup_runs();
    let report = h.wrap(&opts);
    assert_eq!(report.exit_code(), 0);
    assert_eq!(h.snapshot(), once);
    assert_eq!(h.backup_runs(), runs, "no new backup when nothing changes");
    for f in &report.files {
        assert_eq!(f.status, Status::Unchanged, "{}", f.target.path.display());
        for s in &f.servers {
            assert!(
                matches!(
                    s.outcome,
                    Outcome::AlreadyWrapped | Outcome::Remote | Outcome::Skipped(_)
                ),
                "{}: {:?}",
                s.name,
                s.outcome
            );
        }
    }
    assert!(report.render().contains("wrapped 0 servers in 0 files"));
}

/// Every byte outside the `command` and `args` values of the wrapped servers is kept: the text
/// before the first change and after the last is identical, comments survive, and unrelated
/// keys read the same.
#[test]
fn unrelated_keys_comments_and_formatting_are_kept() {
    let h = home("home");
    let before = h.snapshot();
    let report = h.wrap(&h.opts());
    assert_eq!(report.exit_code(), 0, "{}", report.render());

    // Strict JSON files: everything but command/args of wrapped servers reads the same.
    let strip = |mut v: Value, servers: &[&str]| {
        for s in servers {
            let entry = v["mcpServers"][s].as_object_mut().unwrap();
            entry.remove("command");
            entry.remove("args");
        }
        v
    };
    let original =
        |rel: &str| -> Value { serde_json::from_slice(&before[Path::new(rel)]).unwrap() };
    assert_eq!(
        strip(h.json(DESKTOP), &["weather", "fetch", "time"]),
        strip(original(DESKTOP), &["weather", "fetch", "time"])
    );
    assert_eq!(
        strip(h.json(GEMINI), &["sqlite"]),
        strip(original(GEMINI), &["sqlite"])
    );

    // Layout kept: the Claude Desktop file keeps its 4-space, one-item-per-line args.
    let desktop = String::from_utf8(h.read(DESKTOP)).unwrap();
    assert!(desktop.contains(
        "            \"args\": [\n                \"proxy\",\n                \"--name\",\n                \"weather\",\n                \"node\",\n                \"/srv/weather/index.js\","
    ), "{desktop}");
    assert!(
        desktop.contains("\"preferences\": {\"theme\": \"dark\", \"numbers\": [1, 2.50, -3e2]}")
    );
    assert!(desktop.contains(
        "\"args\": [\"proxy\", \"--name\", \"fetch\", \"npx\", \"-y\", \"@modelcontextprotocol/server-fetch\"]"
    ));
    // The Claude Code file: the member added where command is, with its indentation.
    let code = String::from_utf8(h.read(CODE)).unwrap();
    assert!(code.contains(&format!(
        "      \"command\": \"{PROGRAM}\",\n      \"args\": [\"proxy\", \"--name\", \"local-script\", \"/home/user/bin/mcp-script\"]\n    }}"
    )), "{code}");
    assert!(code.starts_with("{\n  \"numStartups\": 42,\n"));
    assert!(code.ends_with("  \"userID\": \"0123456789abcdef\"\n}\n"));
    // The compact Cursor file stays compact.
    let cursor = String::from_utf8(h.read(CURSOR)).unwrap();
    assert!(cursor.contains(&format!(
        "\"github\":{{\"command\":\"{PROGRAM}\",\"args\":[\"proxy\",\"--name\",\"github\",\"docker\",\"run\","
    )), "{cursor}");
    assert!(!cursor.contains('\n'));

    // JSONC comments and trailing commas survive in VS Code's file.
    let vscode = String::from_utf8(h.read(VSCODE)).unwrap();
    for kept in [
        "// VS Code user MCP configuration (JSONC).\n",
        "\"description\": \"API key\", // shown in the prompt\n",
        "/* A local server, written the VS Code way. */",
        "// unpinned on purpose\n",
        "\"env\": { \"KEY\": \"${input:api-key}\" },\n",
        "\t\t\t\"url\": \"https://api.githubcopilot.com/mcp/\",\n",
    ] {
        assert!(vscode.contains(kept), "lost {kept:?}:\n{vscode}");
    }
    assert!(vscode.contains(
        "\"args\": [\"proxy\", \"--name\", \"playwright\", \"npx\", \"@playwright/mcp@latest\"], // unpinned on purpose"
    ));
    assert!(vscode.contains(
        "\t\t\t\"args\": [\n\t\t\t\t\"proxy\", \"--name\", \"memory\", \"docker\", \"run\", \"-i\", \"--rm\",\n"
    ), "{vscode}");

    // TOML comments and formatting survive in Codex's file.
    let codex = String::from_utf8(h.read(CODEX)).unwrap();
    for kept in [
        "# Codex configuration\n",
        "model = \"gpt-5-codex\"   # the default model\n",
        "# Documentation server, run from npm.\n[mcp_servers.docs]\n",
        "\"-y\",             # no prompt\n",
        "\"@acme/docs-mcp\", # unpinned\n]\n",
        "[mcp_servers.docs.env]\nDOCS_TOKEN = \"t0ken\"\n",
        "# A remote one: left alone.\n[mcp_servers.figma]\nurl = \"https://mcp.figma.com/mcp\"\n",
        "[profiles.fast]\nmodel = \"gpt-5-mini\"\n",
        "'C:\\bookmarks'",
    ] {
        assert!(codex.contains(kept), "lost {kept:?}:\n{codex}");
    }
    assert!(
        codex.contains(&format!("command = \"{PROGRAM}\"       # the runner\n")),
        "{codex}"
    );
    assert!(codex.contains(
        "args = [\n    \"proxy\",\n    \"--name\",\n    \"docs\",\n    \"npx\",\n    \"-y\",             # no prompt\n"
    ), "{codex}");
    assert!(codex.contains(
        "args = [\"proxy\", \"--name\", \"bookmarks\", 'uv', \"--directory\", 'C:\\bookmarks', \"run\", \"bookmarks.py\"]"
    ), "{codex}");
}

#[test]
fn remote_servers_are_left_alone_and_said_so() {
    let h = home("home");
    let before = h.snapshot();
    let report = h.wrap(&h.opts());
    for (rel, name) in [
        (CODE, "linear"),
        (CURSOR, "sse"),
        (VSCODE, "github"),
        (GEMINI, "github"),
        (WINDSURF, "remote-docs"),
        (CLINE, "hosted"),
        (CODEX, "figma"),
    ] {
        assert_eq!(outcome(&report, rel, name), Outcome::Remote, "{rel} {name}");
    }
    let original: Value = serde_json::from_slice(&before[Path::new(GEMINI)]).unwrap();
    assert_eq!(
        h.json(GEMINI)["mcpServers"]["github"],
        original["mcpServers"]["github"]
    );
    let text = report.render();
    assert!(
        text.contains("remote            linear (left alone)"),
        "{text}"
    );
    assert!(text.contains("7 remote servers left alone"), "{text}");
}

#[test]
fn servers_running_an_unpinned_package_are_flagged() {
    let h = home("home");
    let report = h.wrap(&h.opts());
    let flagged = |rel: &str, name: &str| {
        report
            .files
            .iter()
            .find(|f| f.target.path.ends_with(rel))
            .unwrap()
            .servers
            .iter()
            .find(|s| s.name == name)
            .unwrap()
            .unpinned
            .clone()
    };
    for (rel, name) in [
        (DESKTOP, "fetch"),
        (CODE, "git"),
        (CURSOR, "github"),
        (VSCODE, "playwright"),
        (GEMINI, "sqlite"),
        (CLINE, "brave-search"),
        (CODEX, "docs"),
    ] {
        assert!(flagged(rel, name).is_some(), "{rel} {name} not flagged");
    }
    for (rel, name) in [
        (DESKTOP, "weather"),
        (DESKTOP, "time"),
        (CODE, "filesystem"),
        (VSCODE, "memory"),
        (WINDSURF, "sequential-thinking"),
        (CODEX, "bookmarks"),
    ] {
        assert_eq!(flagged(rel, name), None, "{rel} {name} flagged");
    }
    let text = report.render();
    assert!(
        text.contains(
            "unpinned package  fetch: npx runs \"@modelcontextprotocol/server-fetch\" without an exact version"
        ),
        "{text}"
    );
    assert!(text
        .contains("docker runs the image \"ghcr.io/github/github-mcp-server\" without a digest"));
    // Still wrapped: the flag is a warning.
    assert_eq!(outcome(&report, DESKTOP, "fetch"), Outcome::Wrapped);
}

#[test]
fn a_file_that_does_not_parse_is_left_untouched_and_the_others_are_processed() {
    let h = home("broken");
    let before = h.snapshot();
    let report = h.wrap(&h.opts());
    assert_eq!(report.exit_code(), 4, "{}", report.render());
    for rel in [CURSOR, CODEX, GEMINI] {
        assert!(
            matches!(status(&report, rel), Status::Failed(_)),
            "{rel}: {:?}",
            status(&report, rel)
        );
        assert_eq!(h.read(rel), before[Path::new(rel)], "{rel} was touched");
    }
    // The good file next to them was wrapped.
    assert!(matches!(status(&report, DESKTOP), Status::Changed { .. }));
    let text = report.render();
    assert!(
        text.contains("error: does not parse: line 2, column 1: more after the document"),
        "{text}"
    );
    assert!(
        text.contains("the member \"x\"") || text.contains("the server \"x\" appears twice"),
        "{text}"
    );
    assert!(text.contains("3 files left untouched (error)"), "{text}");
    // Backed up: only the file that changed.
    let runs = fs::read_dir(h.data.join("backups")).unwrap().count();
    assert_eq!(runs, 1);
    // unwrap is refused on them too, and restores the good one.
    let report = h.unwrap(&h.opts());
    assert_eq!(report.exit_code(), 4);
    assert_eq!(h.snapshot(), before);
}

#[test]
fn dry_run_shows_each_changed_server_and_writes_nothing() {
    let h = home("home");
    let before = h.snapshot();
    let mut opts = h.opts();
    opts.dry_run = true;
    opts.project = true;
    let report = h.wrap(&opts);
    assert_eq!(report.exit_code(), 0);
    assert_eq!(h.snapshot(), before);
    assert!(!h.data.exists(), "a dry run makes no backup");
    assert_eq!(status(&report, DESKTOP), Status::WouldChange);
    assert_eq!(outcome(&report, DESKTOP, "weather"), Outcome::Wrapped);
    let text = report.render();
    assert!(text.contains("would wrap"), "{text}");
    assert!(text.contains("Dry run: nothing was written."));
    // Each changed server's command line, before and after; nothing else of the file.
    let sqlite = report
        .files
        .iter()
        .find(|f| f.target.path.ends_with(GEMINI))
        .unwrap()
        .servers
        .iter()
        .find(|s| s.name == "sqlite")
        .unwrap()
        .change
        .clone()
        .unwrap();
    let argv = ["uvx", "mcp-server-sqlite", "--db-path", "/tmp/t.db"].map(String::from);
    assert_eq!(sqlite.before, argv);
    assert_eq!(sqlite.after[..4], [PROGRAM, "proxy", "--name", "sqlite"]);
    assert_eq!(sqlite.after[4..], argv);
    assert!(
        text.contains(&format!(
            "{:20}- uvx mcp-server-sqlite --db-path /tmp/t.db\n{:20}+ {PROGRAM} proxy --name \
             sqlite uvx mcp-server-sqlite --db-path /tmp/t.db\n",
            "", ""
        )),
        "{text}"
    );
    assert!(!text.contains("theme"), "only the servers: {text}");

    // unwrap --dry-run after a real wrap: nothing written either.
    opts.dry_run = false;
    h.wrap(&opts);
    let wrapped = h.snapshot();
    opts.dry_run = true;
    let report = h.unwrap(&opts);
    assert_eq!(h.snapshot(), wrapped);
    assert_eq!(outcome(&report, CODEX, "docs"), Outcome::Unwrapped);
    assert!(report.render().contains("would unwrap"));
}

#[test]
fn project_mcp_json_only_with_project() {
    let h = home("home");
    let report = h.wrap(&h.opts());
    assert!(!report
        .files
        .iter()
        .any(|f| f.target.path.ends_with(PROJECT)));
    assert_eq!(h.read(PROJECT), fixture("home", PROJECT));
    let mut opts = h.opts();
    opts.project = true;
    opts.clients = vec![Client::Cursor];
    let report = h.wrap(&opts);
    assert!(matches!(status(&report, PROJECT), Status::Changed { .. }));
    assert_eq!(
        h.json(PROJECT)["mcpServers"]["project-db"]["command"],
        PROGRAM
    );
    assert_eq!(
        report.files.len(),
        2,
        "cursor (already wrapped) and the project"
    );
}

#[test]
fn only_the_clients_named() {
    let h = home("home");
    let before = h.snapshot();
    let mut opts = h.opts();
    opts.clients = vec![Client::Codex, Client::Gemini];
    let report = h.wrap(&opts);
    assert_eq!(report.files.len(), 2);
    let after = h.snapshot();
    for (path, bytes) in &before {
        let touched = path.ends_with(CODEX) || path.ends_with(GEMINI);
        assert_eq!(after[path] != *bytes, touched, "{}", path.display());
    }
}

#[test]
fn unwrap_after_the_user_edited_the_file_removes_the_prefix() {
    let h = home("home");
    let opts = h.opts();
    h.wrap(&opts);
    // The user (or the client) changes an unrelated setting after wrap.
    let edited = String::from_utf8(h.read(GEMINI))
        .unwrap()
        .replace("\"Dracula\"", "\"GitHub\"");
    fs::write(h.path(GEMINI), &edited).unwrap();
    let codex = String::from_utf8(h.read(CODEX)).unwrap().replace(
        "approval_policy = \"on-request\"",
        "approval_policy = \"never\"",
    );
    fs::write(h.path(CODEX), &codex).unwrap();

    let report = h.unwrap(&opts);
    assert_eq!(report.exit_code(), 0, "{}", report.render());
    let expected = String::from_utf8(fixture("home", GEMINI))
        .unwrap()
        .replace("\"Dracula\"", "\"GitHub\"");
    assert_eq!(String::from_utf8(h.read(GEMINI)).unwrap(), expected);
    // A server wrap gave args to keeps an empty list: the same to every client.
    let expected = String::from_utf8(fixture("home", CODEX))
        .unwrap()
        .replace(
            "approval_policy = \"on-request\"",
            "approval_policy = \"never\"",
        )
        .replace(
            "command = \"/usr/local/bin/plain-mcp\"\n",
            "command = \"/usr/local/bin/plain-mcp\"\nargs = []\n",
        );
    assert_eq!(String::from_utf8(h.read(CODEX)).unwrap(), expected);
    let f = report
        .files
        .iter()
        .find(|f| f.target.path.ends_with(GEMINI))
        .unwrap();
    assert!(
        f.notes
            .iter()
            .any(|n| n.contains("changed since pinlog wrapped it")),
        "{:?}",
        f.notes
    );
    // Untouched files were restored from the backup.
    assert_eq!(h.read(DESKTOP), fixture("home", DESKTOP));
}

#[test]
fn unwrap_goes_back_through_several_wraps() {
    let h = home("home");
    let opts = h.opts();
    h.wrap(&opts);
    // A server added to the wrapped file, then wrapped by a second run.
    let added = String::from_utf8(h.read(DESKTOP)).unwrap().replace(
        "        \"fetch\": {",
        "        \"added\": {\"command\": \"node\", \"args\": [\"added.js\"]},\n        \"fetch\": {",
    );
    fs::write(h.path(DESKTOP), &added).unwrap();
    let report = h.wrap(&opts);
    assert_eq!(outcome(&report, DESKTOP, "added"), Outcome::Wrapped);
    assert_eq!(
        outcome(&report, DESKTOP, "weather"),
        Outcome::AlreadyWrapped
    );
    let report = h.unwrap(&opts);
    assert_eq!(report.exit_code(), 0, "{}", report.render());
    let expected = String::from_utf8(fixture("home", DESKTOP)).unwrap().replace(
        "        \"fetch\": {",
        "        \"added\": {\"command\": \"node\", \"args\": [\"added.js\"]},\n        \"fetch\": {",
    );
    assert_eq!(String::from_utf8(h.read(DESKTOP)).unwrap(), expected);
    // The others come back byte for byte.
    for rel in [CODE, CURSOR, VSCODE, GEMINI, WINDSURF, CLINE, CODEX] {
        assert_eq!(h.read(rel), fixture("home", rel), "{rel}");
    }
}

#[test]
fn a_backup_that_changed_is_not_restored() {
    let h = home("home");
    let opts = h.opts();
    h.wrap(&opts);
    let run = fs::read_dir(h.data.join("backups"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let copy = run.join("windsurf/mcp_config.json");
    let mut bytes = fs::read(&copy).unwrap();
    bytes.extend_from_slice(b"\n");
    fs::write(&copy, bytes).unwrap();
    let report = h.unwrap(&opts);
    let f = report
        .files
        .iter()
        .find(|f| f.target.path.ends_with(WINDSURF))
        .unwrap();
    assert!(
        f.notes
            .iter()
            .any(|n| n.contains("is not what was backed up")),
        "{:?}",
        f.notes
    );
    // The span edit still gives back the original.
    assert_eq!(h.read(WINDSURF), fixture("home", WINDSURF));
}

#[test]
fn backups_are_recorded_with_their_digests() {
    let h = home("home");
    let report = h.wrap(&h.opts());
    let Status::Changed { backup } = status(&report, CURSOR) else {
        panic!()
    };
    assert_eq!(fs::read(&backup).unwrap(), fixture("home", CURSOR));
    let run = backup.parent().unwrap().parent().unwrap();
    assert!(run.starts_with(h.data.join("backups")));
    let index: Value = serde_json::from_slice(&fs::read(run.join("index.json")).unwrap()).unwrap();
    let files = index["files"].as_array().unwrap();
    assert_eq!(files.len(), 8);
    let cursor = files.iter().find(|f| f["client"] == "cursor").unwrap();
    assert_eq!(cursor["path"], h.path(CURSOR).to_string_lossy().as_ref());
    assert_eq!(cursor["backup"], "cursor/mcp.json");
    assert_eq!(
        cursor["original_sha256"],
        pinlog_core::Digest::of(&fixture("home", CURSOR)).hex()
    );
    assert_eq!(
        cursor["written_sha256"],
        pinlog_core::Digest::of(&h.read(CURSOR)).hex()
    );
    assert_eq!(cursor["op"], "wrap");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&backup).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "a backup can hold secrets");
        for dir in [run, backup.parent().unwrap(), &h.data.join("backups")] {
            let mode = fs::metadata(dir).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{}", dir.display());
        }
    }
}

#[test]
fn the_lockfile_is_given_to_every_wrapped_server() {
    let h = home("home");
    let mut opts = h.opts();
    opts.clients = vec![Client::ClaudeDesktop, Client::Codex];
    opts.proxy.lock = Some("/team/mcp.lock.json".into());
    h.wrap(&opts);
    assert_eq!(
        h.json(DESKTOP)["mcpServers"]["time"]["args"],
        json!([
            "proxy",
            "--name",
            "time",
            "--lock",
            "/team/mcp.lock.json",
            "uvx",
            "mcp-server-time==2026.1.5",
            "--local-timezone=Europe/Paris"
        ])
    );
    assert!(String::from_utf8(h.read(CODEX))
        .unwrap()
        .contains("\"--lock\", \"/team/mcp.lock.json\""));
    // Unwrap removes it with the rest.
    h.unwrap(&opts);
    assert_eq!(h.read(DESKTOP), fixture("home", DESKTOP));
    assert_eq!(h.read(CODEX), fixture("home", CODEX));
}

#[test]
fn a_config_file_named_on_the_command_line() {
    let h = home("home");
    let other = h.home.join("elsewhere.json");
    fs::write(
        &other,
        "{\"servers\": {\"a\": {\"type\": \"stdio\", \"command\": \"node\", \"args\": []}}}",
    )
    .unwrap();
    let mut opts = h.opts();
    opts.configs = vec![other.clone()];
    let report = h.wrap(&opts);
    assert_eq!(report.files.len(), 1, "only the file named");
    assert_eq!(
        fs::read_to_string(&other).unwrap(),
        format!("{{\"servers\": {{\"a\": {{\"type\": \"stdio\", \"command\": \"{PROGRAM}\", \"args\": [\"proxy\", \"--name\", \"a\", \"node\"]}}}}}}")
    );
    h.unwrap(&opts);
    assert_eq!(
        fs::read_to_string(&other).unwrap(),
        "{\"servers\": {\"a\": {\"type\": \"stdio\", \"command\": \"node\", \"args\": []}}}"
    );
    // A file named that is not there is an error (exit 4); a client's missing file is not.
    opts.configs = vec![h.home.join("nope.json")];
    opts.clients = vec![Client::Windsurf];
    fs::remove_file(h.path(WINDSURF)).unwrap();
    let report = h.wrap(&opts);
    assert_eq!(report.exit_code(), 4);
    assert_eq!(report.missing.len(), 1);
    assert!(report.render().contains("Windsurf: not found at"));
}

#[test]
fn line_endings_and_a_byte_order_mark_are_kept() {
    let h = home("home");
    let crlf = String::from_utf8(fixture("home", CODE))
        .unwrap()
        .replace('\n', "\r\n");
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend_from_slice(crlf.as_bytes());
    fs::write(h.path(CODE), &bytes).unwrap();
    let toml = String::from_utf8(fixture("home", CODEX))
        .unwrap()
        .replace('\n', "\r\n");
    fs::write(h.path(CODEX), &toml).unwrap();
    let mut opts = h.opts();
    opts.clients = vec![Client::ClaudeCode, Client::Codex];
    let report = h.wrap(&opts);
    assert_eq!(report.exit_code(), 0, "{}", report.render());
    for rel in [CODE, CODEX] {
        let text = h.read(rel);
        let bare_lf = text
            .windows(2)
            .filter(|w| w[1] == b'\n' && w[0] != b'\r')
            .count();
        assert_eq!(bare_lf, 0, "{rel}:\n{}", String::from_utf8_lossy(&text));
    }
    assert!(h.read(CODE).starts_with(b"\xEF\xBB\xBF{\r\n"));
    h.unwrap(&opts);
    assert_eq!(h.read(CODE), bytes);
    assert_eq!(h.read(CODEX), toml.as_bytes());
}

#[cfg(unix)]
#[test]
fn the_file_mode_is_kept_and_a_link_stays_a_link() {
    use std::os::unix::fs::PermissionsExt;
    let h = home("home");
    fs::set_permissions(h.path(GEMINI), fs::Permissions::from_mode(0o640)).unwrap();
    // Windsurf's file is a link into a dotfiles directory.
    let real = h.home.join("dotfiles/mcp_config.json");
    fs::create_dir_all(real.parent().unwrap()).unwrap();
    fs::rename(h.path(WINDSURF), &real).unwrap();
    std::os::unix::fs::symlink(&real, h.path(WINDSURF)).unwrap();
    let mut opts = h.opts();
    opts.clients = vec![Client::Gemini, Client::Windsurf];
    let report = h.wrap(&opts);
    assert_eq!(report.exit_code(), 0, "{}", report.render());
    let mode = fs::metadata(h.path(GEMINI)).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
    assert!(fs::symlink_metadata(h.path(WINDSURF))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(fs::read_to_string(&real).unwrap().contains(PROGRAM));
    // No temporary file is left behind.
    let leftovers: Vec<_> = fs::read_dir(h.path(".gemini"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["settings.json"]);
    h.unwrap(&opts);
    assert_eq!(fs::read(&real).unwrap(), fixture("home", WINDSURF));
}

#[test]
fn paths_per_operating_system() {
    let mut env = Env::with_home(Path::new("/home/u"));
    let p = |c: Client, env: &Env| c.path(env);
    assert_eq!(
        p(Client::ClaudeDesktop, &env),
        Path::new("/home/u/.config/Claude/claude_desktop_config.json")
    );
    assert_eq!(
        p(Client::ClaudeCode, &env),
        Path::new("/home/u/.claude.json")
    );
    assert_eq!(
        p(Client::Cursor, &env),
        Path::new("/home/u/.cursor/mcp.json")
    );
    assert_eq!(
        p(Client::Vscode, &env),
        Path::new("/home/u/.config/Code/User/mcp.json")
    );
    assert_eq!(
        p(Client::Gemini, &env),
        Path::new("/home/u/.gemini/settings.json")
    );
    assert_eq!(
        p(Client::Windsurf, &env),
        Path::new("/home/u/.codeium/windsurf/mcp_config.json")
    );
    assert_eq!(
        p(Client::Codex, &env),
        Path::new("/home/u/.codex/config.toml")
    );
    env.xdg_config_home = Some("/x".into());
    env.codex_home = Some("/c".into());
    env.claude_config_dir = Some("/cc".into());
    assert_eq!(
        p(Client::Cline, &env),
        Path::new(
            "/x/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"
        )
    );
    assert_eq!(p(Client::Codex, &env), Path::new("/c/config.toml"));
    assert_eq!(p(Client::ClaudeCode, &env), Path::new("/cc/.claude.json"));

    let mut mac = Env::with_home(Path::new("/Users/u"));
    mac.os = Os::MacOs;
    assert_eq!(
        p(Client::ClaudeDesktop, &mac),
        Path::new("/Users/u/Library/Application Support/Claude/claude_desktop_config.json")
    );
    assert_eq!(
        p(Client::Vscode, &mac),
        Path::new("/Users/u/Library/Application Support/Code/User/mcp.json")
    );
    let mut win = Env::with_home(Path::new("/w/u"));
    win.os = Os::Windows;
    win.appdata = Some("/w/u/AppData/Roaming".into());
    assert!(p(Client::ClaudeDesktop, &win).ends_with("Claude/claude_desktop_config.json"));
    assert!(p(Client::ClaudeDesktop, &win).starts_with("/w/u/AppData/Roaming"));
    assert!(p(Client::Cline, &win).starts_with("/w/u/AppData/Roaming/Code/User/globalStorage"));
}

#[test]
fn names_are_rendered_safe() {
    let h = home("home");
    let cfg = h.home.join("evil.json");
    fs::write(
        &cfg,
        "{\"mcpServers\": {\"a\\u001b[2Jb\\u202e\": {\"command\": \"npx\", \"args\": [\"x\\u001b[31m\"]}}}",
    )
    .unwrap();
    let mut opts = h.opts();
    opts.configs = vec![cfg];
    let text = h.wrap(&opts).render();
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{202e}'),
        "{text}"
    );
    assert!(text.contains("a<U+001B>[2Jb<U+202E>"), "{text}");
}

#[test]
fn entries_that_are_not_a_local_server_are_skipped_with_the_reason() {
    let h = home("home");
    let cfg = h.home.join("odd.json");
    let text = r#"{"mcpServers": {
  "no-command": {"args": ["x"]},
  "number": {"command": 3},
  "string-args": {"command": "node", "args": "server.js"},
  "mixed-args": {"command": "node", "args": ["a", 1]},
  "websocket": {"type": "ws", "command": "node"},
  "not-an-object": "node server.js",
  "odd-wrap": {"command": "pinlog", "args": ["proxy", "--name", "x"]},
  "ok": {"command": "node", "args": ["ok.js"]}
}}"#;
    fs::write(&cfg, text).unwrap();
    let empty = h.home.join("empty.json");
    fs::write(&empty, "\n").unwrap();
    let mut opts = h.opts();
    opts.configs = vec![cfg.clone(), empty.clone()];
    let report = h.wrap(&opts);
    assert_eq!(report.exit_code(), 0, "{}", report.render());
    let reason = |name: &str| match outcome(&report, "odd.json", name) {
        Outcome::Skipped(why) => why,
        other => panic!("{name}: {other:?}"),
    };
    assert_eq!(reason("no-command"), "no command");
    assert_eq!(reason("number"), "its command is not a string");
    assert_eq!(reason("string-args"), "its args are not a list of strings");
    assert_eq!(reason("mixed-args"), "its args are not a list of strings");
    assert_eq!(reason("not-an-object"), "its entry is not an object");
    assert!(reason("odd-wrap").contains("runs with its options only, and no command"));
    assert_eq!(outcome(&report, "odd.json", "websocket"), Outcome::Remote);
    assert_eq!(outcome(&report, "odd.json", "ok"), Outcome::Wrapped);
    let after = fs::read_to_string(&cfg).unwrap();
    assert_eq!(
        after,
        text.replace(
            r#""ok": {"command": "node", "args": ["ok.js"]}"#,
            &format!(
                r#""ok": {{"command": "{PROGRAM}", "args": ["proxy", "--name", "ok", "node", "ok.js"]}}"#
            )
        )
    );
    // A blank file has no servers: nothing to do, and no error.
    assert_eq!(status(&report, "empty.json"), Status::Unchanged);
    assert_eq!(fs::read(&empty).unwrap(), b"\n");
    assert!(report.render().contains("  no MCP servers\n"));
}

/// A proxy command line without `--` (as wrap writes it) and with it (as wrap wrote it before
/// 0.2.0) is read as the proxy reads it: wrap sees it wrapped and leaves it alone; and unwrap,
/// splicing a file the user edited since (here putting a `--` into what wrap wrote), gives each
/// server back exactly its
/// own command line, the proxy's options and their values taken off and the server's flags (one
/// spelled like the proxy's) kept, in JSON and in TOML.
#[test]
fn a_proxy_command_line_without_dash_dash_is_wrapped_already_and_unwraps() {
    let h = home("home");
    let (json_file, toml_file) = (h.home.join("bare.json"), h.home.join("bare.toml"));
    let json_text = r#"{"mcpServers": {
  "bare": {"command": "pinlog", "args": ["proxy", "--on-drift", "hold", "--name", "bare", "node", "b.js"]},
  "time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone", "UTC"]}
}}"#;
    let toml_text = "[mcp_servers.bare]\ncommand = \"pinlog\"\nargs = [\"proxy\", \"--name=bare\", \"node\", \"b.js\"]\n\n\
                     [mcp_servers.time]\ncommand = \"uvx\"\nargs = [\"mcp-server-time\", \"--name\", \"x\"]\n";
    fs::write(&json_file, json_text).unwrap();
    fs::write(&toml_file, toml_text).unwrap();
    let mut opts = h.opts();
    opts.configs = vec![json_file.clone(), toml_file.clone()];

    let report = h.wrap(&opts);
    assert_eq!(report.exit_code(), 0, "{}", report.render());
    for rel in ["bare.json", "bare.toml"] {
        assert_eq!(
            outcome(&report, rel, "bare"),
            Outcome::AlreadyWrapped,
            "{rel}"
        );
        assert_eq!(outcome(&report, rel, "time"), Outcome::Wrapped, "{rel}");
    }
    // The user puts in the `--` wrap wrote before 0.2.0.
    for file in [&json_file, &toml_file] {
        let text = fs::read_to_string(file).unwrap();
        assert_eq!(text.matches(r#""time", "uvx", "#).count(), 1, "{text}");
        fs::write(
            file,
            text.replace(r#""time", "uvx", "#, r#""time", "--", "uvx", "#),
        )
        .unwrap();
    }

    let report = h.unwrap(&opts);
    assert_eq!(report.exit_code(), 0, "{}", report.render());
    for rel in ["bare.json", "bare.toml"] {
        for name in ["bare", "time"] {
            assert_eq!(
                outcome(&report, rel, name),
                Outcome::Unwrapped,
                "{rel} {name}"
            );
        }
    }
    assert_eq!(
        fs::read_to_string(&json_file).unwrap(),
        json_text.replace(
            r#""command": "pinlog", "args": ["proxy", "--on-drift", "hold", "--name", "bare", "node", "b.js"]"#,
            r#""command": "node", "args": ["b.js"]"#
        )
    );
    assert_eq!(
        fs::read_to_string(&toml_file).unwrap(),
        toml_text.replace(
            "command = \"pinlog\"\nargs = [\"proxy\", \"--name=bare\", \"node\", \"b.js\"]",
            "command = \"node\"\nargs = [\"b.js\"]"
        )
    );
}

#[test]
fn what_wrap_writes_reads_back_as_the_same_command_line() {
    const LOCK: &str = "/srv/team/mcp.lock.json";
    let servers: [(&str, &[&str]); 4] = [
        (
            "files server",
            &[
                r"C:\Program Files\nodejs\npx.cmd",
                "-y",
                r#"say "hi""#,
                "it's",
                "--",
                "--name",
                "x",
                "--lock=y",
                "proxy",
                "日本語 ✓",
            ],
        ),
        ("-dash", &["node", "a b.js", "--"]),
        ("--", &["--", "--name"]),
        ("plain", &["/usr/bin/plain-mcp"]),
    ];
    let h = home("home");
    let (json_file, toml_file) = (h.home.join("awkward.json"), h.home.join("awkward.toml"));
    let mut json_servers = serde_json::Map::new();
    let mut toml_text = String::new();
    for (name, argv) in servers {
        json_servers.insert(name.into(), json!({"command": argv[0], "args": argv[1..]}));
        // A JSON string is a TOML basic string for these characters.
        let quote = |s: &str| serde_json::to_string(s).unwrap();
        let args: Vec<String> = argv[1..].iter().map(|a| quote(a)).collect();
        toml_text += &format!(
            "[mcp_servers.{}]\ncommand = {}\nargs = [{}]\n\n",
            quote(name),
            quote(argv[0]),
            args.join(", ")
        );
    }
    let json_text = serde_json::to_string_pretty(&json!({ "mcpServers": json_servers })).unwrap();
    fs::write(&json_file, &json_text).unwrap();
    fs::write(&toml_file, &toml_text).unwrap();
    let mut opts = h.opts();
    opts.configs = vec![json_file.clone(), toml_file.clone()];
    opts.proxy.lock = Some(LOCK.into());
    let report = h.wrap(&opts);
    assert_eq!(report.exit_code(), 0, "{}", report.render());

    let expected = |name: &str, argv: &[&str]| {
        let server = argv.iter().map(|a| a.to_string()).collect();
        WrappedCommand::new(PROGRAM, name, Some(LOCK), server)
    };
    let allowed = read_allowed(&fs::read(&json_file).unwrap(), LOCK).unwrap();
    let doc: toml_edit::DocumentMut = fs::read_to_string(&toml_file).unwrap().parse().unwrap();
    for (name, argv) in servers {
        for rel in ["awkward.json", "awkward.toml"] {
            assert_eq!(
                outcome(&report, rel, name),
                Outcome::Wrapped,
                "{rel} {name}"
            );
        }
        let want = expected(name, argv);
        let policy = &allowed.iter().find(|a| a.name == name).unwrap().argv;
        let table = &doc["mcp_servers"][name];
        let toml_args: Vec<String> = table["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect();
        for (command, args) in [
            (policy[0].as_str(), &policy[1..]),
            (table["command"].as_str().unwrap(), &toml_args[..]),
        ] {
            assert_eq!(args, want.args(), "{name}");
            assert_eq!(
                WrappedCommand::parse(command, args, is_pinlog_name),
                Some(Ok(want.clone())),
                "{name}"
            );
        }
    }

    // Wrapping again sees them wrapped; unwrapping gives back the bytes.
    let again = h.wrap(&opts);
    assert_eq!(
        outcome(&again, "awkward.toml", "--"),
        Outcome::AlreadyWrapped
    );
    h.unwrap(&opts);
    assert_eq!(fs::read_to_string(&json_file).unwrap(), json_text);
    assert_eq!(fs::read_to_string(&toml_file).unwrap(), toml_text);
}
