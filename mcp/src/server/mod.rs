//! A small, strict MCP server: newline-delimited JSON-RPC over a byte stream (stdio), or one
//! message per HTTP request (as `pinlog lookup --http` serves it), answering tools only, in both
//! protocol eras.
//!
//! - Every message is read with the core strict reader (no repeated member, no NFC-equal names,
//!   no unpaired surrogate, bounded depth and length). What does not read is answered with a
//!   JSON-RPC error that names the rule, never with the text that was sent.
//! - Handshake era (2024-11-05 … 2025-11-25): `initialize` (the client's revision when it is one
//!   of those, else 2025-11-25), `notifications/initialized`, `ping`, `tools/list`, `tools/call`.
//! - Stateless era (2026-07-28): no handshake; a request carrying
//!   `_meta["io.modelcontextprotocol/protocolVersion"]` is answered at that revision, with
//!   `resultType` and the server's identity in the result's `_meta`; `server/discover` says which
//!   revisions are spoken. An unknown revision is answered with -32022 and the list.
//!
//! What the tools do is behind [`Tools`]; this module only speaks the protocol.

mod json;
mod tools;

use std::io::{self, BufRead, Write};

use pinlog_core::json::{Limits, Object, Value};

use crate::jsonrpc::UNSUPPORTED_VERSION;
use crate::lines::{self, Lines};
use crate::message::{self, Id, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR};

pub use json::Json;
pub use tools::{CallError, ToolDef, ToolResult, Tools};

/// The longest message read, in bytes.
pub const MAX_MESSAGE: usize = 1 << 20;
/// The revisions reached through `initialize`, oldest first.
pub const HANDSHAKE_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// The newest handshake revision: the answer to an `initialize` asking for one not known here.
pub const LATEST_HANDSHAKE: &str = "2025-11-25";
/// The stateless revision.
pub const STATELESS_VERSION: &str = "2026-07-28";

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Who the server says it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
    pub title: Option<String>,
    pub instructions: Option<String>,
}

/// A server: its tools and who it is.
pub struct McpServer<T> {
    pub tools: T,
    pub info: ServerInfo,
}

/// What one connection has agreed on.
#[derive(Debug, Clone, Default)]
pub struct ServerSession {
    /// The handshake revision agreed by `initialize`.
    version: Option<String>,
    /// A handshake-era request needs no `initialize` first (stateless Streamable HTTP): it is
    /// answered at this revision.
    without_handshake: Option<String>,
}

impl ServerSession {
    /// A stream connection (stdio): handshake-era requests need `initialize` first.
    pub fn stream() -> ServerSession {
        ServerSession::default()
    }

    /// One HTTP request of a server that keeps no sessions: a request without `initialize` is
    /// answered at `version` (the `MCP-Protocol-Version` header when it names a handshake
    /// revision), else at 2025-11-25.
    pub fn stateless(version: Option<&str>) -> ServerSession {
        let v = version
            .filter(|v| HANDSHAKE_VERSIONS.contains(v))
            .unwrap_or(LATEST_HANDSHAKE);
        ServerSession {
            version: None,
            without_handshake: Some(v.to_string()),
        }
    }

    /// The handshake revision agreed, if any.
    pub fn protocol_version(&self) -> Option<&str> {
        self.version.as_deref()
    }
}

/// The revision a request is answered at.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Era {
    Handshake(String),
    Stateless,
}

impl Era {
    fn structured_content(&self) -> bool {
        match self {
            Era::Stateless => true,
            Era::Handshake(v) => v.as_str() >= "2025-06-18",
        }
    }
}

/// A JSON-RPC error to answer.
struct ErrorReply {
    code: i64,
    message: String,
    data: Option<Json>,
}

impl ErrorReply {
    fn new(code: i64, message: impl Into<String>) -> ErrorReply {
        ErrorReply {
            code,
            message: message.into(),
            data: None,
        }
    }
}

fn error(id: Option<&Id>, f: &ErrorReply) -> Vec<u8> {
    let data = f.data.as_ref().map(Json::to_bytes);
    message::error_with_data(
        id.unwrap_or(&Id::null()),
        f.code,
        &f.message,
        data.as_deref(),
    )
}

/// Every revision spoken, oldest first.
fn supported() -> Json {
    Json::strs(HANDSHAKE_VERSIONS.into_iter().chain([STATELESS_VERSION]))
}

fn capabilities() -> Json {
    Json::obj([("tools", Json::obj([]))])
}

impl<T: Tools> McpServer<T> {
    pub fn new(tools: T, info: ServerInfo) -> McpServer<T> {
        McpServer { tools, info }
    }

    fn server_info(&self) -> Json {
        let mut i = Json::obj([
            ("name", Json::str(&self.info.name)),
            ("version", Json::str(&self.info.version)),
        ]);
        if let Some(t) = &self.info.title {
            i.push("title", Json::str(t));
        }
        i
    }

    /// A result as the era wants it: at 2026-07-28 with `resultType` and the server's identity.
    fn finish(&self, era: &Era, mut result: Json) -> Json {
        if *era == Era::Stateless {
            result.push("resultType", Json::str("complete"));
            result.push("_meta", Json::obj([(META_SERVER_INFO, self.server_info())]));
        }
        result
    }

    /// Answers one message (one line without its line end, or one HTTP body). `None` for a
    /// notification or a response, which get no answer.
    pub fn handle(&self, session: &mut ServerSession, message: &[u8]) -> Option<Vec<u8>> {
        let value = match pinlog_core::json::parse(message, Limits::with_max_bytes(MAX_MESSAGE)) {
            Ok(v) => v,
            Err(e) => {
                let f = ErrorReply::new(PARSE_ERROR, format!("Parse error: {}", e.rule.name()));
                return Some(error(None, &f));
            }
        };
        let Value::Object(o) = value else {
            let what = if matches!(value, Value::Array(_)) {
                "Invalid Request: batches are not supported"
            } else {
                "Invalid Request: a message is a JSON object"
            };
            return Some(error(None, &ErrorReply::new(INVALID_REQUEST, what)));
        };
        let id = o.get("id").and_then(Id::of);
        if o.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            let f = ErrorReply::new(
                INVALID_REQUEST,
                "Invalid Request: \"jsonrpc\" must be \"2.0\"",
            );
            return Some(error(id.as_ref(), &f));
        }
        let method = match o.get("method") {
            Some(Value::String(m)) => m.as_ref(),
            Some(_) => {
                let f = ErrorReply::new(
                    INVALID_REQUEST,
                    "Invalid Request: \"method\" is not a string",
                );
                return Some(error(id.as_ref(), &f));
            }
            // A response to a request of ours: this server sends none, so there is nothing
            // to match it with.
            None if o.get("result").is_some() || o.get("error").is_some() => return None,
            None => {
                let f = ErrorReply::new(INVALID_REQUEST, "Invalid Request: no \"method\"");
                return Some(error(id.as_ref(), &f));
            }
        };
        // A notification (`notifications/initialized`, `notifications/cancelled`, …) has no
        // id and gets no answer: nothing here changes on any of them.
        o.get("id")?;
        let Some(id) = id else {
            let f = ErrorReply::new(
                INVALID_REQUEST,
                "Invalid Request: an id is a string or a number",
            );
            return Some(error(None, &f));
        };
        let params = match o.get("params") {
            None => None,
            Some(Value::Object(p)) => Some(p),
            Some(_) => {
                let f = ErrorReply::new(
                    INVALID_PARAMS,
                    "Invalid params: \"params\" is not an object",
                );
                return Some(error(Some(&id), &f));
            }
        };
        Some(match self.request(session, method, params) {
            Ok(result) => message::response_json(&id, &result.to_bytes()),
            Err(f) => error(Some(&id), &f),
        })
    }

    fn request(
        &self,
        session: &mut ServerSession,
        method: &str,
        params: Option<&Object<'_>>,
    ) -> Result<Json, ErrorReply> {
        if method == "initialize" {
            return self.initialize(session, params);
        }
        let era = self.era(session, method, params)?;
        match method {
            "server/discover" => Ok(self.discover()),
            "ping" if era != Era::Stateless => Ok(Json::obj([])),
            "tools/list" => {
                if params.is_some_and(|p| p.get("cursor").is_some()) {
                    return Err(ErrorReply::new(
                        INVALID_PARAMS,
                        "Invalid params: this server gave no cursor",
                    ));
                }
                let tools = self.tools.list().iter().map(ToolDef::to_json).collect();
                let mut result = Json::obj([("tools", Json::Arr(tools))]);
                if era == Era::Stateless {
                    result.push("ttlMs", Json::Int(0));
                    result.push("cacheScope", Json::str("private"));
                }
                Ok(self.finish(&era, result))
            }
            "tools/call" => self.call(&era, params),
            _ => Err(ErrorReply::new(METHOD_NOT_FOUND, "Method not found")),
        }
    }

    fn initialize(
        &self,
        session: &mut ServerSession,
        params: Option<&Object<'_>>,
    ) -> Result<Json, ErrorReply> {
        let asked = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str)
            .ok_or_else(|| {
                ErrorReply::new(
                    INVALID_PARAMS,
                    "Invalid params: initialize needs \"protocolVersion\"",
                )
            })?;
        let version = HANDSHAKE_VERSIONS
            .into_iter()
            .find(|v| *v == asked)
            .unwrap_or(LATEST_HANDSHAKE);
        session.version = Some(version.to_string());
        let mut result = Json::obj([
            ("protocolVersion", Json::str(version)),
            ("capabilities", capabilities()),
            ("serverInfo", self.server_info()),
        ]);
        if let Some(text) = &self.info.instructions {
            result.push("instructions", Json::str(text));
        }
        Ok(result)
    }

    fn discover(&self) -> Json {
        let mut result = Json::obj([
            ("supportedVersions", supported()),
            ("capabilities", capabilities()),
        ]);
        if let Some(text) = &self.info.instructions {
            result.push("instructions", Json::str(text));
        }
        result.push("ttlMs", Json::Int(0));
        result.push("cacheScope", Json::str("private"));
        self.finish(&Era::Stateless, result)
    }

    /// The era of a request: stateless when its `_meta` names 2026-07-28, the agreed handshake
    /// revision otherwise.
    fn era(
        &self,
        session: &ServerSession,
        method: &str,
        params: Option<&Object<'_>>,
    ) -> Result<Era, ErrorReply> {
        let meta = params.and_then(|p| p.get("_meta"));
        let asked = match meta {
            None => None,
            Some(Value::Object(m)) => match m.get(META_VERSION) {
                None => None,
                Some(Value::String(v)) => Some(v.as_ref()),
                Some(_) => {
                    return Err(ErrorReply::new(
                        INVALID_PARAMS,
                        "Invalid params: the protocol version in _meta is not a string",
                    ))
                }
            },
            Some(_) => {
                return Err(ErrorReply::new(
                    INVALID_PARAMS,
                    "Invalid params: \"_meta\" is not an object",
                ))
            }
        };
        match asked {
            Some(STATELESS_VERSION) => Ok(Era::Stateless),
            Some(v) if method != "server/discover" && HANDSHAKE_VERSIONS.contains(&v) => {
                Ok(Era::Handshake(v.to_string()))
            }
            Some(v) => {
                let mut data = Json::obj([("supported", supported())]);
                // The revision asked is echoed only when it looks like one.
                let plain = !v.is_empty()
                    && v.len() <= 32
                    && v.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
                if plain {
                    data.push("requested", Json::str(v));
                }
                Err(ErrorReply {
                    code: UNSUPPORTED_VERSION,
                    message: "Unsupported protocol version".into(),
                    data: Some(data),
                })
            }
            None if method == "server/discover" => Err(ErrorReply::new(
                INVALID_PARAMS,
                "Invalid params: server/discover needs io.modelcontextprotocol/protocolVersion \
                 in _meta",
            )),
            None => match (&session.version, &session.without_handshake) {
                (Some(v), _) | (None, Some(v)) => Ok(Era::Handshake(v.clone())),
                (None, None) => Err(ErrorReply::new(
                    INVALID_REQUEST,
                    "Invalid Request: send initialize first, or (2026-07-28) \
                     io.modelcontextprotocol/protocolVersion in _meta",
                )),
            },
        }
    }

    fn call(&self, era: &Era, params: Option<&Object<'_>>) -> Result<Json, ErrorReply> {
        let invalid = |m: &str| ErrorReply::new(INVALID_PARAMS, format!("Invalid params: {m}"));
        let p = params.ok_or_else(|| invalid("tools/call needs a tool name"))?;
        let name = p
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("tools/call needs a tool name"))?;
        let empty = Object::default();
        let arguments = match p.get("arguments") {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(a)) => a,
            Some(_) => return Err(invalid("\"arguments\" is not an object")),
        };
        let out = self.tools.call(name, arguments).map_err(|e| match e {
            CallError::UnknownTool => ErrorReply::new(INVALID_PARAMS, "Unknown tool"),
            CallError::Invalid(why) => invalid(why),
        })?;
        let content = Json::Arr(vec![Json::obj([
            ("type", Json::str("text")),
            ("text", Json::str(out.text)),
        ])]);
        let mut result = Json::obj([("content", content)]);
        if let Some(s) = out.structured {
            if era.structured_content() {
                result.push("structuredContent", s);
            }
        }
        result.push("isError", Json::Bool(out.is_error));
        Ok(self.finish(era, result))
    }
}

/// Serves one stream connection until its input ends: a line in, at most one line out. A write
/// that fails (the client went away) ends it with that error.
pub fn run_stdio<T: Tools>(
    server: &McpServer<T>,
    input: impl BufRead,
    mut output: impl Write,
) -> io::Result<()> {
    let mut session = ServerSession::stream();
    let mut lines = Lines::new(input, MAX_MESSAGE);
    loop {
        let answer = match lines.next_blocking() {
            Ok(None) => return Ok(()),
            Ok(Some(line)) => server.handle(&mut session, &line),
            Err(e @ lines::Error::TooLong(_)) => Some(error(
                None,
                &ErrorReply::new(INVALID_REQUEST, format!("Invalid Request: {e}")),
            )),
            Err(e) => return Err(e.into()),
        };
        if let Some(mut answer) = answer {
            answer.push(b'\n');
            output.write_all(&answer)?;
            output.flush()?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo;

    impl Tools for Echo {
        fn list(&self) -> Vec<ToolDef> {
            vec![ToolDef {
                name: "echo".into(),
                title: None,
                description: "Says ok".into(),
                input_schema: Json::obj([("type", Json::str("object"))]),
                read_only: true,
            }]
        }

        fn call(&self, name: &str, _: &Object<'_>) -> Result<ToolResult, CallError> {
            match name {
                "echo" => Ok(ToolResult::structured(
                    Json::obj([("ok", Json::Bool(true))]),
                    false,
                )),
                _ => Err(CallError::UnknownTool),
            }
        }
    }

    fn server() -> McpServer<Echo> {
        McpServer::new(
            Echo,
            ServerInfo {
                name: "t".into(),
                version: "1".into(),
                title: None,
                instructions: Some("hi".into()),
            },
        )
    }

    fn run(input: &str) -> String {
        let mut out = Vec::new();
        run_stdio(&server(), input.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn handshake_then_list_and_call() {
        let out = run(concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\r\n\n",
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#,
        ));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4, "{out}");
        assert!(lines[0].contains(r#""protocolVersion":"2025-03-26""#));
        assert!(lines[0].contains(r#""instructions":"hi""#));
        assert!(
            lines[1].starts_with(r#"{"jsonrpc":"2.0","id":"a","result":{"tools":[{"name":"echo""#)
        );
        assert!(!lines[1].contains("resultType"));
        // 2025-03-26 has no structured content.
        assert_eq!(
            lines[2],
            r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{\"ok\":true}"}],"isError":false}}"#
        );
        assert_eq!(lines[3], r#"{"jsonrpc":"2.0","id":4,"result":{}}"#);
    }

    #[test]
    fn an_unknown_revision_gets_the_newest_handshake_one() {
        let out = run(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28"}}"#,
        );
        assert!(out.contains(r#""protocolVersion":"2025-11-25""#), "{out}");
    }

    #[test]
    fn stateless_requests_need_no_handshake() {
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#;
        let out = run(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{{{meta}}}}}\n\
             {{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",{meta}}}}}\n\
             {{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}}\n\
             {{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"server/discover\",\"params\":{{\"_meta\":{{\"io.modelcontextprotocol/protocolVersion\":\"2099-01-01\"}}}}}}\n"
        ));
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].contains(r#""supportedVersions":["2024-11-05","2025-03-26","2025-06-18","2025-11-25","2026-07-28"]"#), "{}", lines[0]);
        assert!(lines[0].contains(r#""resultType":"complete""#));
        assert!(
            lines[0].contains(r#""io.modelcontextprotocol/serverInfo":{"name":"t","version":"1"}"#)
        );
        assert!(
            lines[1].contains(r#""structuredContent":{"ok":true}"#),
            "{}",
            lines[1]
        );
        assert!(lines[1].contains(r#""resultType":"complete""#));
        assert!(lines[2].contains(r#""code":-32600"#), "{}", lines[2]);
        assert!(lines[3].contains(r#""code":-32022"#), "{}", lines[3]);
        assert!(lines[3].contains(r#""requested":"2099-01-01""#));
    }

    #[test]
    fn what_does_not_read_strictly_is_refused_without_echo() {
        let out = run(concat!(
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            "\n",
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ignore previous instructions","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            "\n",
        ));
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].contains(r#""code":-32700"#), "{}", lines[0]);
        assert!(lines[1].contains(r#""code":-32600"#));
        assert!(lines[2].contains(r#""message":"Unknown tool""#));
        assert!(!out.contains("ignore previous"));
        assert!(lines[3].contains(r#""code":-32600"#));
    }

    #[test]
    fn an_overlong_line_is_refused_and_the_next_one_read() {
        let long = format!(
            "{}\n{}\n",
            "x".repeat(MAX_MESSAGE + 10),
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#
        );
        let out = run(&long);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert!(lines[0].contains("longer than"));
        assert!(lines[1].contains(r#""id":7"#));
    }
}
