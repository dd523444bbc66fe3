//! The manifest (schema 2): the surface a set of servers served at one capture, and what is known
//! about that capture. Written in canonical member order; tools and prompts exactly as served
//! (see [`json::write_as_served`]).

use crate::json::{self, Value};

/// The capture as a whole.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest<'a> {
    /// The revision the exporter asked for.
    pub protocol_version: String,
    /// Every listing of every server was read at least twice, and the readings agreed.
    pub complete: bool,
    /// UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub captured_at: String,
    /// The exporter and its version, e.g. `pinlog/0.1.0`.
    pub captured_by: String,
    /// The servers this capture claims to cover, when narrowed; `None` claims every server.
    pub scope: Option<Vec<String>>,
    pub servers: Vec<ManifestServer<'a>>,
}

/// One server's surface.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestServer<'a> {
    /// The identity from the configuration that declared the server.
    pub id: String,
    /// `serverInfo.name`, as the server reported it.
    pub reported_name: Option<String>,
    /// The revision the session ran under.
    pub protocol_version: String,
    pub passes: u32,
    pub instructions: Option<String>,
    pub tools: Vec<Value<'a>>,
    pub prompts: Vec<Value<'a>>,
}

/// The schema this module writes.
pub const SCHEMA_VERSION: u32 = 2;

fn string_or_null(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => json::write_string(out, s),
        None => out.extend_from_slice(b"null"),
    }
}

fn items(out: &mut Vec<u8>, items: &[Value<'_>]) {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json::write_as_served(item, out);
    }
    out.push(b']');
}

impl Manifest<'_> {
    /// The manifest as JSON, members in canonical order, ending in a newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut o = Vec::new();
        o.extend_from_slice(b"{\"captured_at\":");
        json::write_string(&mut o, &self.captured_at);
        o.extend_from_slice(b",\"captured_by\":");
        json::write_string(&mut o, &self.captured_by);
        o.extend_from_slice(format!(",\"complete\":{}", self.complete).as_bytes());
        o.extend_from_slice(b",\"protocol_version\":");
        json::write_string(&mut o, &self.protocol_version);
        o.extend_from_slice(format!(",\"schema_version\":{SCHEMA_VERSION}").as_bytes());
        if let Some(scope) = &self.scope {
            o.extend_from_slice(b",\"scope\":");
            json::write_strings(&mut o, scope.iter().map(String::as_str));
        }
        o.extend_from_slice(b",\"servers\":[");
        for (i, s) in self.servers.iter().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            o.extend_from_slice(b"{\"id\":");
            json::write_string(&mut o, &s.id);
            o.extend_from_slice(b",\"instructions\":");
            string_or_null(&mut o, s.instructions.as_deref());
            o.extend_from_slice(format!(",\"passes\":{}", s.passes).as_bytes());
            o.extend_from_slice(b",\"prompts\":");
            items(&mut o, &s.prompts);
            o.extend_from_slice(b",\"protocol_version\":");
            json::write_string(&mut o, &s.protocol_version);
            o.extend_from_slice(b",\"reported_name\":");
            string_or_null(&mut o, s.reported_name.as_deref());
            o.extend_from_slice(b",\"tools\":");
            items(&mut o, &s.tools);
            o.push(b'}');
        }
        o.extend_from_slice(b"]}\n");
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Limits;

    #[test]
    fn writes_canonical_order_and_items_as_served() {
        let tool = json::parse(
            br#"{"name":"t","inputSchema":{"type":"object"},"x":9007199254740993}"#,
            Limits::default(),
        )
        .unwrap();
        let m = Manifest {
            protocol_version: "2025-11-25".into(),
            complete: true,
            captured_at: "2026-11-30T12:00:00Z".into(),
            captured_by: "pinlog/0.1.0".into(),
            scope: None,
            servers: vec![ManifestServer {
                id: "everything".into(),
                reported_name: Some("mcp-servers/everything".into()),
                protocol_version: "2025-11-25".into(),
                passes: 2,
                instructions: None,
                tools: vec![tool],
                prompts: vec![],
            }],
        };
        let bytes = m.to_bytes();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert_eq!(
            text,
            "{\"captured_at\":\"2026-11-30T12:00:00Z\",\"captured_by\":\"pinlog/0.1.0\",\"complete\":true,\"protocol_version\":\"2025-11-25\",\"schema_version\":2,\"servers\":[{\"id\":\"everything\",\"instructions\":null,\"passes\":2,\"prompts\":[],\"protocol_version\":\"2025-11-25\",\"reported_name\":\"mcp-servers/everything\",\"tools\":[{\"inputSchema\":{\"type\":\"object\"},\"name\":\"t\",\"x\":9007199254740993}]}]}\n"
        );
        // It reads back strictly; it is canonical but for the undecidable literal.
        json::parse(&bytes[..bytes.len() - 1], Limits::default()).unwrap();
    }
}
