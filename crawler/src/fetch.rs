//! GETting a discovery source's JSON: bounded in time and size, read with the strict reader.
//! Registry answers are as hostile as any other input.

use std::io::Read;
use std::time::Duration;

use pinlog_core::json::{self, Limits, Value};

/// The largest discovery page read.
const MAX_PAGE: u64 = 16 << 20;

#[derive(Debug, Clone)]
pub struct Fetcher {
    client: reqwest::blocking::Client,
}

impl Fetcher {
    pub fn new(timeout: Duration) -> Result<Fetcher, String> {
        let client = reqwest::blocking::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(concat!("pinlog-crawler/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::limited(3))
            .build()
            .map_err(|e| format!("no HTTP client: {e}"))?;
        Ok(Fetcher { client })
    }

    /// The body at `url`, parsed strictly, with `headers` sent along.
    pub fn json(&self, url: &str, headers: &[(&str, &str)]) -> Result<Value<'static>, String> {
        let mut req = self.client.get(url);
        // One Accept header: the caller's when it names one (a PEP 691 index wants its own type).
        if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("accept"))
        {
            req = req.header("accept", "application/json");
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = req
            .send()
            .map_err(|e| format!("GET {url}: {}", chain(&e)))?;
        let status = resp.status();
        if !status.is_success() {
            return Err(format!("GET {url}: HTTP {}", status.as_u16()));
        }
        let mut body = Vec::new();
        resp.take(MAX_PAGE + 1)
            .read_to_end(&mut body)
            .map_err(|e| format!("GET {url}: reading the body: {e}"))?;
        if body.len() as u64 > MAX_PAGE {
            return Err(format!("GET {url}: the answer is over {MAX_PAGE} bytes"));
        }
        json::parse(&body, Limits::with_max_bytes(MAX_PAGE as usize))
            .map(Value::into_owned)
            .map_err(|e| format!("GET {url}: {e}"))
    }
}

/// An error with its causes, which reqwest keeps apart.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}

/// `base` joined with `path`, keeping whatever path prefix `base` has (a mirror may live under
/// one).
pub fn join(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

/// Percent-encodes a query value.
pub fn query_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The member `name` of `v`, if `v` is an object that has it.
pub fn get<'v, 'a>(v: &'v Value<'a>, name: &str) -> Option<&'v Value<'a>> {
    v.as_object()?.get(name)
}

/// The string member `name` of `v`.
pub fn text<'v>(v: &'v Value<'_>, name: &str) -> Option<&'v str> {
    get(v, name)?.as_str()
}

/// The first of `names` that `v` has: registries renamed members between versions.
pub fn get_any<'v, 'a>(v: &'v Value<'a>, names: &[&str]) -> Option<&'v Value<'a>> {
    names.iter().find_map(|n| get(v, n))
}
