//! The 2026-07-28 envelope a request outside a session must carry, checked before anything of it
//! reaches the upstream.

use hyper::header::HeaderValue;
use hyper::{Response, StatusCode};
use pinlog_core::Value;
use pinlog_mcp::message::{self, Id};
use pinlog_mcp::revision::{Era, Revision};

use super::response::{full, respond};
use super::Body;

/// Why a request outside a session does not carry the 2026-07-28 envelope it needs: answered as
/// the specification has a server answer it (HTTP 400), with the request's id, before anything
/// reaches the upstream.
pub(super) struct Refusal {
    code: i64,
    message: String,
    /// The error's `data`, as JSON.
    data: Option<Vec<u8>>,
}

impl Refusal {
    pub(super) fn answer(self, id: &Id) -> Response<Body> {
        let bytes = message::error_with_data(id, self.code, &self.message, self.data.as_deref());
        respond(StatusCode::BAD_REQUEST, "application/json", full(bytes))
    }
}

/// Checks a request outside a session as a 2026-07-28 request: `_meta` names the revision (as
/// the `MCP-Protocol-Version` header does, when sent: -32020 otherwise), one of that era the
/// proxy speaks (-32022, naming those it speaks), and the client's capabilities (-32602).
pub(super) fn envelope(
    params: Option<&Value<'_>>,
    header: Option<&HeaderValue>,
) -> Result<(), Refusal> {
    let invalid = |why: &str| Refusal {
        code: -32602,
        message: format!(
            "pinlog proxy: a request outside a session is initialize, or carries _meta with \
             io.modelcontextprotocol/protocolVersion and \
             io.modelcontextprotocol/clientCapabilities; {why}"
        ),
        data: None,
    };
    let meta = params
        .and_then(Value::as_object)
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .ok_or_else(|| invalid("params._meta is not an object"))?;
    let Some(Value::String(requested)) = meta.get("io.modelcontextprotocol/protocolVersion") else {
        return Err(invalid("the protocol version is missing, or not a string"));
    };
    if header.is_some_and(|h| h.as_bytes() != requested.as_bytes()) {
        return Err(Refusal {
            code: -32020,
            message: "pinlog proxy: the MCP-Protocol-Version header does not match \
                      _meta's io.modelcontextprotocol/protocolVersion"
                .into(),
            data: None,
        });
    }
    let spoken: Vec<Revision> = Revision::ALL
        .into_iter()
        .filter(|r| r.era() == Era::Stateless)
        .collect();
    if !spoken.iter().any(|r| r.as_str() == requested.as_ref()) {
        let mut data = b"{\"supported\":[".to_vec();
        for (i, r) in spoken.iter().enumerate() {
            if i > 0 {
                data.push(b',');
            }
            pinlog_core::json::write_string(&mut data, r.as_str());
        }
        data.extend_from_slice(b"],\"requested\":");
        pinlog_core::json::write_string(&mut data, requested);
        data.push(b'}');
        return Err(Refusal {
            code: -32022,
            message: "pinlog proxy: unsupported protocol version".into(),
            data: Some(data),
        });
    }
    match meta.get("io.modelcontextprotocol/clientCapabilities") {
        Some(Value::Object(_)) => Ok(()),
        _ => Err(invalid(
            "the client capabilities are missing, or not an object",
        )),
    }
}
