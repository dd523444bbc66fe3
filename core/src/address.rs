//! Which addresses are no public server's: loopback, private, link-local, reserved and the rest,
//! each named by the rule it breaks. The crawler's guard against request forgery and the served
//! log's guard against redirects share this one judgement.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `ip` is no public server's address ("is loopback"), or `None` if it may be one.
pub fn not_public(ip: IpAddr) -> Option<String> {
    match ip {
        IpAddr::V4(v4) => v4_rule(v4).map(|r| format!("is {r}")),
        IpAddr::V6(v6) => {
            if let Some(r) = v6_rule(v6) {
                return Some(format!("is {r}"));
            }
            // Reached through the IPv4 address inside, so judged by it.
            let v4 = embedded_v4(v6)?;
            v4_rule(v4).map(|r| format!("embeds {v4}, which is {r}"))
        }
    }
}

fn v4_rule(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(if ip.is_unspecified() {
        "unspecified"
    } else if a == 0 {
        "in 0.0.0.0/8 (this network)"
    } else if a == 127 {
        "loopback"
    } else if a == 10 || (a == 172 && b & 0xf0 == 16) || (a == 192 && b == 168) {
        "private"
    } else if ip == Ipv4Addr::new(169, 254, 169, 254) {
        "link-local (cloud metadata)"
    } else if a == 169 && b == 254 {
        "link-local"
    } else if a == 100 && b & 0xc0 == 64 {
        "shared address space (CGNAT, 100.64.0.0/10)"
    } else if ip.is_broadcast() {
        "broadcast"
    } else if ip.is_multicast() {
        "multicast"
    } else if a >= 240 {
        "reserved (240.0.0.0/4)"
    } else if matches!((a, b, c), (192, 0, 2) | (198, 51, 100) | (203, 0, 113)) {
        "for documentation"
    } else if a == 198 && b & 0xfe == 18 {
        "for benchmarking (198.18.0.0/15)"
    } else if (a, b, c) == (192, 0, 0) {
        "for IETF protocol assignments (192.0.0.0/24)"
    } else {
        return None;
    })
}

/// The IPv6 rules that do not look inside for an IPv4 address.
fn v6_rule(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    Some(if ip.is_unspecified() {
        "unspecified"
    } else if ip.is_loopback() {
        "loopback"
    } else if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        "unique-local (cloud metadata)"
    } else if s[0] & 0xfe00 == 0xfc00 {
        "unique-local (fc00::/7)"
    } else if s[0] & 0xffc0 == 0xfe80 {
        "link-local"
    } else if s[0] & 0xffc0 == 0xfec0 {
        "site-local (fec0::/10)"
    } else if ip.is_multicast() {
        "multicast"
    } else if s[..2] == [0x2001, 0xdb8] || (s[0] == 0x3fff && s[1] < 0x1000) {
        "for documentation"
    } else if s[..3] == [0x2001, 2, 0] {
        "for benchmarking (2001:2::/48)"
    } else if s[..2] == [0x2001, 0] {
        // Its IPv4 addresses are obfuscated, and it tunnels anywhere.
        "Teredo (2001::/32)"
    } else if s[..3] == [0x64, 0xff9b, 1] {
        "local-use NAT64 (64:ff9b:1::/48)"
    } else if embedded_v4(ip).is_none() && s[0] & 0xe000 != 0x2000 {
        // Every public unicast address is in 2000::/3, bar the forms carrying IPv4 inside.
        "not global unicast (outside 2000::/3)"
    } else {
        return None;
    })
}

/// The IPv4 address inside an IPv4-mapped, IPv4-compatible, NAT64 (64:ff9b::/96) or 6to4
/// (2002::/16) address.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let v4 = |hi: u16, lo: u16| Some(Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo)));
    match s {
        [0, 0, 0, 0, 0, 0xffff, hi, lo] | [0, 0, 0, 0, 0, 0, hi, lo] => v4(hi, lo),
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => v4(hi, lo),
        [0x2002, hi, lo, ..] => v4(hi, lo),
        _ => None,
    }
}
