//! A server for this machine only. It listens on a loopback address; and as any web page the
//! user opens can still reach a loopback port under a host name of its own (DNS rebinding), or
//! from its own origin, a request must name this machine in `Host` and, when it has one, in
//! `Origin` (the security warning of MCP's Streamable HTTP transport asks both of a local
//! server).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Why an address is not one to listen on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddrError {
    /// `localhost:` without a port after it.
    NoPort,
    /// Neither `PORT` nor `HOST:PORT`.
    Unreadable,
    /// An address other machines may reach.
    NotLoopback(SocketAddr),
}

/// `addr`, if it is a loopback address.
pub fn require(addr: SocketAddr) -> Result<SocketAddr, AddrError> {
    if addr.ip().is_loopback() {
        Ok(addr)
    } else {
        Err(AddrError::NotLoopback(addr))
    }
}

/// The address `text` names, which must be a loopback one: `PORT` (on 127.0.0.1),
/// `localhost:PORT`, or a loopback `IP:PORT` (`127.0.0.1:PORT`, `[::1]:PORT`).
pub fn listen_addr(text: &str) -> Result<SocketAddr, AddrError> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Some(port) = text.strip_prefix("localhost:") {
        let port = port.parse::<u16>().map_err(|_| AddrError::NoPort)?;
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    require(text.parse().map_err(|_| AddrError::Unreadable)?)
}

/// Why a request is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Its `Host` is missing or names another machine.
    Host,
    /// Its `Origin` is not one on this machine.
    Origin,
}

/// Whether a request to a loopback server may be served, by its `Host` and `Origin` header
/// values (`None` when it has none). `Host` must name this machine: `localhost` in any case, a
/// loopback IPv4 address or a loopback IPv6 address in brackets, and a port of digits, if any.
/// An `Origin` must be `http://` or `https://` and such a name, and nothing else: not `null`, no
/// path, no user.
pub fn check(host: Option<&[u8]>, origin: Option<&[u8]>) -> Result<(), Refused> {
    if !host.is_some_and(local_authority) {
        return Err(Refused::Host);
    }
    let local_origin = |o: &[u8]| {
        o.strip_prefix(b"http://")
            .or_else(|| o.strip_prefix(b"https://"))
            .is_some_and(local_authority)
    };
    match origin {
        Some(o) if !local_origin(o) => Err(Refused::Origin),
        _ => Ok(()),
    }
}

/// Whether `authority` (`host[:port]`, as in `Host`) names this machine, as [`check`] says.
fn local_authority(authority: &[u8]) -> bool {
    let Ok(authority) = std::str::from_utf8(authority) else {
        return false;
    };
    let (local, port) = match authority.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((ip, port)) => (
                ip.parse::<Ipv6Addr>().is_ok_and(|ip| ip.is_loopback()),
                port,
            ),
            None => return false,
        },
        None => {
            let (host, port) = authority.split_at(authority.find(':').unwrap_or(authority.len()));
            let local = host.eq_ignore_ascii_case("localhost")
                || host.parse::<Ipv4Addr>().is_ok_and(|ip| ip.is_loopback());
            (local, port)
        }
    };
    let port = match port.strip_prefix(':') {
        Some(digits) => digits.bytes().all(|b| b.is_ascii_digit()),
        None => port.is_empty(),
    };
    local && port
}
