//! Streamable HTTP for an [`McpServer`], on a loopback address only: `POST /mcp` with one
//! JSON-RPC message, answered with one JSON body (no event streams, no sessions: every request
//! stands alone, and a handshake-era request needs no `initialize` first).
//!
//! A loopback listener is still reachable from any web page the user opens, by DNS rebinding:
//! so the `Host` header must name a loopback host, and an `Origin`, when there is one, a
//! loopback origin ([`loopback::check`]); anything else is refused with 403 before the body is
//! read.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, ALLOW, CACHE_CONTROL, CONTENT_TYPE, HOST, ORIGIN};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use pinlog_mcp::loopback::{self, AddrError, Refused};
use pinlog_mcp::server::{McpServer, ServerSession, Tools, MAX_MESSAGE};

/// The path served.
pub const PATH: &str = "/mcp";

/// The address `text` names, which must be a loopback one: `PORT` (on 127.0.0.1),
/// `localhost:PORT`, `127.0.0.1:PORT`, `[::1]:PORT`.
pub fn loopback_addr(text: &str) -> Result<SocketAddr, String> {
    let text = text.trim();
    loopback::listen_addr(text).map_err(|e| match e {
        AddrError::NoPort => format!("--http {text}: not a port after localhost:"),
        AddrError::Unreadable => format!("--http {text}: give PORT or a loopback HOST:PORT"),
        AddrError::NotLoopback(addr) => format!(
            "--http {addr}: not a loopback address; lookup serves this machine only \
             (127.0.0.1, [::1] or localhost)"
        ),
    })
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

async fn handle<T: Tools + Send + Sync + 'static>(
    server: Arc<McpServer<T>>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let headers = req.headers();
    let value = |name| headers.get(name).map(HeaderValue::as_bytes);
    match loopback::check(value(HOST), value(ORIGIN)) {
        Ok(()) => {}
        Err(Refused::Host) => {
            return Ok(plain(
                StatusCode::FORBIDDEN,
                "the Host header must name a loopback host\n",
            ))
        }
        Err(Refused::Origin) => {
            return Ok(plain(
                StatusCode::FORBIDDEN,
                "cross-origin requests are refused\n",
            ))
        }
    }
    if req.uri().path() != PATH {
        return Ok(plain(StatusCode::NOT_FOUND, "MCP is served at /mcp\n"));
    }
    if req.method() != Method::POST {
        let mut r = plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "POST one JSON-RPC message; this server opens no event stream\n",
        );
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("POST"));
        return Ok(r);
    }
    let json = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        });
    if !json {
        return Ok(plain(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must be application/json\n",
        ));
    }
    let version = headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = match Limited::new(req.into_body(), MAX_MESSAGE).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            return Ok(plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                "a message is at most 1 MiB\n",
            ))
        }
    };
    // Tools read files and may verify a whole log: off the connection's thread.
    let answer = tokio::task::spawn_blocking(move || {
        let mut session = ServerSession::stateless(version.as_deref());
        server.handle(&mut session, &body)
    })
    .await;
    let answer = match answer {
        Ok(a) => a,
        Err(_) => {
            return Ok(plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the request failed\n",
            ))
        }
    };
    let mut r = match answer {
        Some(bytes) => {
            let mut r = Response::new(Full::new(Bytes::from(bytes)));
            r.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            r
        }
        None => {
            let mut r = Response::new(Full::new(Bytes::new()));
            *r.status_mut() = StatusCode::ACCEPTED;
            r
        }
    };
    r.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(r)
}

/// Serves `server` on `listener` until the listener fails.
pub async fn serve_http<T: Tools + Send + Sync + 'static>(
    listener: tokio::net::TcpListener,
    server: Arc<McpServer<T>>,
) -> io::Result<()> {
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(s) => s,
            // A connection that failed before it was accepted, or too many open files for a
            // moment: the listener itself is fine.
            Err(e) if is_transient(&e) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        let server = server.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| handle(server.clone(), req));
            let _ = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(Duration::from_secs(10))
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    ) || e.raw_os_error().is_some_and(|c| c == 24 || c == 23)
}
