//! Probing over Streamable HTTP on loopback: server-everything in its `streamableHttp` mode and a
//! server built with the official Python SDK, in both eras and with `auto`.

use std::net::TcpListener;
use std::process::Command;

use pinlog_mcp::probe::{probe, Target};
use pinlog_mcp::revision::Revision;
use pinlog_mcp::surface::ProbeOptions;
use pinlog_mcp::{Caps, WireError};
use pinlog_testkit::repo::installed;
use pinlog_testkit::server::{everything, free_port, listening, Listening};

fn sdk_server() -> Listening {
    let port = free_port();
    let mut cmd = Command::new(installed(".ci/venv/bin/python"));
    cmd.arg(installed("mcp/tests/fixtures/sdk_http_server.py"))
        .arg(port.to_string());
    listening(cmd, port)
}

fn options(revision: Option<Revision>) -> ProbeOptions {
    ProbeOptions {
        revision,
        ..ProbeOptions::default()
    }
}

fn http(url: &str) -> Target<'_> {
    Target::Http {
        url,
        headers: &[],
        guard: None,
    }
}

#[test]
fn server_everything_over_streamable_http() {
    let server = everything("streamableHttp");
    let s = probe(
        http(&server.url),
        &options(Some(Revision::R2025_11_25)),
        Caps::default(),
    )
    .outcome
    .unwrap();
    assert_eq!(s.reported_name(), Some("mcp-servers/everything"));
    assert!(s.tools.len() >= 10);
    assert!(s.complete);
    // auto: no server/discover here, so the handshake.
    let s = probe(http(&server.url), &options(None), Caps::default())
        .outcome
        .unwrap();
    assert_eq!(s.revision, Revision::R2025_11_25);
}

#[test]
fn a_python_sdk_server_over_streamable_http_in_both_eras() {
    let server = sdk_server();
    for (asked, want) in [
        (Some(Revision::R2025_11_25), Revision::R2025_11_25),
        (Some(Revision::R2025_06_18), Revision::R2025_06_18),
        (Some(Revision::R2026_07_28), Revision::R2026_07_28),
        (None, Revision::R2026_07_28),
    ] {
        let s = probe(http(&server.url), &options(asked), Caps::default())
            .outcome
            .unwrap_or_else(|e| panic!("{asked:?}: {e}"));
        assert_eq!(s.revision, want);
        assert_eq!(s.reported_name(), Some("sdk-http-fixture"));
        assert_eq!(s.instructions.as_deref(), Some("Served by the Python SDK."));
        assert_eq!(s.tools.len(), 1);
        assert_eq!(s.prompts.len(), 1);
        assert!(s.complete);
    }
}

#[test]
fn nothing_listening_is_unreachable_and_a_bad_url_is_refused() {
    let url = format!("http://127.0.0.1:{}/mcp", free_port());
    let e = probe(http(&url), &options(None), Caps::default())
        .outcome
        .unwrap_err();
    assert!(matches!(e, WireError::Unreachable(_)), "{e}");
    let e = probe(http("ftp://127.0.0.1/x"), &options(None), Caps::default())
        .outcome
        .unwrap_err();
    assert!(matches!(e, WireError::Unreachable(_)), "{e}");
}

#[test]
fn server_everything_over_the_legacy_http_sse_transport() {
    let server = everything("sse");
    let legacy = Target::SseLegacy {
        url: &server.url,
        headers: &[],
        guard: None,
    };
    let s = probe(
        legacy,
        &options(Some(Revision::R2024_11_05)),
        Caps::default(),
    )
    .outcome
    .unwrap();
    assert_eq!(s.reported_name(), Some("mcp-servers/everything"));
    assert_eq!(s.revision, Revision::R2024_11_05);
    assert!(s.tools.len() >= 10);
    assert!(s.complete);
    // Given as a Streamable HTTP URL, the refused initialize POST leads to the old transport.
    let s = probe(http(&server.url), &options(None), Caps::default())
        .outcome
        .unwrap();
    assert_eq!(s.reported_name(), Some("mcp-servers/everything"));
}

/// A one-request HTTP server on loopback that answers 401 with a resource metadata URL.
#[test]
fn a_server_asking_for_authorization_needs_credentials() {
    use std::io::{Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        for stream in listener.incoming().take(1) {
            let mut stream = stream.unwrap();
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(
                b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource\", scope=\"read\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    let url = format!("http://127.0.0.1:{port}/mcp");
    let e = probe(
        http(&url),
        &options(Some(Revision::R2025_11_25)),
        Caps::default(),
    )
    .outcome
    .unwrap_err();
    server.join().unwrap();
    assert_eq!(
        e,
        WireError::NeedsCredentials(Some(
            "http://127.0.0.1/.well-known/oauth-protected-resource".into()
        ))
    );
}

fn hostile(mode: &str, other: Option<u16>) -> Listening {
    let port = free_port();
    let mut cmd = Command::new(installed(".ci/venv/bin/python"));
    cmd.arg(installed("mcp/tests/fixtures/hostile_http.py"))
        .arg(mode)
        .arg(port.to_string());
    if let Some(o) = other {
        cmd.arg(o.to_string());
    }
    listening(cmd, port)
}

#[test]
fn an_answer_is_taken_as_it_arrives_whatever_it_says() {
    // The answer names a "method" property and the stream stays open after it.
    let server = hostile("method-in-result", None);
    let s = probe(
        http(&server.url),
        &options(Some(Revision::R2025_11_25)),
        Caps::default(),
    )
    .outcome
    .unwrap();
    assert_eq!(s.tools.len(), 1);
    // The server asks something first, on the stream that will carry the answer.
    let server = hostile("request-first", None);
    let s = probe(
        http(&server.url),
        &options(Some(Revision::R2025_11_25)),
        Caps::default(),
    )
    .outcome
    .unwrap();
    assert_eq!(s.reported_name(), Some("hostile-request-first"));
}

#[test]
fn hostile_http_servers_are_bounded_and_refused() {
    let small = Caps {
        call_ms: 1_000,
        session_ms: 3_000,
        ..Caps::default()
    };
    // A refused POST leads to the old transport, whose stream never opens: the look still ends.
    let server = hostile("post405-get-hang", None);
    let e = probe(http(&server.url), &options(None), small)
        .outcome
        .unwrap_err();
    assert!(
        matches!(e, WireError::HttpStatus(405, _) | WireError::Timeout(_)),
        "{e}"
    );
    // A redirect to another origin is not followed: nothing goes there.
    let elsewhere = TcpListener::bind("127.0.0.1:0").unwrap();
    let server = hostile("redirect", Some(elsewhere.local_addr().unwrap().port()));
    let e = probe(
        http(&server.url),
        &options(Some(Revision::R2025_11_25)),
        small,
    )
    .outcome
    .unwrap_err();
    assert!(
        matches!(e, WireError::Unreachable(ref m) if m.contains("another origin")),
        "{e}"
    );
    elsewhere.set_nonblocking(true).unwrap();
    assert!(
        elsewhere.accept().is_err(),
        "a connection reached the other origin"
    );
    // A stateless page that asks for more input is not a complete listing.
    let server = hostile("input-required", None);
    let e = probe(
        http(&server.url),
        &options(Some(Revision::R2026_07_28)),
        small,
    )
    .outcome
    .unwrap_err();
    assert!(
        matches!(e, WireError::Protocol(ref m) if m.contains("input_required")),
        "{e}"
    );
}
