//! A guard against server-side request forgery, for probing URLs that strangers published: only
//! public addresses are reached, on every hop (each redirect, every address a name resolves to,
//! the endpoint a legacy server names).

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use pinlog_core::address::not_public;
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
        match not_public(ip) {
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
