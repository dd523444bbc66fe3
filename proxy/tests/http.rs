//! The Streamable HTTP proxy in process (`pinlog_proxy::http::serve`, with the SQLite pin store),
//! in front of a real server built with the official Python SDK
//! (tests/fixtures/drift_http_server.py, which writes down the Authorization of every request it
//! gets), spoken to with raw HTTP requests: what the proxy refuses before anything reaches the
//! upstream; a handshake session end to end (the upstream's session id passed through, the
//! client's Authorization on every upstream request, DELETE ends the session, an upstream that
//! forgot the session makes the client start again); a 2026-07-28 request checked on its own; an
//! upstream that gives no session id; and one that cannot be reached (the check fails closed).
//! tests/proxy_http.rs runs the binary with real clients.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pinlog_proxy::http::{serve, HttpOptions};
use pinlog_proxy::pins::StorePins;
use pinlog_proxy::session::OnDrift;
use pinlog_proxy::store::{ServerKey, Store};
use serde_json::{json, Value as J};

fn repo(rel: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    assert!(
        p.exists(),
        "{} is missing: run `bash .ci/setup`",
        p.display()
    );
    p
}

/// The fixture server on a free port, stopped when dropped.
struct Upstream {
    child: Child,
    port: u16,
}

impl Drop for Upstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn upstream(port: u16, env: &[(&str, &Path)], stateless: bool) -> Upstream {
    let mut c = Command::new(repo(".ci/venv/bin/python"));
    c.arg(repo("tests/fixtures/drift_http_server.py"))
        .arg(port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    if stateless {
        c.env("STATELESS", "1");
    }
    let up = Upstream {
        child: c.spawn().unwrap(),
        port,
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the fixture never listened");
        std::thread::sleep(Duration::from_millis(100));
    }
    up
}

/// A proxy in front of `up`, pinning into `home`; its port.
async fn proxy(up: &Upstream, home: &Path) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{}/mcp", up.port);
    let pins = StorePins {
        store: Store::open(home).unwrap(),
        key: ServerKey::from_url(&url),
        label: "fixture".into(),
    };
    let options = HttpOptions {
        upstream: url,
        label: "fixture".into(),
        on_drift: OnDrift::Block,
        public: None,
    };
    tokio::spawn(serve(listener, options, pins, std::future::pending()));
    port
}

struct Answer {
    status: u16,
    session: Option<String>,
    messages: Vec<J>,
}

/// One HTTP request to the proxy; the messages of its answer, JSON or events.
async fn send(method: &str, port: u16, headers: &[(&str, &str)], body: Vec<u8>) -> Answer {
    let client = reqwest::Client::new();
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = client
        .request(method, format!("http://127.0.0.1:{port}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let session = resp
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let events = resp
        .headers()
        .get("content-type")
        .is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
    let text = resp.text().await.unwrap();
    let messages = if events {
        text.split("\n\n")
            .map(|e| {
                e.lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .filter(|d| !d.trim().is_empty())
            .map(|d| serde_json::from_str(&d).unwrap())
            .collect()
    } else if text.trim().is_empty() {
        Vec::new()
    } else {
        vec![serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))]
    };
    Answer {
        status,
        session,
        messages,
    }
}

async fn post(port: u16, headers: &[(&str, &str)], message: J) -> Answer {
    send("POST", port, headers, message.to_string().into_bytes()).await
}

fn initialize(id: u64) -> J {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
}

/// The Authorization values the upstream saw, one per request, and the methods.
fn seen(log: &Path) -> Vec<(String, Option<String>)> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let v: J = serde_json::from_str(l).unwrap();
            (
                v["method"].as_str().unwrap().to_string(),
                v["authorization"].as_str().map(str::to_string),
            )
        })
        .collect()
}

#[tokio::test]
async fn refuses_what_it_must_before_anything_reaches_the_upstream() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("auth.jsonl");
    let up = upstream(free_port(), &[("AUTH_LOG", &log)], false);
    let port = proxy(&up, &tmp.path().join("home")).await;
    let host = format!("127.0.0.1:{port}");
    // A page that rebinds its own name to this machine, or calls from its origin.
    for headers in [
        vec![("host", "evil.example")],
        vec![("host", "localhost.evil.example")],
        vec![("host", host.as_str()), ("origin", "http://evil.example")],
        vec![("host", host.as_str()), ("origin", "null")],
    ] {
        let a = post(port, &headers, initialize(1)).await;
        assert_eq!(a.status, 403, "{headers:?}");
    }
    // A session the proxy never checked.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let a = post(port, &[("mcp-session-id", "made-up")], list.clone()).await;
    assert_eq!(a.status, 404);
    assert_eq!(a.messages[0]["id"], 2);
    assert_eq!(
        send("GET", port, &[("mcp-session-id", "made-up")], vec![])
            .await
            .status,
        404
    );
    assert_eq!(
        send("DELETE", port, &[("mcp-session-id", "made-up")], vec![])
            .await
            .status,
        404
    );
    assert_eq!(send("GET", port, &[], vec![]).await.status, 400);
    assert_eq!(send("PUT", port, &[], vec![]).await.status, 405);
    // Not one strict message: a batch, a repeated member, not JSON.
    for body in [
        format!("[{list}]"),
        r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}"#.to_string(),
        "tools/list".to_string(),
    ] {
        let a = send("POST", port, &[], body.into_bytes()).await;
        assert_eq!(a.status, 400);
        assert_eq!(a.messages[0]["error"]["code"], -32700);
    }
    // A notification belongs to a session.
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(port, &[], note).await.status, 400);
    // Past the bound on one message.
    let big = vec![b' '; (16 << 20) + 1];
    assert_eq!(send("POST", port, &[], big).await.status, 413);
    // A first request that neither initializes nor names a 2026-07-28 revision: refused as the
    // specification has a server refuse a request without the stateless envelope.
    let a = post(port, &[], list).await;
    assert_eq!(a.status, 400);
    assert_eq!(a.messages[0]["id"], 2);
    assert_eq!(a.messages[0]["error"]["code"], -32602, "{:?}", a.messages);
    assert!(seen(&log).is_empty(), "{:?}", seen(&log));
}

#[tokio::test]
async fn a_handshake_session_passes_the_upstreams_id_and_the_clients_authorization() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("auth.jsonl");
    let port_up = free_port();
    let up = upstream(port_up, &[("AUTH_LOG", &log)], false);
    let port = proxy(&up, &tmp.path().join("home")).await;
    let auth = ("authorization", "Bearer t0ken-for-the-upstream");
    let a = post(port, &[auth], initialize(1)).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.messages.len(), 1, "{:?}", a.messages);
    assert_eq!(a.messages[0]["id"], 1);
    assert_eq!(
        a.messages[0]["result"]["serverInfo"]["name"],
        "drift-http-fixture"
    );
    let sid = a.session.expect("the upstream's session id");
    let s = [
        auth,
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(port, &s, note).await.status, 202);
    let a = post(
        port,
        &s,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    assert_eq!(a.messages[0]["result"]["tools"][0]["name"], "weather");
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "weather", "arguments": {"city": "Oslo"}}});
    let a = post(port, &s, call.clone()).await;
    assert_eq!(
        a.messages[0]["result"]["content"][0]["text"],
        "sunny in Oslo"
    );
    // The proxy's own requests (initialized, the listing) and the client's carried the
    // client's Authorization; nothing went without it.
    let requests = seen(&log);
    assert!(requests.len() >= 4, "{requests:?}");
    assert!(requests
        .iter()
        .all(|(_, a)| a.as_deref() == Some("Bearer t0ken-for-the-upstream")));
    // An upstream that forgot the session (it restarted): the client hears 404, and so it
    // does from then on, without the proxy asking the upstream again.
    drop(up);
    let _up = upstream(port_up, &[("AUTH_LOG", &log)], false);
    let before = seen(&log).len();
    assert_eq!(post(port, &s, call.clone()).await.status, 404);
    assert_eq!(seen(&log).len(), before + 1);
    assert_eq!(post(port, &s, call).await.status, 404);
    assert_eq!(seen(&log).len(), before + 1);
    // A new session, ended by the client: DELETE reaches the upstream, and the id is gone.
    let a = post(port, &[auth], initialize(1)).await;
    let sid = a.session.unwrap();
    let s = [auth, ("mcp-session-id", sid.as_str())];
    assert_eq!(send("DELETE", port, &s, vec![]).await.status, 200);
    assert_eq!(seen(&log).last().unwrap().0, "DELETE");
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    assert_eq!(post(port, &s, list).await.status, 404);
}

#[tokio::test]
async fn a_2026_request_is_checked_on_its_own_before_it_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let (log, marker) = (tmp.path().join("auth.jsonl"), tmp.path().join("calls"));
    let up = upstream(
        free_port(),
        &[("AUTH_LOG", &log), ("DRIFT_MARKER", &marker)],
        false,
    );
    let port = proxy(&up, &tmp.path().join("home")).await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "weather", "arguments": {"city": "Oslo"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let h = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "weather"),
        ("authorization", "Bearer per-request"),
    ];
    for round in 1..=2 {
        let a = post(port, &h, call.clone()).await;
        assert_eq!(a.status, 200);
        assert_eq!(a.session, None);
        assert_eq!(a.messages.last().unwrap()["id"], 7);
        assert_eq!(
            a.messages.last().unwrap()["result"]["content"][0]["text"],
            "sunny in Oslo",
            "{:?}",
            a.messages
        );
        // Each time: discover, list, then the call itself.
        assert_eq!(seen(&log).len(), 3 * round, "{:?}", seen(&log));
    }
    assert_eq!(std::fs::read_to_string(&marker).unwrap().lines().count(), 2);
    assert!(seen(&log)
        .iter()
        .all(|(m, a)| m == "POST" && a.as_deref() == Some("Bearer per-request")));
}

#[tokio::test]
async fn an_upstream_without_session_ids_serves_the_handshake_era() {
    let tmp = tempfile::tempdir().unwrap();
    let up = upstream(free_port(), &[], true);
    let port = proxy(&up, &tmp.path().join("home")).await;
    let a = post(port, &[], initialize(1)).await;
    assert_eq!(a.session, None);
    assert_eq!(
        a.messages[0]["result"]["serverInfo"]["name"],
        "drift-http-fixture"
    );
    let v = [("mcp-protocol-version", "2025-11-25")];
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "weather", "arguments": {"city": "Bergen"}}});
    let a = post(port, &v, call).await;
    assert_eq!(
        a.messages[0]["result"]["content"][0]["text"],
        "sunny in Bergen"
    );
}

#[tokio::test]
async fn an_upstream_that_cannot_be_reached_fails_the_check_closed() {
    let tmp = tempfile::tempdir().unwrap();
    // Nothing listens there: the port of a listener just closed.
    let nobody = Upstream {
        child: Command::new("true").spawn().unwrap(),
        port: free_port(),
    };
    let port = proxy(&nobody, &tmp.path().join("home")).await;
    let a = post(port, &[], initialize(1)).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.messages[0]["id"], 1);
    assert_eq!(a.messages[0]["error"]["code"], -32092, "{:?}", a.messages);
    assert_eq!(a.session, None);
}
