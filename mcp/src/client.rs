//! A JSON-RPC client over one transport: requests numbered as any client numbers them, answers
//! matched by id, the server's own requests answered, every wait bounded.

use std::time::Duration;

use pinlog_core::json::Value;

use crate::caps::Caps;
use crate::error::WireError;
use crate::http::HttpTransport;
use crate::jsonrpc::{self, Incoming};
use crate::message;
use crate::noise::{self, Noise};
use crate::revision::{Era, Revision};
use crate::sse_legacy::SseLegacyTransport;
use crate::stdio::{Exit, Stderr, StdioTransport};

/// How messages reach the server.
pub enum Transport {
    Stdio(Box<StdioTransport>),
    Http(Box<HttpTransport>),
    SseLegacy(Box<SseLegacyTransport>),
}

impl Transport {
    /// Sends one message; `method` names what it is, for transports that say so in headers.
    async fn send(&mut self, message: &[u8], method: Option<&str>) -> Result<(), WireError> {
        match self {
            Transport::Stdio(t) => t.send(message).await,
            Transport::Http(t) => t.send(message, method).await,
            Transport::SseLegacy(t) => t.send(message).await,
        }
    }

    async fn recv(&mut self) -> Result<Vec<u8>, WireError> {
        match self {
            Transport::Stdio(t) => t.recv().await,
            Transport::Http(t) => t.recv().await,
            Transport::SseLegacy(t) => t.recv().await,
        }
    }

    /// Ends the connection; for a process, what it wrote on standard error, and how it ended if
    /// it ended on its own.
    pub async fn close(self) -> (Stderr, Option<Exit>) {
        match self {
            Transport::Stdio(t) => t.shutdown().await,
            Transport::Http(t) => {
                t.close().await;
                (Stderr::default(), None)
            }
            Transport::SseLegacy(_) => (Stderr::default(), None),
        }
    }
}

pub struct Client {
    transport: Transport,
    next_id: u64,
    caps: Caps,
    /// Notifications the server sent, by method, in order (e.g. a `list_changed` mid-listing).
    pub notifications: Vec<String>,
    /// Lines of a stdio server's output that were no message at all, skipped.
    pub noise: Noise,
}

impl Client {
    pub fn new(transport: Transport, caps: Caps) -> Client {
        Client {
            transport,
            next_id: 0,
            caps,
            notifications: Vec::new(),
            noise: Noise::default(),
        }
    }

    pub fn caps(&self) -> &Caps {
        &self.caps
    }

    /// Changes how long one answer may take; returns the previous limit.
    pub fn set_call_ms(&mut self, ms: u64) -> u64 {
        std::mem::replace(&mut self.caps.call_ms, ms)
    }

    /// The revision the session settled on, for transports that carry it in headers.
    pub fn settle(&mut self, revision: Revision) {
        if let Transport::Http(t) = &mut self.transport {
            t.settle(revision.as_str(), revision.era() == Era::Stateless);
        }
    }

    /// Sends a request and waits for its answer.
    pub async fn call(&mut self, method: &str, params: &[u8]) -> Result<Value<'static>, WireError> {
        let id = self.next_id;
        self.next_id += 1;
        let wait = Duration::from_millis(self.caps.call_ms);
        let exchange = async {
            self.transport
                .send(&message::request(&id.into(), method, params), Some(method))
                .await?;
            self.answer(id, method).await
        };
        match tokio::time::timeout(wait, exchange).await {
            Ok(r) => r,
            Err(_) => Err(WireError::Timeout(format!(
                "no answer to {method} within {} ms",
                self.caps.call_ms
            ))),
        }
    }

    async fn answer(&mut self, id: u64, method: &str) -> Result<Value<'static>, WireError> {
        loop {
            let bytes = self.transport.recv().await?;
            // A line on stdio that is no message at all is skipped, as the SDK clients skip it;
            // over HTTP a body or an event is meant as a message, and is read as one.
            if matches!(self.transport, Transport::Stdio(_))
                && noise::is_noise(&bytes, self.caps.message_bytes)
            {
                self.noise.skip(&bytes).map_err(WireError::Malformed)?;
                continue;
            }
            match jsonrpc::read(&bytes, self.caps.message_bytes)? {
                Incoming::Response { id: got, outcome } if got == id => {
                    return outcome.map_err(|error| WireError::Rpc {
                        method: method.to_string(),
                        error,
                    });
                }
                // An answer to an earlier request that timed out, or not for us: not this one.
                Incoming::Response { .. } | Incoming::Stray => {}
                Incoming::Request { id, method } => {
                    self.transport
                        .send(&jsonrpc::answer(&id, &method), None)
                        .await?;
                }
                Incoming::Notification { method } => {
                    if self.notifications.len() < 1000 {
                        self.notifications.push(method);
                    }
                }
            }
        }
    }

    pub async fn notify(&mut self, method: &str) -> Result<(), WireError> {
        self.transport
            .send(&message::notification(method, None), Some(method))
            .await
    }

    pub async fn close(self) -> (Stderr, Option<Exit>) {
        self.transport.close().await
    }
}
