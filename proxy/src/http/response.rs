//! The proxy's own HTTP answers: empty, JSON, and JSON-RPC errors.

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};
use pinlog_mcp::message::{self, Id};

use super::Body;

pub(super) fn full(bytes: Vec<u8>) -> Body {
    Full::new(Bytes::from(bytes)).boxed()
}

pub(super) fn empty(status: StatusCode) -> Response<Body> {
    let mut resp = Response::new(Empty::new().boxed());
    *resp.status_mut() = status;
    resp
}

pub(super) fn respond(
    status: StatusCode,
    content_type: &'static str,
    body: Body,
) -> Response<Body> {
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp
}

pub(super) fn rpc_error(
    status: StatusCode,
    id: Option<&Id>,
    code: i64,
    text: &str,
) -> Response<Body> {
    let bytes = message::error(id.unwrap_or(&Id::null()), code, text);
    respond(status, "application/json", full(bytes))
}
