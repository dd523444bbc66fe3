//! JSON-RPC 2.0 messages as MCP carries them: read strictly, classified by the members they hold,
//! and written from those members. A message is written without a line end: framing is the
//! transport's (a line on stdio, a body or an event over HTTP).

use std::fmt;

use pinlog_core::json::{self, write_as_served, Limits, Object, Value};

/// A request id, as the canonical text of the JSON value (`7`, `"a"`): ids compare by value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Id(pub String);

impl Id {
    /// The id of `v`, if it can be one: a string or a number.
    pub fn of(v: &Value<'_>) -> Option<Id> {
        match v {
            Value::Number(_) | Value::String(_) => {
                let mut out = Vec::new();
                write_as_served(v, &mut out);
                Some(Id(String::from_utf8(out).expect("the writer writes UTF-8")))
            }
            _ => None,
        }
    }

    /// `null`: what an answer carries when the id it answers cannot be read or trusted.
    pub fn null() -> Id {
        Id("null".into())
    }
}

impl From<u64> for Id {
    fn from(n: u64) -> Id {
        Id(n.to_string())
    }
}

/// JSON-RPC's "parse error": not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's "invalid request": JSON, but not a request.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's "method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC's "invalid params".
pub const INVALID_PARAMS: i64 = -32602;

/// What a message is, by the members it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `method` and `id`, and neither `result` nor `error`.
    Request,
    /// `method` and no `id`, and neither `result` nor `error`.
    Notification,
    /// `id` and exactly one of `result` and `error`, and no `method`.
    Response,
}

/// Why an object is no message of any kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KindError {
    /// `method` beside `result` or `error`: a message that is both a request and an answer
    /// would be read as one by one side and as the other by the other.
    RequestAndAnswer,
    /// An `id` without `method`, and not exactly one of `result` and `error`.
    NotOneAnswer,
    /// Neither `method` nor `id`.
    Neither,
}

impl fmt::Display for KindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KindError::RequestAndAnswer => {
                "a message holds \"method\" and also \"result\" or \"error\": it is neither a \
                 request nor a response"
            }
            KindError::NotOneAnswer => "a response holds exactly one of \"result\" and \"error\"",
            KindError::Neither => "a message without \"method\" or \"id\"",
        })
    }
}

/// What `o` is, by which of `method`, `id`, `result` and `error` it holds; what they hold is the
/// caller's to check.
pub fn kind(o: &Object<'_>) -> Result<Kind, KindError> {
    let has = |name| o.get(name).is_some();
    let answers = usize::from(has("result")) + usize::from(has("error"));
    match (has("method"), has("id"), answers) {
        (true, _, 1..) => Err(KindError::RequestAndAnswer),
        (true, true, 0) => Ok(Kind::Request),
        (true, false, 0) => Ok(Kind::Notification),
        (false, true, 1) => Ok(Kind::Response),
        (false, true, _) => Err(KindError::NotOneAnswer),
        (false, false, _) => Err(KindError::Neither),
    }
}

/// One message, read ([`Kind`] says what each holds). Only the members JSON-RPC defines are kept:
/// what is passed on is written from them ([`Message::write`]), never copied from the bytes read.
#[derive(Debug)]
pub enum Message<'a> {
    Request {
        id: Id,
        method: String,
        params: Option<Value<'a>>,
    },
    Notification {
        method: String,
        params: Option<Value<'a>>,
    },
    Response {
        id: Id,
        /// The result, or `None` for an error answer.
        result: Option<Value<'a>>,
        /// The error object of an error answer.
        error: Option<Value<'a>>,
    },
}

impl Message<'_> {
    /// The message, written from the members read.
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

/// Why bytes are not a message that can be passed on, and their id when they have one a request
/// could be matched by (so that a request they claim to answer is not left waiting for ever).
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

/// Reads one message strictly (the core reader: no repeated member, no NFC-equal names, no
/// unpaired surrogate, nesting bounded) and classifies it strictly ([`kind`]); an id must be a
/// string or a number. Anything else is refused: a message that is both a request and an answer
/// would be read as one by a proxy and as the other by the client. A batch is refused: no
/// revision of MCP spoken here uses one.
pub fn read(bytes: &[u8], max: usize) -> Result<Message<'_>, Refused> {
    let v =
        json::parse(bytes, Limits::with_max_bytes(max)).map_err(|e| Refused::new(e.to_string()))?;
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
    let kind = kind(&o).map_err(|e| refuse(&e.to_string()))?;
    Ok(match kind {
        Kind::Request => Message::Request {
            id: id.expect("a request holds an id"),
            method: method.expect("a request holds a method"),
            params: o.remove("params"),
        },
        Kind::Notification => Message::Notification {
            method: method.expect("a notification holds a method"),
            params: o.remove("params"),
        },
        Kind::Response => Message::Response {
            id: id.expect("a response holds an id"),
            result: o.remove("result"),
            error: o.remove("error"),
        },
    })
}

/// A JSON-RPC error answer to `id`.
pub fn error(id: &Id, code: i64, message: &str) -> Vec<u8> {
    error_with_data(id, code, message, None)
}

/// A JSON-RPC error answer to `id` carrying `data` (JSON).
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
    out.extend_from_slice(b"}}");
    out
}

/// A request with `params` (JSON).
pub fn request(id: &Id, method: &str, params: &[u8]) -> Vec<u8> {
    let mut out = format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":", id.0).into_bytes();
    json::write_string(&mut out, method);
    out.extend_from_slice(b",\"params\":");
    out.extend_from_slice(params);
    out.push(b'}');
    out
}

/// A response carrying `result`.
pub fn response(id: &Id, result: &Value<'_>) -> Vec<u8> {
    let mut out = format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":", id.0).into_bytes();
    write_as_served(result, &mut out);
    out.push(b'}');
    out
}

/// A response carrying `result`, given as JSON.
pub fn response_json(id: &Id, result: &[u8]) -> Vec<u8> {
    let mut out = format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":", id.0).into_bytes();
    out.extend_from_slice(result);
    out.push(b'}');
    out
}

/// A request as the server sees it: the client's method and parameters under an id of the
/// proxy's.
pub fn forwarded(id: &Id, method: &str, params: Option<&Value<'_>>) -> Vec<u8> {
    let head = format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":", id.0).into_bytes();
    with_method(head, method, params)
}

/// A notification.
pub fn notification(method: &str, params: Option<&Value<'_>>) -> Vec<u8> {
    with_method(b"{\"jsonrpc\":\"2.0\",\"method\":".to_vec(), method, params)
}

/// `out`, the members before the method's value, then the method and the params.
fn with_method(mut out: Vec<u8>, method: &str, params: Option<&Value<'_>>) -> Vec<u8> {
    json::write_string(&mut out, method);
    if let Some(p) = params {
        out.extend_from_slice(b",\"params\":");
        write_as_served(p, &mut out);
    }
    out.push(b'}');
    out
}

/// A server's error object, answered to the client's `id`.
pub fn error_object(id: &Id, error: &Value<'_>) -> Vec<u8> {
    let mut out = format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":", id.0).into_bytes();
    write_as_served(error, &mut out);
    out.push(b'}');
    out
}

/// The answer to bytes that are not one strict JSON-RPC message: their id cannot be trusted, so
/// the error carries none (JSON-RPC's "invalid request").
pub fn invalid(why: &str) -> Vec<u8> {
    let mut out =
        b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":".to_vec();
    json::write_string(&mut out, why);
    out.extend_from_slice(b"}}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind_of(text: &str) -> Result<Kind, KindError> {
        let v = json::parse(text.as_bytes(), Limits::default()).unwrap();
        kind(v.as_object().unwrap())
    }

    #[test]
    fn classifies_by_the_members_held() {
        for (text, want) in [
            (r#"{"id":1,"method":"m"}"#, Ok(Kind::Request)),
            (r#"{"id":null,"method":"m","params":{}}"#, Ok(Kind::Request)),
            (r#"{"method":"m"}"#, Ok(Kind::Notification)),
            (r#"{"id":1,"result":{}}"#, Ok(Kind::Response)),
            (r#"{"id":1,"error":{}}"#, Ok(Kind::Response)),
            (
                r#"{"id":1,"method":"m","result":{}}"#,
                Err(KindError::RequestAndAnswer),
            ),
            (
                r#"{"method":"m","error":{}}"#,
                Err(KindError::RequestAndAnswer),
            ),
            (
                r#"{"id":1,"result":{},"error":{}}"#,
                Err(KindError::NotOneAnswer),
            ),
            (r#"{"id":1}"#, Err(KindError::NotOneAnswer)),
            (r#"{"result":{}}"#, Err(KindError::Neither)),
            ("{}", Err(KindError::Neither)),
        ] {
            assert_eq!(kind_of(text), want, "{text}");
        }
    }

    #[test]
    fn reads_strictly() {
        let ok = read(
            br#"{"jsonrpc":"2.0","id":"a","method":"m","params":[1]}"#,
            1 << 20,
        );
        assert!(matches!(ok, Ok(Message::Request { id, .. }) if id == Id("\"a\"".into())));
        for (bad, id) in [
            (&br#"{"jsonrpc":"2.0","id":null,"method":"m"}"#[..], None),
            (
                br#"{"jsonrpc":"1.0","id":2,"method":"m"}"#,
                Some(Id::from(2)),
            ),
            (
                br#"{"jsonrpc":"2.0","id":3,"method":"m","result":{}}"#,
                Some(Id::from(3)),
            ),
            (br#"{"jsonrpc":"2.0","id":4,"method":7}"#, Some(Id::from(4))),
            (br#"[{"jsonrpc":"2.0","id":5,"method":"m"}]"#, None),
        ] {
            let refused = read(bad, 1 << 20).unwrap_err();
            assert_eq!(refused.id, id, "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn writes_messages_without_a_line_end() {
        assert_eq!(
            String::from_utf8(request(&7.into(), "tools/list", b"{}")).unwrap(),
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}"#
        );
        assert_eq!(
            String::from_utf8(notification("notifications/initialized", None)).unwrap(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        );
        assert_eq!(
            String::from_utf8(error_with_data(&Id("\"x\"".into()), -1, "no", Some(b"[]"))).unwrap(),
            r#"{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"no","data":[]}}"#
        );
        let line = br#"{"jsonrpc":"2.0","id":1.0,"result":{"a":"\u00e9"},"extra":1}"#;
        assert_eq!(
            String::from_utf8(read(line, 1 << 20).unwrap().write()).unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"a":"é"}}"#
        );
    }
}
