//! The HTTP+SSE transport of 2024-11-05, for servers that predate Streamable HTTP: a GET opens an
//! event stream whose first event (`endpoint`) names where to POST; answers come back as
//! `message` events on that stream.

use std::collections::VecDeque;
use std::time::Duration;

use reqwest::header::{HeaderMap, ACCEPT, CONTENT_TYPE};
use reqwest::{Client, Response, StatusCode, Url};

use crate::caps::Caps;
use crate::error::WireError;
use crate::guard::NetGuard;
use crate::http::{client_builder, header_map, http_url, refused_or, EventParser};

pub struct SseLegacyTransport {
    client: Client,
    endpoint: Url,
    headers: HeaderMap,
    stream: Response,
    parser: EventParser,
    inbox: VecDeque<Vec<u8>>,
    received: u64,
    caps: Caps,
}

impl SseLegacyTransport {
    /// Opens the event stream at `url` and waits for the `endpoint` event; with a guard, every
    /// hop, the endpoint included, is held to it.
    pub async fn connect(
        url: &str,
        headers: &[(String, String)],
        caps: Caps,
        guard: Option<&NetGuard>,
    ) -> Result<SseLegacyTransport, WireError> {
        let base = http_url(url, guard)?;
        let map = header_map(headers)?;
        // The stream stays open for the session: only the connection has a timeout; reads are
        // bounded by the client's per-call wait.
        let client = client_builder(guard)
            .connect_timeout(Duration::from_millis(caps.call_ms))
            .build()
            .map_err(|e| WireError::Unreachable(format!("no HTTP client: {e}")))?;
        let wait = Duration::from_millis(caps.call_ms);
        let get = client
            .get(base.clone())
            .headers(map.clone())
            .header(ACCEPT, "text/event-stream")
            .send();
        let stream = tokio::time::timeout(wait, get)
            .await
            .map_err(|_| WireError::Timeout(format!("no answer from {base}")))?
            .map_err(|e| refused_or(&base, &e, WireError::Unreachable))?;
        let status = stream.status();
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            return Err(WireError::NeedsCredentials(None));
        }
        if !status.is_success() {
            return Err(WireError::HttpStatus(status.as_u16(), base.to_string()));
        }
        let mut t = SseLegacyTransport {
            client,
            endpoint: base.clone(),
            headers: map,
            stream,
            parser: EventParser::default(),
            inbox: VecDeque::new(),
            received: 0,
            caps,
        };
        let first = tokio::time::timeout(wait, t.next_event())
            .await
            .map_err(|_| WireError::Timeout(format!("no endpoint event from {base}")))??;
        if first.0 != "endpoint" {
            return Err(WireError::Protocol(format!(
                "the first event from {base} is {:?}, not endpoint",
                first.0
            )));
        }
        let target = String::from_utf8_lossy(&first.1).trim().to_string();
        // Resolved against, and held to the origin of, where the stream really came from.
        let served_from = t.stream.url().clone();
        t.endpoint = served_from.join(&target).map_err(|e| {
            WireError::Protocol(format!("the endpoint {target:?} is not a URL: {e}"))
        })?;
        // The same client POSTs there, so names are resolved by the guard; this is for the rest.
        if let Some(Err(why)) = guard.map(|g| g.check_url(&t.endpoint)) {
            return Err(WireError::Refused(format!(
                "the endpoint {}: {why}",
                t.endpoint
            )));
        }
        if t.endpoint.origin() != base.origin() || served_from.origin() != base.origin() {
            return Err(WireError::Protocol(format!(
                "the endpoint {} is on another origin than {base}",
                t.endpoint
            )));
        }
        Ok(t)
    }

    /// The next event on the stream: (type, data).
    async fn next_event(&mut self) -> Result<(String, Vec<u8>), WireError> {
        loop {
            let chunk = self
                .stream
                .chunk()
                .await
                .map_err(|e| WireError::Closed(format!("the event stream: {e}")))?
                .ok_or_else(|| WireError::Closed("the server closed the event stream".into()))?;
            self.received += chunk.len() as u64;
            if self.received > self.caps.total_bytes {
                return Err(WireError::TooLarge(format!(
                    "more than {} bytes from the server in all",
                    self.caps.total_bytes
                )));
            }
            for e in self.parser.feed_events(&chunk, self.caps.message_bytes)? {
                if e.kind == "endpoint" {
                    return Ok((e.kind, e.data));
                }
                if e.kind == "message" && !e.data.iter().all(u8::is_ascii_whitespace) {
                    self.inbox.push_back(e.data);
                }
            }
            if let Some(m) = self.inbox.pop_front() {
                return Ok(("message".into(), m));
            }
        }
    }

    pub async fn send(&mut self, message: &[u8]) -> Result<(), WireError> {
        let resp = self
            .client
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .timeout(Duration::from_millis(self.caps.call_ms))
            .body(message.to_vec())
            .send()
            .await
            .map_err(|e| refused_or(&self.endpoint, &e, WireError::Unreachable))?;
        if !resp.status().is_success() {
            return Err(WireError::HttpStatus(
                resp.status().as_u16(),
                self.endpoint.to_string(),
            ));
        }
        Ok(())
    }

    pub async fn recv(&mut self) -> Result<Vec<u8>, WireError> {
        if let Some(m) = self.inbox.pop_front() {
            return Ok(m);
        }
        loop {
            let (kind, data) = self.next_event().await?;
            if kind == "message" {
                return Ok(data);
            }
        }
    }
}
