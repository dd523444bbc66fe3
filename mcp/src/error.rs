//! Why talking to a server failed. Every message may quote the server; render it safely before
//! printing (core's `render`).

use std::fmt;

use crate::jsonrpc::RpcError;

#[derive(Debug, Clone, PartialEq)]
pub enum WireError {
    /// The server could not be started or reached.
    Unreachable(String),
    /// A guard refused a URL or an address on the way to the server (`guard`); the message names
    /// the rule.
    Refused(String),
    /// The server answered something that is not one strict JSON-RPC message.
    Malformed(String),
    /// A message, or all messages together, passed a configured cap.
    TooLarge(String),
    /// No answer in the time allowed.
    Timeout(String),
    /// The server closed the connection or exited before answering.
    Closed(String),
    /// The server answered a request with a JSON-RPC error.
    Rpc { method: String, error: RpcError },
    /// An HTTP status other than success, with no JSON-RPC answer in its body.
    HttpStatus(u16, String),
    /// The server wants credentials (HTTP 401 or 403); the resource metadata URL if it gave one.
    NeedsCredentials(Option<String>),
    /// The server broke a rule of the protocol (a version this build does not know, a repeated
    /// cursor, too many pages).
    Protocol(String),
    /// A listing never ends: a cursor came back, or there are more pages than the caps allow.
    Pagination(String),
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Unreachable(m) => write!(f, "unreachable: {m}"),
            WireError::Refused(m) => write!(f, "url-refused: {m}"),
            WireError::Malformed(m) => write!(f, "malformed-answer: {m}"),
            WireError::TooLarge(m) => write!(f, "too-large: {m}"),
            WireError::Timeout(m) => write!(f, "timeout: {m}"),
            WireError::Closed(m) => write!(f, "closed: {m}"),
            WireError::Rpc { method, error } => write!(f, "rpc-error: {method}: {error}"),
            WireError::HttpStatus(code, url) => write!(f, "http-status: {code} from {url}"),
            WireError::NeedsCredentials(Some(url)) => {
                write!(
                    f,
                    "needs-credentials: the server asks for authorization ({url})"
                )
            }
            WireError::NeedsCredentials(None) => {
                f.write_str("needs-credentials: the server asks for authorization")
            }
            WireError::Protocol(m) => write!(f, "protocol: {m}"),
            WireError::Pagination(m) => write!(f, "pagination-loop: {m}"),
        }
    }
}

impl std::error::Error for WireError {}
