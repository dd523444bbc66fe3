//! The one check of a server for this machine only: the address it listens on, and the `Host`
//! and `Origin` of each request (DNS rebinding), on tables of inputs.

use pinlog_mcp::loopback::{check, listen_addr, require, AddrError, Refused};

fn checked(host: Option<&str>, origin: Option<&str>) -> Result<(), Refused> {
    check(host.map(str::as_bytes), origin.map(str::as_bytes))
}

#[test]
fn only_loopback_addresses_are_listened_on() {
    for (text, addr) in [
        ("8787", "127.0.0.1:8787"),
        ("localhost:9", "127.0.0.1:9"),
        ("127.0.0.1:80", "127.0.0.1:80"),
        ("127.0.0.2:80", "127.0.0.2:80"),
        ("[::1]:80", "[::1]:80"),
    ] {
        assert_eq!(listen_addr(text).unwrap().to_string(), addr, "{text}");
    }
    for (text, why) in [
        (
            "0.0.0.0:8787",
            AddrError::NotLoopback("0.0.0.0:8787".parse().unwrap()),
        ),
        (
            "192.168.1.2:80",
            AddrError::NotLoopback("192.168.1.2:80".parse().unwrap()),
        ),
        (
            "[::]:80",
            AddrError::NotLoopback("[::]:80".parse().unwrap()),
        ),
        (
            "[::ffff:127.0.0.1]:80",
            AddrError::NotLoopback("[::ffff:127.0.0.1]:80".parse().unwrap()),
        ),
        ("localhost:", AddrError::NoPort),
        ("localhost:x", AddrError::NoPort),
        ("example.com:80", AddrError::Unreadable),
        ("localhost", AddrError::Unreadable),
        ("x", AddrError::Unreadable),
        ("", AddrError::Unreadable),
    ] {
        assert_eq!(listen_addr(text), Err(why), "{text}");
    }
    assert!(require("[::1]:0".parse().unwrap()).is_ok());
    assert!(require("10.0.0.1:0".parse().unwrap()).is_err());
}

#[test]
fn hosts_and_origins_on_this_machine_only() {
    let here = [
        "localhost",
        "localhost:8080",
        "LOCALHOST",
        "LocalHost:1",
        "LOCALHOST:1",
        "127.0.0.1:1",
        "127.0.0.1:8787",
        "127.0.0.2",
        "[::1]:9",
        "[::1]",
        "[0:0:0:0:0:0:0:1]:80",
        // RFC 3986 lets a port be empty.
        "localhost:",
    ];
    let elsewhere = [
        "localhost.evil.com",
        "evil.com",
        "evil.example:8787",
        "127.0.0.1.evil.example",
        "localhost.",
        "",
        "[::2]:80",
        "::1",
        "[::ffff:127.0.0.1]",
        "0.0.0.0",
        "127.1",
        "0177.0.0.1",
    ];
    let origins_here = [
        None,
        Some("http://localhost:3000"),
        Some("http://localhost"),
        Some("http://127.0.0.1:8787"),
        Some("https://127.0.0.1"),
        Some("http://[::1]:8080"),
    ];
    let origins_elsewhere = [
        "null",
        "https://evil.com",
        "https://evil.example",
        "http://localhost.evil.com",
        "file://",
        "ftp://localhost",
        "HTTP://localhost",
        "http://127.0.0.1@evil.example",
        "",
    ];
    for host in here {
        for origin in origins_here {
            assert_eq!(checked(Some(host), origin), Ok(()), "{host} {origin:?}");
        }
        for origin in origins_elsewhere {
            assert_eq!(
                checked(Some(host), Some(origin)),
                Err(Refused::Origin),
                "{host} {origin}"
            );
        }
    }
    for host in elsewhere.into_iter().map(Some).chain([None]) {
        for origin in origins_here.into_iter().chain(origins_elsewhere.map(Some)) {
            assert_eq!(
                checked(host, origin),
                Err(Refused::Host),
                "{host:?} {origin:?}"
            );
        }
    }
    // Header values are bytes: what is not text names nothing.
    assert_eq!(check(Some(b"localhost\xff"), None), Err(Refused::Host));
    assert_eq!(
        check(Some(b"localhost"), Some(b"http://localhost\xff")),
        Err(Refused::Origin)
    );
}

/// Malformed names of this machine, which no browser sends, that the proxy's or lookup's
/// former checks (or both) took.
#[test]
fn malformed_names_of_this_machine_are_refused() {
    for host in [
        "[127.0.0.1]:80",
        "[localhost]",
        "[[::1]]:1",
        "[::1]x",
        "[::1]]",
        "[::1",
        "[::1]:x",
        "localhost:abc",
        "localhost:80:90",
        "localhost:1@evil.com",
        "127.0.0.1:8a",
    ] {
        assert_eq!(checked(Some(host), None), Err(Refused::Host), "{host}");
    }
    for origin in [
        "http://localhost/",
        "http://localhost:3000/path",
        "http://localhost:1@evil.example",
        "http://localhost:3000?x",
        "http://localhost:abc",
        "http://[localhost]",
        "http://[127.0.0.1]",
        "http://[[::1]]",
    ] {
        assert_eq!(
            checked(Some("localhost"), Some(origin)),
            Err(Refused::Origin),
            "{origin}"
        );
    }
}
