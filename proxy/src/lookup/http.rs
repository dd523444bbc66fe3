//! Streamable HTTP for an [`McpServer`], on a loopback address only: `POST /mcp` with one
//! JSON-RPC message, answered with one JSON body (no event streams, no sessions: every request
//! stands alone, and a handshake-era request needs no `initialize` first).
//!
//! A loopback listener is still reachable from any web page the user opens, by DNS rebinding:
//! so the `Host` header must name a loopback host, and an `Origin`, when there is one, a
//! loopback origin; anything else is refused with 403 before the body is read.

use std::convert::Infallible;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, ALLOW, CACHE_CONTROL, CONTENT_TYPE, HOST, ORIGIN};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};

use crate::mcp_server::{McpServer, Session, Tools, MAX_MESSAGE};

/// The path served.
pub const PATH: &str = "/mcp";

/// The address `text` names, which must be a loopback one: `PORT` (on 127.0.0.1),
/// `localhost:PORT`, `127.0.0.1:PORT`, `[::1]:PORT`.
pub fn loopback_addr(text: &str) -> Result<SocketAddr, String> {
    let text = text.trim();
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Some(port) = text.strip_prefix("localhost:") {
        let port = port
            .parse::<u16>()
            .map_err(|_| format!("--http {text}: not a port after localhost:"))?;
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    let addr: SocketAddr = text
        .parse()
        .map_err(|_| format!("--http {text}: give PORT or a loopback HOST:PORT"))?;
    if !addr.ip().is_loopback() {
        return Err(format!(
            "--http {addr}: not a loopback address; lookup serves this machine only \
             (127.0.0.1, [::1] or localhost)"
        ));
    }
    Ok(addr)
}

/// Whether `host` (a `Host` header's host, or an origin's) is a loopback name.
fn loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The host of a `Host` header value (`name`, `name:port`, `[v6]:port`).
fn host_of(value: &str) -> &str {
    if let Some(rest) = value.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    value.split(':').next().unwrap_or("")
}

/// Whether an `Origin` header names a loopback origin (`http://127.0.0.1:8787`, …).
fn loopback_origin(value: &str) -> bool {
    let Some(rest) = value
        .strip_prefix("http://")
        .or_else(|| value.strip_prefix("https://"))
    else {
        return false;
    };
    !rest.contains('/') && !rest.contains('@') && loopback_host(host_of(rest))
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
    let host_ok = headers
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|h| loopback_host(host_of(h)));
    if !host_ok {
        return Ok(plain(
            StatusCode::FORBIDDEN,
            "the Host header must name a loopback host\n",
        ));
    }
    if let Some(origin) = headers.get(ORIGIN) {
        if !origin.to_str().is_ok_and(loopback_origin) {
            return Ok(plain(
                StatusCode::FORBIDDEN,
                "cross-origin requests are refused\n",
            ));
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
        let mut session = Session::stateless(version.as_deref());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_served() {
        assert_eq!(loopback_addr("8787").unwrap().to_string(), "127.0.0.1:8787");
        assert_eq!(
            loopback_addr("localhost:9").unwrap().to_string(),
            "127.0.0.1:9"
        );
        assert_eq!(loopback_addr("[::1]:80").unwrap().to_string(), "[::1]:80");
        assert!(loopback_addr("127.0.0.2:80").is_ok());
        for bad in [
            "0.0.0.0:8787",
            "192.168.1.2:80",
            "[::]:80",
            "example.com:80",
            "x",
        ] {
            assert!(loopback_addr(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn hosts_and_origins_must_be_loopback() {
        for ok in ["127.0.0.1:8787", "localhost", "LOCALHOST:1", "[::1]:80"] {
            assert!(loopback_host(host_of(ok)), "{ok}");
        }
        for bad in [
            "evil.example:8787",
            "127.0.0.1.evil.example",
            "[::2]:80",
            "",
        ] {
            assert!(!loopback_host(host_of(bad)), "{bad}");
        }
        assert!(loopback_origin("http://127.0.0.1:8787"));
        assert!(loopback_origin("http://localhost"));
        assert!(!loopback_origin("null"));
        assert!(!loopback_origin("https://evil.example"));
        assert!(!loopback_origin("http://127.0.0.1@evil.example"));
    }
}
