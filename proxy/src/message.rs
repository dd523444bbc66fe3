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

/// One message, read.
#[derive(Debug)]
pub enum Message<'a> {
    Request {
        id: Id,
        method: String,
        params: Option<Value<'a>>,
    },
    Notification {
        method: String,
    },
    Response {
        id: Id,
        /// The result, or `None` for an error answer.
        result: Option<Value<'a>>,
        /// The error object of an error answer.
        error: Option<Value<'a>>,
    },
}

/// Why a line is not a message this proxy can pass on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

/// Reads one line strictly (the core reader: no repeated member, no NFC-equal names, no unpaired
/// surrogate, nesting bounded). A batch is refused: no revision the proxy speaks uses one.
pub fn read(line: &[u8], max: usize) -> Result<Message<'_>, Refused> {
    let v = json::parse(line, Limits::with_max_bytes(max)).map_err(|e| Refused(e.to_string()))?;
    let Value::Object(o) = v else {
        return Err(Refused("a message must be a JSON object".into()));
    };
    if o.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(Refused(
            "the message does not say \"jsonrpc\": \"2.0\"".into(),
        ));
    }
    let id = match o.get("id") {
        None => None,
        Some(v) => {
            Some(Id::of(v).ok_or_else(|| Refused("an id must be a string or a number".into()))?)
        }
    };
    let method = match o.get("method") {
        None => None,
        Some(Value::String(m)) => Some(m.to_string()),
        Some(_) => return Err(Refused("\"method\" is not a string".into())),
    };
    let mut o = o;
    match (method, id) {
        (Some(method), Some(id)) => Ok(Message::Request {
            id,
            method,
            params: o.remove("params"),
        }),
        (Some(method), None) => Ok(Message::Notification { method }),
        (None, Some(id)) => match (o.get("result").is_some(), o.get("error").is_some()) {
            (true, false) => Ok(Message::Response {
                id,
                result: o.remove("result"),
                error: None,
            }),
            (false, true) => Ok(Message::Response {
                id,
                result: None,
                error: o.remove("error"),
            }),
            _ => Err(Refused(
                "a response holds exactly one of \"result\" and \"error\"".into(),
            )),
        },
        (None, None) => Err(Refused("a message without \"method\" or \"id\"".into())),
    }
}

/// A JSON-RPC error answer to `id`, as one line.
pub fn error(id: &Id, code: i64, message: &str) -> Vec<u8> {
    let mut out = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{{\"code\":{code},\"message\":",
        id.0
    )
    .into_bytes();
    json::write_string(&mut out, message);
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
    let mut out = format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":", id.0).into_bytes();
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
