//! The Streamable HTTP proxy in process (`pinlog_proxy::http::serve`, with the SQLite pin store),
//! in front of a real server built with the official Python SDK
//! (tests/fixtures/drift_http_server.py, which writes down the Authorization of every request it
//! gets), spoken to with raw HTTP requests: what the proxy refuses before anything reaches the
//! upstream; a handshake session end to end (a session id of the proxy's, the client's
//! Authorization on every upstream request, DELETE ends the session, an upstream that forgot the
//! session makes the client start again); a 2026-07-28 request checked on its own; an upstream
//! that gives no session id; one that cannot be reached (the check fails closed); and clients kept
//! apart: two at once with the same JSON-RPC ids, in front of the SDK's server and of a scripted
//! one (below) that gives no session id and holds its answers until both clients' calls are in,
//! and a cancellation that names the request as the upstream knows it.
//! tests/proxy_http.rs runs the binary with real clients.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
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
    proxy_to(up.port, home).await
}

/// A proxy in front of the upstream on `upstream_port`, pinning into `home`; its port.
async fn proxy_to(upstream_port: u16, home: &Path) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{upstream_port}/mcp");
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
async fn a_handshake_session_gets_the_proxys_id_and_passes_the_clients_authorization() {
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
    let sid = a.session.expect("the proxy's session id");
    assert!(is_minted(&sid), "{sid}");
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
    let sid = a.session.expect("the proxy's session id");
    assert_eq!(
        a.messages[0]["result"]["serverInfo"]["name"],
        "drift-http-fixture"
    );
    let v = [
        ("mcp-protocol-version", "2025-11-25"),
        ("mcp-session-id", sid.as_str()),
    ];
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
    // The session stays blocked: what its client sends next is refused, not checked afresh.
    let sid = a.session.expect("the proxy's session id");
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let a = post(port, &[("mcp-session-id", sid.as_str())], list).await;
    assert_eq!(a.messages[0]["error"]["code"], -32092, "{:?}", a.messages);
}

/// A session id of the proxy's: 128 random bits, in hex.
fn is_minted(sid: &str) -> bool {
    sid.len() == 32
        && sid
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A Streamable HTTP server scripted for what real ones do not do: it never gives a session id,
/// and it holds every `tools/call` answer until `overlap` calls are in (or 10 s passed), so that
/// clients' calls are in the proxy at once, then answers them in the order they came, 300 ms
/// apart. A call for the city "slow" is answered only once a
/// `notifications/cancelled` came. It writes down every message it gets, with the
/// `Mcp-Session-Id` it came with.
struct Scripted {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

/// A message the scripted server got, and the `Mcp-Session-Id` it came with.
type Seen = (J, Option<String>);

impl Scripted {
    async fn start(overlap: usize) -> Scripted {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let calls = Arc::new((tokio::sync::Barrier::new(overlap), AtomicU32::new(0)));
        let cancelled = Arc::new(tokio::sync::Notify::new());
        let (log, up) = (seen.clone(), (calls, cancelled));
        tokio::spawn(async move {
            loop {
                let (tcp, _) = listener.accept().await.unwrap();
                let (log, up) = (log.clone(), up.clone());
                let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                    let (log, (calls, cancelled)) = (log.clone(), up.clone());
                    async move {
                        let sid = req
                            .headers()
                            .get("mcp-session-id")
                            .map(|v| v.to_str().unwrap().to_string());
                        let body = req.into_body().collect().await.unwrap().to_bytes();
                        let m: J = serde_json::from_slice(&body).unwrap();
                        log.lock().unwrap().push((m.clone(), sid));
                        let result = match m["method"].as_str().unwrap_or_default() {
                            "notifications/cancelled" => {
                                cancelled.notify_one();
                                None
                            }
                            "initialize" => Some(json!({"protocolVersion": "2025-11-25",
                                "capabilities": {"tools": {}},
                                "serverInfo": {"name": "scripted", "version": "1"}})),
                            "tools/list" => Some(json!({"tools": [{"name": "weather",
                                "description": "Tell the weather in a city.",
                                "inputSchema": {"type": "object"}}]})),
                            "tools/call" => {
                                let city = m["params"]["arguments"]["city"].clone();
                                match city == "slow" {
                                    true => cancelled.notified().await,
                                    false => {
                                        let rank = calls.1.fetch_add(1, Ordering::SeqCst);
                                        let wait = Duration::from_secs(10);
                                        let _ = tokio::time::timeout(wait, calls.0.wait()).await;
                                        let after = Duration::from_millis(300) * rank;
                                        tokio::time::sleep(after).await;
                                    }
                                }
                                let text = format!("sunny in {}", city.as_str().unwrap());
                                Some(json!({"content": [{"type": "text", "text": text}]}))
                            }
                            _ => None,
                        };
                        let mut resp = hyper::Response::new(Full::new(bytes::Bytes::new()));
                        match (result, m.get("id")) {
                            (Some(r), Some(id)) => {
                                let a = json!({"jsonrpc": "2.0", "id": id, "result": r});
                                *resp.body_mut() = Full::new(a.to_string().into());
                                resp.headers_mut().insert(
                                    "content-type",
                                    hyper::header::HeaderValue::from_static("application/json"),
                                );
                            }
                            _ => *resp.status_mut() = hyper::StatusCode::ACCEPTED,
                        }
                        Ok::<_, std::convert::Infallible>(resp)
                    }
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(tcp), service),
                );
            }
        });
        Scripted { port, seen }
    }

    /// The messages it got whose method is `method`, and the session id each came with.
    fn seen(&self, method: &str) -> Vec<Seen> {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .filter(|(m, _)| m["method"] == method)
            .cloned()
            .collect()
    }
}

/// A client's handshake through the proxy on `port`: the session id the proxy gave, if any, and
/// the headers its later requests carry (the session id only when it was given one, as a client
/// does).
async fn handshake(port: u16) -> Vec<(&'static str, String)> {
    let a = post(port, &[], initialize(1)).await;
    assert_eq!(a.status, 200, "{:?}", a.messages);
    assert!(a.messages[0]["result"].is_object(), "{:?}", a.messages);
    let mut h = vec![("mcp-protocol-version", "2025-11-25".to_string())];
    if let Some(sid) = a.session {
        h.push(("mcp-session-id", sid));
    }
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post_as(port, &h, note).await.status, 202);
    h
}

/// A POST with a client's session headers.
async fn post_as(port: u16, h: &[(&'static str, String)], message: J) -> Answer {
    let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
    post(port, &h, message).await
}

fn call(id: u64, city: &str) -> J {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "weather", "arguments": {"city": city}}})
}

/// Two clients' calls with the same id at once, b's sent once `a_in` is done: what each was
/// answered.
async fn both_call(
    port: u16,
    a: &[(&'static str, String)],
    b: &[(&'static str, String)],
    a_in: impl std::future::Future<Output = ()>,
) -> [J; 2] {
    let (x, y) = tokio::join!(post_as(port, a, call(2, "Oslo")), async {
        a_in.await;
        post_as(port, b, call(2, "Bergen")).await
    });
    [x, y].map(|r| {
        assert_eq!(r.messages.len(), 1, "{}: {:?}", r.status, r.messages);
        r.messages[0].clone()
    })
}

#[tokio::test]
async fn two_clients_with_the_same_ids_get_their_own_answers_from_an_upstream_without_session_ids()
{
    let tmp = tempfile::tempdir().unwrap();
    let up = Scripted::start(2).await;
    let port = proxy_to(up.port, &tmp.path().join("home")).await;
    let a = handshake(port).await;
    let b = handshake(port).await;
    // a's call reaches the upstream first, and is answered first.
    let a_in = async {
        while up.seen("tools/call").is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let [oslo, bergen] = both_call(port, &a, &b, a_in).await;
    assert_eq!(oslo["id"], 2);
    assert_eq!(
        oslo["result"]["content"][0]["text"], "sunny in Oslo",
        "{oslo}"
    );
    assert_eq!(bergen["id"], 2);
    assert_eq!(
        bergen["result"]["content"][0]["text"], "sunny in Bergen",
        "{bergen}"
    );
    // Each client has a session of its own, with an id of the proxy's that the upstream never
    // sees; and no two requests reached the upstream under one id, whichever client sent them.
    let (sa, sb) = (&a[1].1, &b[1].1);
    assert!(is_minted(sa) && is_minted(sb) && sa != sb, "{sa} {sb}");
    assert!(up.seen.lock().unwrap().iter().all(|(_, sid)| sid.is_none()));
    let mut ids: Vec<String> = up
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter_map(|(m, _)| m.get("id").map(J::to_string))
        .collect();
    let sent = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), sent, "{ids:?}");
    // A session id the proxy did not give is not another client's session.
    let last = if sa.ends_with('0') { '1' } else { '0' };
    let made_up = format!("{}{last}", &sa[..31]);
    let guessed = [("mcp-session-id", made_up.as_str())];
    assert_eq!(post(port, &guessed, call(3, "Oslo")).await.status, 404);
    // An id already waiting in a session is refused there, not taken for the other request;
    // in another session it is that client's own.
    let a_in = || async {
        while up.seen("tools/call").len() < 3 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let (x, again, other) = tokio::join!(
        post_as(port, &a, call(4, "Oslo")),
        async {
            a_in().await;
            post_as(port, &a, call(4, "Bergen")).await
        },
        async {
            a_in().await;
            post_as(port, &b, call(4, "Bergen")).await
        }
    );
    assert_eq!(again.status, 400, "{:?}", again.messages);
    assert_eq!(again.messages[0]["error"]["code"], -32600);
    assert_eq!(
        x.messages[0]["result"]["content"][0]["text"],
        "sunny in Oslo"
    );
    assert_eq!(
        other.messages[0]["result"]["content"][0]["text"],
        "sunny in Bergen"
    );
    assert_eq!(up.seen("tools/call").len(), 4);
}

#[tokio::test]
async fn two_clients_with_the_same_ids_get_their_own_answers_from_the_sdks_server() {
    // The SDK's server with sessions (each client gets its own upstream session), and in its
    // stateless mode (no session id at all).
    for stateless in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let up = upstream(free_port(), &[], stateless);
        let port = proxy(&up, &tmp.path().join("home")).await;
        let a = handshake(port).await;
        let b = handshake(port).await;
        for _ in 0..5 {
            let [oslo, bergen] = both_call(port, &a, &b, async {}).await;
            assert_eq!(
                oslo["result"]["content"][0]["text"], "sunny in Oslo",
                "{oslo}"
            );
            assert_eq!(
                bergen["result"]["content"][0]["text"], "sunny in Bergen",
                "{bergen}"
            );
        }
        let (sa, sb) = (&a[1].1, &b[1].1);
        assert!(is_minted(sa) && is_minted(sb) && sa != sb, "{sa} {sb}");
    }
}

#[tokio::test]
async fn a_cancellation_names_the_request_as_the_upstream_knows_it() {
    let tmp = tempfile::tempdir().unwrap();
    let up = Scripted::start(1).await;
    let port = proxy_to(up.port, &tmp.path().join("home")).await;
    let a = handshake(port).await;
    let b = handshake(port).await;
    // Client a's call waits upstream until it is cancelled; client b's, under the same id, is
    // answered meanwhile.
    let slow = {
        let a = a.clone();
        tokio::spawn(async move { post_as(port, &a, call(2, "slow")).await })
    };
    while up.seen("tools/call").is_empty() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let r = post_as(port, &b, call(2, "Bergen")).await;
    assert_eq!(
        r.messages[0]["result"]["content"][0]["text"],
        "sunny in Bergen"
    );
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "changed my mind"}});
    // Client b cancels its id 2, answered already: nothing reaches the upstream, where id 2 may
    // be anyone's request.
    assert_eq!(post_as(port, &b, cancel.clone()).await.status, 202);
    // Client a cancels its id 2: the upstream hears of the id it knows that call by.
    assert_eq!(post_as(port, &a, cancel).await.status, 202);
    let deadline = Instant::now() + Duration::from_secs(10);
    while up.seen("notifications/cancelled").is_empty() {
        assert!(
            Instant::now() < deadline,
            "no cancellation reached the upstream"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let wire = |city: &str| {
        let calls = up.seen("tools/call");
        let found = calls
            .iter()
            .find(|(m, _)| m["params"]["arguments"]["city"] == city);
        found.unwrap().0["id"].clone()
    };
    assert_ne!(wire("slow"), wire("Bergen"));
    let cancels = up.seen("notifications/cancelled");
    assert_eq!(cancels.len(), 1, "{cancels:?}");
    assert_eq!(cancels[0].0["params"]["requestId"], wire("slow"));
    assert_eq!(cancels[0].0["params"]["reason"], "changed my mind");
    // The answer the upstream sent anyway is not delivered, and the call's POST ends.
    let r = tokio::time::timeout(Duration::from_secs(10), slow)
        .await
        .unwrap()
        .unwrap();
    assert!(
        r.messages.iter().all(|m| m.get("result").is_none()),
        "{:?}",
        r.messages
    );
}
