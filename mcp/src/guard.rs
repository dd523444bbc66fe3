//! A guard against server-side request forgery, for probing URLs that strangers published: only
//! public addresses are reached, on every hop (each redirect, every address a name resolves to,
//! the endpoint a legacy server names).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::Url;
use url::Host;

/// Which URLs and addresses may be reached; the default is the strict guard. Cloning shares the
/// policy.
#[derive(Debug, Clone, Default)]
pub struct NetGuard {
    allow_private: bool,
    allowed: Arc<[IpAddr]>,
}

impl NetGuard {
    /// A guard refusing every address that is not public, unless `allow_private`; the scheme and
    /// credential rules hold either way.
    pub fn new(allow_private: bool) -> NetGuard {
        NetGuard {
            allow_private,
            allowed: Arc::default(),
        }
    }

    /// Lets `ip` through whatever it is: a known internal mirror, or a test's loopback server.
    pub fn allow(mut self, ip: IpAddr) -> NetGuard {
        self.allowed = self.allowed.iter().copied().chain([ip]).collect();
        self
    }

    /// Whether the address rules are skipped.
    pub fn allow_private(&self) -> bool {
        self.allow_private
    }

    /// Refuses an address that is not a public server's, naming the rule it breaks.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), String> {
        if self.allow_private || self.allowed.contains(&ip) {
            return Ok(());
        }
        match refusal(ip) {
            Some(why) => Err(format!("{ip} {why}")),
            None => Ok(()),
        }
    }

    /// Refuses a URL that is not `http` or `https`, carries credentials, or names a refused
    /// address. A name is judged by the guarded transports when they resolve it, as the
    /// addresses it names may change between now and then.
    pub fn check_url(&self, url: &Url) -> Result<(), String> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("the scheme {} is not http or https", url.scheme()));
        }
        // Credentials in a URL are sent as Basic authorization: a published URL has no business
        // making the crawler authenticate anywhere.
        if !url.username().is_empty() || url.password().is_some() {
            return Err("the URL carries credentials".into());
        }
        match url.host() {
            Some(Host::Ipv4(ip)) => self.check_ip(ip.into()),
            Some(Host::Ipv6(ip)) => self.check_ip(ip.into()),
            Some(Host::Domain(_)) => Ok(()),
            None => Err("the URL has no host".into()),
        }
    }

    /// A resolver for reqwest that refuses a whole name if any address it resolves to is refused,
    /// so that a name answering with a public and a private address cannot be used to rebind.
    /// reqwest does not resolve IP literals: [`NetGuard::check_url`] judges those.
    pub(crate) fn resolver(&self) -> GuardedResolver {
        GuardedResolver(self.clone())
    }
}

/// Why a guard refused a request; found again in reqwest's error chain.
#[derive(Debug)]
pub(crate) struct Refusal(pub String);

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refusal {}

/// The guard's refusal somewhere in the causes of `e`, if it is one.
pub(crate) fn refusal_in(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut cause = Some(e);
    while let Some(c) = cause {
        if let Some(r) = c.downcast_ref::<Refusal>() {
            return Some(r.0.clone());
        }
        cause = c.source();
    }
    None
}

pub(crate) struct GuardedResolver(NetGuard);

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let guard = self.0.clone();
        Box::pin(async move {
            let host = name.as_str();
            // Port 0: reqwest puts the URL's port in.
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, 0)).await?.collect();
            for a in &addrs {
                guard.check_ip(a.ip()).map_err(|why| {
                    Refusal(format!("{host} resolves to a refused address: {why}"))
                })?;
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// Why `ip` is no public server's address ("is loopback"), or `None` if it may be one.
fn refusal(ip: IpAddr) -> Option<String> {
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
