//! The JSON-RPC messages a proxy sees: each line read strictly, classified, and the few it writes
//! itself (errors, its own requests).

use pinlog_core::json::{self, write_as_served, Limits, Value};

/// A request id, as the canonical text of the JSON value (`7`, `"a"`): ids compare by value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Id(pub String);

impl Id {
    fn of(v: &Value<'_>) -> Option<Id> {
        match v {
            Value::Number(_) | Value::String(_) => {
                let mut out = Vec::new();
                write_as_served(v, &mut out);
                Some(Id(String::from_utf8(out).expect("the writer writes UTF-8")))
            }
            _ => None,
        }
    }
}

/// One message, read. Only the members JSON-RPC defines are kept: what the proxy passes on is
/// written from them ([`Message::write`]), never copied from the bytes it read.
#[derive(Debug)]
pub enum Message<'a> {
    /// `method` and `id`, and neither `result` nor `error`.
    Request {
        id: Id,
        method: String,
        params: Option<Value<'a>>,
    },
    /// `method` and no `id`, and neither `result` nor `error`.
    Notification {
        method: String,
        params: Option<Value<'a>>,
    },
    /// `id` and exactly one of `result` and `error`, and no `method`.
    Response {
        id: Id,
        /// The result, or `None` for an error answer.
        result: Option<Value<'a>>,
        /// The error object of an error answer.
        error: Option<Value<'a>>,
    },
}

impl Message<'_> {
    /// The message as one line, from the members read.
    pub fn write(&self) -> Vec<u8> {
        match self {
            Message::Request { id, method, params } => forwarded(id, method, params.as_ref()),
            Message::Notification { method, params } => notification(method, params.as_ref()),
            Message::Response {
                id,
                result: Some(result),
                ..
            } => response(id, result),
            Message::Response { id, error, .. } => {
                error_object(id, error.as_ref().unwrap_or(&Value::Null))
            }
        }
    }
}

/// Why a line is not a message this proxy can pass on, and its id when it has one a request could
/// be matched by (so that a request it claims to answer is not left waiting for ever).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub why: String,
    pub id: Option<Id>,
}

impl Refused {
    fn new(why: impl Into<String>) -> Refused {
        Refused {
            why: why.into(),
            id: None,
        }
    }
}

/// Reads one line strictly (the core reader: no repeated member, no NFC-equal names, no unpaired
/// surrogate, nesting bounded) and classifies it strictly: a request has `method` and `id` and
/// neither `result` nor `error`; a notification has `method` and no `id`, nor `result` or
/// `error`; a response has an `id`, exactly one of `result` and `error`, and no `method`. Anything
/// else is refused: a message that is both a request and an answer would be read as one by the
/// proxy and as the other by the client. A batch is refused: no revision the proxy speaks uses one.
pub fn read(line: &[u8], max: usize) -> Result<Message<'_>, Refused> {
    let v =
        json::parse(line, Limits::with_max_bytes(max)).map_err(|e| Refused::new(e.to_string()))?;
    let Value::Object(mut o) = v else {
        return Err(Refused::new("a message must be a JSON object"));
    };
    let id = match o.get("id") {
        None => None,
        Some(v) => {
            Some(Id::of(v).ok_or_else(|| Refused::new("an id must be a string or a number"))?)
        }
    };
    let refuse = |why: &str| Refused {
        why: why.to_string(),
        id: id.clone(),
    };
    if o.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(refuse("the message does not say \"jsonrpc\": \"2.0\""));
    }
    let method = match o.get("method") {
        None => None,
        Some(Value::String(m)) => Some(m.to_string()),
        Some(_) => return Err(refuse("\"method\" is not a string")),
    };
    let answer = (o.remove("result"), o.remove("error"));
    match (method, id.clone(), answer) {
        (Some(_), _, (Some(_), _) | (_, Some(_))) => Err(refuse(
            "a message holds \"method\" and also \"result\" or \"error\": it is neither a \
             request nor a response",
        )),
        (Some(method), Some(id), _) => Ok(Message::Request {
            id,
            method,
            params: o.remove("params"),
        }),
        (Some(method), None, _) => Ok(Message::Notification {
            method,
            params: o.remove("params"),
        }),
        (None, Some(id), (Some(result), None)) => Ok(Message::Response {
            id,
            result: Some(result),
            error: None,
        }),
        (None, Some(id), (None, Some(error))) => Ok(Message::Response {
            id,
            result: None,
            error: Some(error),
        }),
        (None, Some(_), _) => Err(refuse(
            "a response holds exactly one of \"result\" and \"error\"",
        )),
        (None, None, _) => Err(refuse("a message without \"method\" or \"id\"")),
    }
}

/// A JSON-RPC error answer to `id`, as one line.
pub fn error(id: &Id, code: i64, message: &str) -> Vec<u8> {
    error_with_data(id, code, message, None)
}

/// A JSON-RPC error answer to `id` carrying `data` (JSON), as one line.
pub fn error_with_data(id: &Id, code: i64, message: &str, data: Option<&[u8]>) -> Vec<u8> {
    let mut out = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{{\"code\":{code},\"message\":",
        id.0
    )
    .into_bytes();
    json::write_string(&mut out, message);
    if let Some(d) = data {
        out.extend_from_slice(b",\"data\":");
        out.extend_from_slice(d);
    }
    out.extend_from_slice(b"}}\n");
    out
}

/// A request of the proxy's own, as one line.
pub fn request(id: &Id, method: &str, params: &[u8]) -> Vec<u8> {
    let mut out = format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":", id.0).into_bytes();
    json::write_string(&mut out, method);
    out.extend_from_slice(b",\"params\":");
    out.extend_from_slice(params);
    out.extend_from_slice(b"}\n");
    out
}

/// A response carrying `result`, as one line.
pub fn response(id: &Id, result: &Value<'_>) -> Vec<u8> {
    let mut out = format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":", id.0).into_bytes();
    write_as_served(result, &mut out);
    out.extend_from_slice(b"}\n");
    out
}

/// A request as the server sees it: the client's method and parameters under an id of the
/// proxy's, as one line.
pub fn forwarded(id: &Id, method: &str, params: Option<&Value<'_>>) -> Vec<u8> {
    let head = format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":", id.0).into_bytes();
    with_method(head, method, params)
}

/// A notification, as one line.
pub fn notification(method: &str, params: Option<&Value<'_>>) -> Vec<u8> {
    with_method(b"{\"jsonrpc\":\"2.0\",\"method\":".to_vec(), method, params)
}

/// `out`, the members before the method's value, then the method and the params, as one line.
fn with_method(mut out: Vec<u8>, method: &str, params: Option<&Value<'_>>) -> Vec<u8> {
    json::write_string(&mut out, method);
    if let Some(p) = params {
        out.extend_from_slice(b",\"params\":");
        write_as_served(p, &mut out);
    }
    out.extend_from_slice(b"}\n");
    out
}

/// A server's error object, answered to the client's `id`, as one line.
pub fn error_object(id: &Id, error: &Value<'_>) -> Vec<u8> {
    let mut out = format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":", id.0).into_bytes();
    write_as_served(error, &mut out);
    out.extend_from_slice(b"}\n");
    out
}

/// The answer to a line that is not one strict JSON-RPC message: its id cannot be trusted, so
/// the error carries none (JSON-RPC's "invalid request").
pub fn invalid(why: &str) -> Vec<u8> {
    let mut out =
        b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":".to_vec();
    json::write_string(&mut out, why);
    out.extend_from_slice(b"}}\n");
    out
}
