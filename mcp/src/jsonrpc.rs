//! JSON-RPC 2.0 as the client takes it: what it makes of what a server writes (read with the core
//! strict reader, classified by [`message::kind`]), and its answers to a server's requests.

use std::fmt;

use pinlog_core::json::{self, Limits, Object, Value};

use crate::error::WireError;
use crate::message::{self, Id, Kind, KindError};

/// A JSON-RPC error object from a server.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    /// For "unsupported protocol version" (-32022): the revisions the server names in
    /// `data.supported`.
    pub supported: Vec<String>,
}

/// The code of the stateless era's "unsupported protocol version" error.
pub const UNSUPPORTED_VERSION: i64 = -32022;

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

/// One message from a server.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// The answer to a request of ours: its id, and the result or the error.
    Response {
        id: u64,
        outcome: Result<Value<'static>, RpcError>,
    },
    /// A request from the server (`ping`, `roots/list`, …), with its id exactly as written.
    Request { id: Value<'static>, method: String },
    /// A notification (`notifications/tools/list_changed`, logging, progress).
    Notification { method: String },
    /// An answer whose id is not one this client uses (a string, a number it never sent).
    Stray,
}

/// Reads one message. A batch (an array) is refused: no revision this client speaks lets a
/// server answer a single request with one.
pub fn read(bytes: &[u8], max: usize) -> Result<Incoming, WireError> {
    let value = json::parse(bytes, Limits::with_max_bytes(max))
        .map_err(|e| WireError::Malformed(format!("the message is not strict JSON: {e}")))?;
    let Some(o) = value.as_object() else {
        return Err(WireError::Malformed(format!(
            "a message must be a JSON object, not {}",
            value.kind()
        )));
    };
    if o.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(WireError::Malformed(
            "the message does not say \"jsonrpc\": \"2.0\"".into(),
        ));
    }
    // A message that is both a request and an answer is neither: taken for either, it would
    // pass on what the other reading never checked.
    let kind = match message::kind(o) {
        Err(KindError::RequestAndAnswer) => {
            return Err(WireError::Malformed(
                "a message holds \"method\" beside \"result\" or \"error\"".into(),
            ))
        }
        k => k,
    };
    let method = || {
        o.get("method")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| WireError::Malformed("\"method\" is not a string".into()))
    };
    match kind {
        Ok(Kind::Notification) => Ok(Incoming::Notification { method: method()? }),
        Ok(Kind::Request) => Ok(Incoming::Request {
            id: o
                .get("id")
                .expect("a request holds an id")
                .clone()
                .into_owned(),
            method: method()?,
        }),
        // An id this client never uses makes an answer not one for it, whatever else it holds.
        Ok(Kind::Response) | Err(KindError::NotOneAnswer) => {
            let id = match o.get("id") {
                Some(Value::Number(n)) => n.literal().parse::<u64>().ok(),
                _ => None,
            };
            let Some(id) = id else {
                return Ok(Incoming::Stray);
            };
            let outcome = match (o.get("result"), o.get("error")) {
                (Some(r), None) => Ok(r.clone().into_owned()),
                (None, Some(e)) => Err(rpc_error(e)?),
                _ => return Err(WireError::Malformed(KindError::NotOneAnswer.to_string())),
            };
            Ok(Incoming::Response { id, outcome })
        }
        Err(e) => Err(WireError::Malformed(e.to_string())),
    }
}

fn rpc_error(e: &Value<'_>) -> Result<RpcError, WireError> {
    let bad = || WireError::Malformed("an error object needs an integer code and a message".into());
    let o = e.as_object().ok_or_else(bad)?;
    let code = match o.get("code") {
        Some(Value::Number(n)) => n.literal().parse::<i64>().map_err(|_| bad())?,
        _ => return Err(bad()),
    };
    let message = o.get("message").and_then(Value::as_str).ok_or_else(bad)?;
    let supported = match o.get("data").and_then(Value::as_object) {
        Some(data) if code == UNSUPPORTED_VERSION => data
            .get("supported")
            .and_then(Value::as_array)
            .map(|v| {
                v.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    Ok(RpcError {
        code,
        message: message.to_string(),
        supported,
    })
}

/// Builds the JSON text of outgoing messages. Only the client's own values go in, so it writes
/// them directly; strings go through the canonical string writer.
#[derive(Default)]
pub struct Out(Vec<u8>);

impl Out {
    pub fn raw(mut self, text: &str) -> Self {
        self.0.extend_from_slice(text.as_bytes());
        self
    }

    pub fn string(mut self, s: &str) -> Self {
        json::write_string(&mut self.0, s);
        self
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

/// The answer to a server's request: an empty result for `ping`, "method not found" for the rest
/// (this client offers no capability a server could call on).
pub fn answer(id: &Value<'_>, method: &str) -> Vec<u8> {
    let mut text = Vec::new();
    // The id is echoed as the server wrote it; it is a string or a number.
    let id = match json::write_canonical(id, &mut text) {
        Ok(()) => Id(String::from_utf8_lossy(&text).into_owned()),
        Err(_) => Id::null(),
    };
    if method == "ping" {
        message::response(&id, &Value::Object(Object::default()))
    } else {
        message::error(
            &id,
            message::METHOD_NOT_FOUND,
            &format!("Method not found: {method}"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_messages() {
        let r = read(
            br#"{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}"#,
            1 << 20,
        )
        .unwrap();
        assert!(matches!(
            r,
            Incoming::Response {
                id: 3,
                outcome: Ok(_)
            }
        ));
        let e = read(
            br#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no"}}"#,
            1 << 20,
        )
        .unwrap();
        assert_eq!(
            e,
            Incoming::Response {
                id: 4,
                outcome: Err(RpcError {
                    code: -32601,
                    message: "no".into(),
                    supported: vec![]
                })
            }
        );
        let n = read(
            br#"{"method":"notifications/tools/list_changed","jsonrpc":"2.0"}"#,
            1 << 20,
        )
        .unwrap();
        assert_eq!(
            n,
            Incoming::Notification {
                method: "notifications/tools/list_changed".into()
            }
        );
        let q = read(br#"{"jsonrpc":"2.0","id":"s-1","method":"ping"}"#, 1 << 20).unwrap();
        assert!(matches!(q, Incoming::Request { ref method, .. } if method == "ping"));
        assert_eq!(
            read(br#"{"jsonrpc":"2.0","id":"x","result":{}}"#, 1 << 20).unwrap(),
            Incoming::Stray
        );
    }

    #[test]
    fn refuses_what_is_not_one_strict_message() {
        for bad in [
            &br#"{"jsonrpc":"2.0","id":1,"result":{"a":1,"a":2}}"#[..],
            br#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#,
            br#"{"id":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"x/y","result":{"tools":[]}}"#,
            br#"{"jsonrpc":"2.0","method":"x/y","error":{"code":1,"message":"x"}}"#,
            br#"{"jsonrpc":"2.0","id":1}"#,
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"y"}}"#,
            br#"{"jsonrpc":"2.0"}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{}} x"#,
        ] {
            assert!(
                read(bad, 1 << 20).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        assert!(read(&[b' '; 100], 10).is_err());
    }

    #[test]
    fn writes_answers() {
        let id = json::parse(br#""s-1""#, Limits::default()).unwrap();
        assert_eq!(
            String::from_utf8(answer(&id, "ping")).unwrap(),
            r#"{"jsonrpc":"2.0","id":"s-1","result":{}}"#
        );
        assert_eq!(
            String::from_utf8(answer(&id, "roots/list")).unwrap(),
            r#"{"jsonrpc":"2.0","id":"s-1","error":{"code":-32601,"message":"Method not found: roots/list"}}"#
        );
    }
}
