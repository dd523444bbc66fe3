//! The Streamable HTTP transport: each message POSTed to one endpoint; the answer comes back as
//! JSON or as a stream of server-sent events; a session id, once given, goes on every request.

use std::collections::VecDeque;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use reqwest::{Client, Response, StatusCode, Url};

use crate::caps::Caps;
use crate::error::WireError;
use crate::guard::{refusal_in, NetGuard, Refusal};

const SESSION: &str = "mcp-session-id";
const VERSION: &str = "mcp-protocol-version";
const METHOD: &str = "mcp-method";

pub struct HttpTransport {
    client: Client,
    url: Url,
    headers: HeaderMap,
    session: Option<HeaderValue>,
    /// Sent as `MCP-Protocol-Version` once a revision is settled.
    revision: Option<HeaderValue>,
    /// The stateless era names each request's method in a header too.
    method_header: bool,
    /// Messages read from answers, not yet taken.
    inbox: VecDeque<Vec<u8>>,
    /// The event stream answering the last request, read one event at a time by
    /// [`Self::recv`] so that a request the server sends on it can be answered before its end.
    stream: Option<(Response, EventParser)>,
    received: u64,
    caps: Caps,
}

impl HttpTransport {
    /// A transport to `url`, sending `headers` (from a client configuration) on every request;
    /// with a guard, every hop is held to it.
    pub fn new(
        url: &str,
        headers: &[(String, String)],
        caps: Caps,
        guard: Option<&NetGuard>,
    ) -> Result<Self, WireError> {
        let url = http_url(url, guard)?;
        let map = header_map(headers)?;
        let client = client_builder(guard)
            .connect_timeout(Duration::from_millis(caps.call_ms))
            .timeout(Duration::from_millis(caps.call_ms))
            .build()
            .map_err(|e| WireError::Unreachable(format!("no HTTP client: {e}")))?;
        Ok(HttpTransport {
            client,
            url,
            headers: map,
            session: None,
            revision: None,
            method_header: false,
            inbox: VecDeque::new(),
            stream: None,
            received: 0,
            caps,
        })
    }

    /// The revision settled on: sent as `MCP-Protocol-Version` from now on; the stateless era
    /// also sends `Mcp-Method`.
    pub fn settle(&mut self, revision: &str, stateless: bool) {
        self.revision = HeaderValue::from_str(revision).ok();
        self.method_header = stateless;
    }

    /// POSTs one message; whatever the server answers with is kept for [`Self::recv`].
    pub async fn send(&mut self, message: &[u8], method: Option<&str>) -> Result<(), WireError> {
        let mut req = self
            .client
            .post(self.url.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(message.to_vec());
        if let Some(s) = &self.session {
            req = req.header(SESSION, s.clone());
        }
        if let Some(v) = &self.revision {
            req = req.header(VERSION, v.clone());
        }
        if let (true, Some(m)) = (self.method_header, method) {
            req = req.header(METHOD, m);
        }
        let resp = req.send().await.map_err(|e| {
            let other = if e.is_timeout() {
                WireError::Timeout
            } else {
                WireError::Unreachable
            };
            refused_or(&self.url, &e, other)
        })?;
        if let Some(s) = resp.headers().get(SESSION) {
            self.session = Some(s.clone());
        }
        let status = resp.status();
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            return Err(WireError::NeedsCredentials(resource_metadata(&resp)));
        }
        if status == StatusCode::ACCEPTED {
            return Ok(());
        }
        let is_sse = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if is_sse && status.is_success() {
            // A stream answering a request replaces the last one, whose request is answered;
            // one answering our answer to the server carries nothing we wait for.
            if method.is_some() {
                self.stream = Some((resp, EventParser::default()));
            }
            return Ok(());
        }
        let body = self.read_body(resp).await?;
        // An error status may still carry a JSON-RPC error: the client reads it (the era probe
        // depends on it); anything else is the transport's failure.
        let json = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        if status.is_success() || json {
            if !body.iter().all(u8::is_ascii_whitespace) {
                self.inbox.push_back(body);
            }
            return Ok(());
        }
        Err(WireError::HttpStatus(status.as_u16(), self.url.to_string()))
    }

    /// The next message: one already read, or the next event of the open stream.
    pub async fn recv(&mut self) -> Result<Vec<u8>, WireError> {
        loop {
            if let Some(m) = self.inbox.pop_front() {
                return Ok(m);
            }
            let Some((resp, parser)) = self.stream.as_mut() else {
                return Err(WireError::Closed("the HTTP answer held no message".into()));
            };
            let Some(chunk) = resp.chunk().await.map_err(read_error)? else {
                self.stream = None;
                continue;
            };
            let events = parser.feed(&chunk, self.caps.message_bytes)?;
            self.count(chunk.len())?;
            // A server may open the stream with an event of empty data, to prime resumption.
            self.inbox.extend(
                events
                    .into_iter()
                    .filter(|d| !d.iter().all(u8::is_ascii_whitespace)),
            );
        }
    }

    /// Ends the session, if the server gave one.
    pub async fn close(self) {
        if let Some(s) = self.session {
            let _ = self
                .client
                .delete(self.url)
                .headers(self.headers)
                .header(SESSION, s)
                .send()
                .await;
        }
    }

    fn count(&mut self, n: usize) -> Result<(), WireError> {
        self.received += n as u64;
        if self.received > self.caps.total_bytes {
            return Err(WireError::TooLarge(format!(
                "more than {} bytes from the server in all",
                self.caps.total_bytes
            )));
        }
        Ok(())
    }

    async fn read_body(&mut self, mut resp: Response) -> Result<Vec<u8>, WireError> {
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(read_error)? {
            self.count(chunk.len())?;
            body.extend_from_slice(&chunk);
            if body.len() > self.caps.message_bytes {
                return Err(WireError::TooLarge(format!(
                    "an answer longer than {} bytes",
                    self.caps.message_bytes
                )));
            }
        }
        Ok(body)
    }
}

/// A client without a referer, its redirects held to [`redirects`]; with a guard, names resolved
/// by the guard and no proxy from the environment (one would resolve and connect for us).
pub(crate) fn client_builder(guard: Option<&NetGuard>) -> reqwest::ClientBuilder {
    let builder = Client::builder().redirect(redirects(guard)).referer(false);
    match guard {
        Some(g) => builder.dns_resolver(g.resolver()).no_proxy(),
        None => builder,
    }
}

/// At most 3 redirects, none to another origin: a server's messages, and the headers a
/// configuration gives it, go to that server only. With a guard, each hop is checked too, and a
/// redirect not followed is the guard's refusal.
fn redirects(guard: Option<&NetGuard>) -> reqwest::redirect::Policy {
    let guard = guard.cloned();
    reqwest::redirect::Policy::custom(move |attempt| {
        let first = attempt.previous().first().map(Url::origin);
        let why = if let Some(Err(why)) = guard.as_ref().map(|g| g.check_url(attempt.url())) {
            format!("a redirect to {}: {why}", attempt.url())
        } else if attempt.previous().len() > 3 {
            "more than 3 redirects".to_string()
        } else if first.is_some_and(|o| o != attempt.url().origin()) {
            "a redirect to another origin".to_string()
        } else {
            return attempt.follow();
        };
        match guard {
            Some(_) => attempt.error(Refusal(why)),
            None => attempt.error(why),
        }
    })
}

/// An `http` or `https` URL, held to the guard if there is one.
pub(crate) fn http_url(url: &str, guard: Option<&NetGuard>) -> Result<Url, WireError> {
    let parsed =
        Url::parse(url).map_err(|e| WireError::Unreachable(format!("not a URL: {url}: {e}")))?;
    if let Some(g) = guard {
        g.check_url(&parsed)
            .map_err(|why| WireError::Refused(format!("{parsed}: {why}")))?;
    }
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(WireError::Unreachable(format!(
            "{url} is not an http or https URL"
        )));
    }
    Ok(parsed)
}

/// A request's failure: the guard's refusal if it was one (the resolver's or the redirect
/// policy's, deep in reqwest's causes), else `other`.
pub(crate) fn refused_or(
    url: &Url,
    e: &reqwest::Error,
    other: fn(String) -> WireError,
) -> WireError {
    match refusal_in(e) {
        Some(why) => WireError::Refused(format!("{url}: {why}")),
        None => other(format!("{url}: {}", describe(e))),
    }
}

/// Headers from a client configuration, refused if not valid HTTP.
pub(crate) fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, WireError> {
    let mut map = HeaderMap::new();
    for (k, v) in headers {
        let name = HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| WireError::Unreachable(format!("bad header name {k:?}")))?;
        let value = HeaderValue::from_str(v)
            .map_err(|_| WireError::Unreachable(format!("bad value for header {k}")))?;
        map.insert(name, value);
    }
    Ok(map)
}

/// An HTTP error with its causes: "error following redirect" says little without them.
pub(crate) fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

fn read_error(e: reqwest::Error) -> WireError {
    if e.is_timeout() {
        WireError::Timeout(format!("reading the answer: {e}"))
    } else {
        WireError::Closed(format!("reading the answer: {e}"))
    }
}

/// `resource_metadata="…"` from a `WWW-Authenticate` header (RFC 9728).
fn resource_metadata(resp: &Response) -> Option<String> {
    let h = resp.headers().get(WWW_AUTHENTICATE)?.to_str().ok()?;
    let at = h.find("resource_metadata=")? + "resource_metadata=".len();
    let rest = &h[at..];
    let value = match rest.strip_prefix('"') {
        Some(q) => &q[..q.find('"')?],
        None => rest.split([',', ' ']).next()?,
    };
    Some(value.to_string())
}

/// Server-sent events, as the HTML standard frames them: `data:` lines joined by newlines, an
/// event dispatched at a blank line; comments and other fields ignored.
#[derive(Default)]
pub struct EventParser {
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    event: Vec<u8>,
}

/// One server-sent event: its type (`message` when none was named) and its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub kind: String,
    pub data: Vec<u8>,
}

impl EventParser {
    /// Feeds bytes; returns the data of every event they complete.
    pub fn feed(&mut self, bytes: &[u8], max: usize) -> Result<Vec<Vec<u8>>, WireError> {
        Ok(self
            .feed_events(bytes, max)?
            .into_iter()
            .map(|e| e.data)
            .collect())
    }

    /// Feeds bytes; returns every event they complete.
    pub fn feed_events(&mut self, bytes: &[u8], max: usize) -> Result<Vec<Event>, WireError> {
        let mut out = Vec::new();
        for &b in bytes {
            if b != b'\n' {
                self.line.push(b);
                if self.line.len() > max {
                    return Err(WireError::TooLarge(format!(
                        "an event line longer than {max} bytes"
                    )));
                }
                continue;
            }
            let mut line = std::mem::take(&mut self.line);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.is_empty() {
                let kind = std::mem::take(&mut self.event);
                if self.has_data {
                    out.push(Event {
                        kind: if kind.is_empty() {
                            "message".into()
                        } else {
                            String::from_utf8_lossy(&kind).into_owned()
                        },
                        data: std::mem::take(&mut self.data),
                    });
                    self.has_data = false;
                }
                continue;
            }
            let (field, value) = match line.iter().position(|&c| c == b':') {
                Some(0) => continue,
                Some(i) => {
                    let v = &line[i + 1..];
                    (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
                }
                None => (&line[..], &b""[..]),
            };
            if field == b"event" {
                self.event = value.to_vec();
            }
            if field == b"data" {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
                if self.data.len() > max {
                    return Err(WireError::TooLarge(format!(
                        "an event longer than {max} bytes"
                    )));
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_framed_as_the_standard_says() {
        let mut p = EventParser::default();
        let stream = b": comment\nevent: message\nid: 1\ndata: {\"a\":\r\ndata: 1}\n\nretry: 10\n\ndata:x\n\n";
        // Fed in awkward pieces, the same events come out.
        let mut got = Vec::new();
        for piece in stream.chunks(3) {
            got.extend(p.feed(piece, 1 << 20).unwrap());
        }
        assert_eq!(got, [b"{\"a\":\n1}".to_vec(), b"x".to_vec()]);
        assert!(EventParser::default().feed(&[b'a'; 100], 10).is_err());
    }
}
