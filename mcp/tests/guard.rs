//! The SSRF guard: its rules on a table of addresses and URLs (nothing is contacted), and its
//! enforcement on every hop against servers on loopback only.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use pinlog_mcp::guard::NetGuard;
use pinlog_mcp::probe::{probe, ProbeReport, Target};
use pinlog_mcp::revision::Revision;
use pinlog_mcp::surface::ProbeOptions;
use pinlog_mcp::{Caps, WireError};
use pinlog_testkit::repo::installed;
use pinlog_testkit::server::{everything, free_port, listening};
use reqwest::Url;

const LOCAL: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

#[test]
fn addresses_that_are_not_public_are_refused_by_name() {
    let strict = NetGuard::new(false);
    let refused = [
        ("0.0.0.0", "unspecified"),
        ("0.1.2.3", "0.0.0.0/8"),
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local (cloud metadata)"),
        ("169.254.1.1", "link-local"),
        ("100.64.0.1", "CGNAT"),
        ("100.100.100.200", "CGNAT"),
        ("100.127.255.255", "CGNAT"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("255.255.255.255", "broadcast"),
        ("240.0.0.1", "reserved"),
        ("192.0.2.1", "documentation"),
        ("198.51.100.7", "documentation"),
        ("203.0.113.9", "documentation"),
        ("198.18.0.1", "benchmarking"),
        ("198.19.255.1", "benchmarking"),
        ("192.0.0.8", "192.0.0.0/24"),
        ("::", "unspecified"),
        ("::1", "loopback"),
        ("fc00::1", "unique-local"),
        ("fd12:3456::1", "unique-local"),
        ("fd00:ec2::254", "cloud metadata"),
        ("fe80::1", "link-local"),
        ("febf::1", "link-local"),
        ("ff02::1", "multicast"),
        ("2001:db8::1", "documentation"),
        ("3fff:fff::1", "documentation"),
        ("::ffff:127.0.0.1", "embeds 127.0.0.1, which is loopback"),
        ("::ffff:169.254.169.254", "cloud metadata"),
        ("::10.0.0.1", "embeds 10.0.0.1, which is private"),
        ("64:ff9b::10.0.0.1", "embeds 10.0.0.1, which is private"),
        ("64:ff9b::a9fe:a9fe", "cloud metadata"),
        ("2002:7f00:1::", "embeds 127.0.0.1"),
        ("2002:c0a8:101::1", "embeds 192.168.1.1"),
        ("100::1", "not global unicast"),
    ];
    for (ip, rule) in refused {
        let addr: IpAddr = ip.parse().unwrap();
        let why = strict.check_ip(addr).expect_err(ip);
        assert!(why.contains(rule), "{ip}: {why}");
        // The private policy skips every address rule.
        assert_eq!(NetGuard::new(true).check_ip(addr), Ok(()), "{ip}");
    }
    for ip in [
        "1.1.1.1",
        "8.8.8.8",
        "93.184.215.14",
        "100.63.255.255",
        "100.128.0.1",
        "172.15.255.255",
        "172.32.0.1",
        "169.253.1.1",
        "2606:4700::1111",
        "2a00:1450:4001:80b::200e",
        "::ffff:1.1.1.1",
        "64:ff9b::1.1.1.1",
        "2002:101:101::1",
        "3fff:1000::1",
    ] {
        assert_eq!(strict.check_ip(ip.parse().unwrap()), Ok(()), "{ip}");
    }
    // One address let through leaves its neighbours refused.
    let one = NetGuard::new(false).allow(LOCAL);
    assert_eq!(one.check_ip(LOCAL), Ok(()));
    assert!(one.check_ip("127.0.0.2".parse().unwrap()).is_err());
}

#[test]
fn urls_are_judged_by_scheme_credentials_and_literal_address() {
    let strict = NetGuard::new(false);
    let private = NetGuard::new(true);
    let url = |s: &str| Url::parse(s).unwrap();
    // The URL parser reads the odd spellings of IPv4 as the address they mean.
    for odd in [
        "http://0x7f.1/",
        "http://2130706433/",
        "http://0177.0.0.1/",
        "http://127.1/",
        "http://0x7f000001:8080/mcp",
    ] {
        assert_eq!(url(odd).host_str(), Some("127.0.0.1"), "{odd}");
        let why = strict.check_url(&url(odd)).expect_err(odd);
        assert!(why.contains("127.0.0.1 is loopback"), "{odd}: {why}");
    }
    let refused = [
        ("http://169.254.169.254/latest/meta-data/", "cloud metadata"),
        ("http://[fd00:ec2::254]/", "cloud metadata"),
        ("http://[::1]:8080/mcp", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://[::ffff:7f00:1]/", "loopback"),
        ("http://[64:ff9b::c0a8:1]/", "embeds 192.168.0.1"),
        ("https://100.64.1.1/", "CGNAT"),
        ("http://0.0.0.0:80/", "unspecified"),
    ];
    for (u, rule) in refused {
        let why = strict.check_url(&url(u)).expect_err(u);
        assert!(why.contains(rule), "{u}: {why}");
        assert_eq!(private.check_url(&url(u)), Ok(()), "{u}");
    }
    // Whatever the address policy.
    for guard in [&strict, &private] {
        for (u, rule) in [
            ("ftp://example.com/", "scheme ftp"),
            ("file:///etc/passwd", "scheme file"),
            ("http://user:secret@example.com/mcp", "credentials"),
            ("http://user@example.com/mcp", "credentials"),
            ("https://:secret@example.com/mcp", "credentials"),
        ] {
            let why = guard.check_url(&url(u)).expect_err(u);
            assert!(why.contains(rule), "{u}: {why}");
        }
    }
    for u in [
        "https://example.com/mcp",
        "http://1.1.1.1/",
        "https://[2606:4700::1111]:443/mcp",
        // A name is judged when it is resolved, not here.
        "http://localhost/",
    ] {
        assert_eq!(strict.check_url(&url(u)), Ok(()), "{u}");
    }
}

fn http<'a>(url: &'a str, guard: &'a NetGuard) -> Target<'a> {
    Target::Http {
        url,
        headers: &[],
        guard: Some(guard),
    }
}

fn look(target: Target<'_>) -> ProbeReport {
    let options = ProbeOptions {
        revision: Some(Revision::R2025_11_25),
        ..ProbeOptions::default()
    };
    let quick = Caps {
        call_ms: 5_000,
        session_ms: 20_000,
        ..Caps::default()
    };
    probe(target, &options, quick)
}

fn refused(l: ProbeReport, rule: &str) {
    let e = l.outcome.unwrap_err();
    assert!(
        matches!(&e, WireError::Refused(m) if m.contains(rule)),
        "{e}"
    );
    assert!(e.to_string().starts_with("url-refused: "), "{e}");
}

#[test]
fn a_guard_refuses_a_loopback_mcp_server_unless_private_addresses_are_allowed() {
    let port = free_port();
    let mut cmd = Command::new(installed(".ci/venv/bin/python"));
    cmd.arg(installed("mcp/tests/fixtures/sdk_http_server.py"))
        .arg(port.to_string());
    let server = listening(cmd, port);
    let by_ip = format!("http://127.0.0.1:{}/mcp", server.port);
    let by_name = format!("http://localhost:{}/mcp", server.port);
    let strict = NetGuard::new(false);
    refused(look(http(&by_ip, &strict)), "127.0.0.1 is loopback");
    // The name resolves to loopback: refused at resolution, whichever address came first.
    refused(
        look(http(&by_name, &strict)),
        "localhost resolves to a refused address",
    );
    // Auto tries more than one session and era; still refused, not unreachable.
    let auto = probe(
        http(&by_ip, &strict),
        &ProbeOptions::default(),
        Caps::default(),
    );
    refused(auto, "loopback");
    let private = NetGuard::new(true);
    for url in [&by_ip, &by_name] {
        let s = look(http(url, &private))
            .outcome
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(s.reported_name(), Some("sdk-http-fixture"));
    }
    let only_this = NetGuard::new(false).allow(LOCAL);
    assert!(look(http(&by_ip, &only_this)).outcome.is_ok());
}

#[test]
fn a_guard_holds_the_legacy_transport_too() {
    let server = everything("sse");
    let url = server.url.clone();
    let legacy = |guard| Target::SseLegacy {
        url: &url,
        headers: &[],
        guard: Some(guard),
    };
    let (strict, private) = (NetGuard::new(false), NetGuard::new(true));
    refused(look(legacy(&strict)), "loopback");
    let s = look(legacy(&private)).outcome.unwrap();
    assert_eq!(s.reported_name(), Some("mcp-servers/everything"));
}

/// A loopback HTTP server answering every request with the head `answer(path)` gives, and
/// counting requests; the connection is closed after each.
fn tiny_server(answer: impl Fn(&str, u16) -> String + Send + 'static) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&count);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            let Some(path) = read_request(&mut stream) else {
                continue;
            };
            seen.fetch_add(1, Ordering::SeqCst);
            let _ = stream.write_all(answer(&path, port).as_bytes());
        }
    });
    (port, count)
}

/// Reads one whole request (head and body, so that closing does not reset the connection);
/// returns its path.
fn read_request(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut chunk).ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap());
    while buf.len() < head_end + length {
        let n = stream.read(&mut chunk).ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    }
    head.split(' ').nth(1).map(str::to_string)
}

fn redirect(location: &str) -> String {
    format!(
        "HTTP/1.1 307 Temporary Redirect\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
}

/// `/hopN` redirects to `/hopN+1` until `/hop{hops}`, which is not found.
fn chain(hops: usize) -> (u16, Arc<AtomicUsize>) {
    tiny_server(move |path, _| {
        let n: usize = path.trim_start_matches("/hop").parse().unwrap();
        if n < hops {
            redirect(&format!("/hop{}", n + 1))
        } else {
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".into()
        }
    })
}

#[test]
fn redirects_are_held_to_the_guard_hop_by_hop() {
    let private = NetGuard::new(true);
    // Three redirects are followed, to the end of the chain.
    let (port, _) = chain(3);
    let url = format!("http://127.0.0.1:{port}/hop0");
    let e = look(http(&url, &private)).outcome.unwrap_err();
    assert!(matches!(e, WireError::HttpStatus(404, _)), "{e}");
    // A fourth is refused, and never requested.
    let (port, count) = chain(4);
    let url = format!("http://127.0.0.1:{port}/hop0");
    refused(look(http(&url, &private)), "more than 3 redirects");
    assert_eq!(count.load(Ordering::SeqCst), 4);
    // A redirect to an address the guard refuses: 127.0.0.1 is let through, 127.0.0.2 is not.
    let (port, count) = tiny_server(|_, port| redirect(&format!("http://127.0.0.2:{port}/steal")));
    let url = format!("http://127.0.0.1:{port}/mcp");
    let only_this = NetGuard::new(false).allow(LOCAL);
    refused(look(http(&url, &only_this)), "127.0.0.2 is loopback");
    assert_eq!(count.load(Ordering::SeqCst), 1);
    // Same origin but with credentials: refused even when private addresses are allowed.
    let (port, _) = tiny_server(|_, port| redirect(&format!("http://u:p@127.0.0.1:{port}/x")));
    let url = format!("http://127.0.0.1:{port}/mcp");
    refused(look(http(&url, &private)), "credentials");
}

#[test]
fn the_endpoint_a_legacy_server_names_is_held_to_the_guard() {
    let only_this = NetGuard::new(false).allow(LOCAL);
    for (endpoint, rule) in [
        ("http://127.0.0.2:{port}/messages", "127.0.0.2 is loopback"),
        ("http://u:p@127.0.0.1:{port}/messages", "credentials"),
    ] {
        let (port, _) = tiny_server(move |_, port| {
            let data = endpoint.replace("{port}", &port.to_string());
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\nevent: endpoint\ndata: {data}\n\n"
            )
        });
        let url = format!("http://127.0.0.1:{port}/sse");
        let target = Target::SseLegacy {
            url: &url,
            headers: &[],
            guard: Some(&only_this),
        };
        refused(look(target), rule);
    }
}
