//! The manifest (schema 2): the surface a set of servers served at one capture, and what is known
//! about that capture. Written in canonical member order; tools and prompts exactly as served
//! (see [`json::write_as_served`]).

use std::collections::HashSet;

use crate::format::{nfc, FormatError, Rules};
use crate::json::{self, Value};
use crate::package::Package;

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
    /// What the server runs, when the exporter knows.
    pub package: Option<Package>,
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
            if let Some(p) = &s.package {
                o.extend_from_slice(b",\"package\":");
                p.write(&mut o);
            }
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

/// Why a manifest was refused.
pub type ManifestError = FormatError;

const RULES: Rules = Rules {
    field: "manifest-field",
    duplicate: "manifest-duplicate-name",
};

fn refuse(rule: &'static str, detail: impl Into<String>) -> ManifestError {
    FormatError {
        rule,
        detail: detail.into(),
    }
}

const TOP: [&str; 7] = [
    "captured_at",
    "captured_by",
    "complete",
    "protocol_version",
    "schema_version",
    "scope",
    "servers",
];
const SERVER: [&str; 8] = [
    "id",
    "instructions",
    "package",
    "passes",
    "prompts",
    "protocol_version",
    "reported_name",
    "tools",
];

/// Items of a listing: objects with a string `name`, no two names equal after NFC.
fn listing<'a>(
    o: &json::Object<'a>,
    name: &str,
    what: &str,
    required: bool,
) -> Result<Vec<Value<'a>>, ManifestError> {
    if !required && o.get(name).is_none() {
        return Ok(Vec::new());
    }
    let items = RULES.array(o, name, what)?;
    let mut seen = HashSet::new();
    for (i, item) in items.iter().enumerate() {
        let item_name = item
            .as_object()
            .and_then(|t| t.get("name"))
            .and_then(Value::as_str)
            .ok_or_else(|| {
                RULES.field(format!(
                    "{what}.{name}[{i}] is not an object with a string name"
                ))
            })?;
        RULES.unique(&mut seen, item_name, &format!("{what}.{name}"))?;
    }
    Ok(items.to_vec())
}

impl<'a> Manifest<'a> {
    /// Reads a manifest strictly: the JSON by the strict reader, then schema 2's members, each
    /// of the right type and no other. Version 1 is refused: it could not say whether the
    /// capture was complete. Two servers, or two tools or prompts of one server, whose names are
    /// equal after NFC are refused, and a `scope` must name exactly the servers present.
    pub fn read(bytes: &'a [u8]) -> Result<Manifest<'a>, ManifestError> {
        let v = json::parse(bytes, json::Limits::default())
            .map_err(|e| refuse("manifest-json", e.to_string()))?;
        let version = v.as_object().and_then(|o| o.get("schema_version"));
        match version {
            Some(Value::Number(n)) if n.literal() == "2" => {}
            Some(Value::Number(n)) if n.literal() == "1" => {
                return Err(refuse(
                    "manifest-version",
                    "schema_version 1 cannot say whether the capture was complete; capture the \
                     surface again with `pinlog export`",
                ))
            }
            _ => {
                return Err(refuse(
                    "manifest-version",
                    "schema_version must be 2, the only manifest version this reader knows",
                ))
            }
        }
        let top = RULES.object(&v, "the manifest", &TOP)?;
        let complete = match top.get("complete") {
            Some(Value::Bool(b)) => *b,
            _ => return Err(RULES.field("complete must be true or false")),
        };
        let scope = match top.get("scope") {
            None => None,
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .map(|i| i.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| RULES.field("scope must hold strings"))?,
            ),
            Some(_) => return Err(RULES.field("scope must be an array")),
        };
        let servers_value = RULES.array(top, "servers", "the manifest")?;
        let mut servers = Vec::with_capacity(servers_value.len());
        let mut ids = HashSet::new();
        for (i, sv) in servers_value.iter().enumerate() {
            let what = format!("servers[{i}]");
            let o = RULES.object(sv, &what, &SERVER)?;
            let id = RULES.text(o, "id", &what)?;
            if id.is_empty() {
                return Err(RULES.field(format!("{what}.id is empty")));
            }
            RULES.unique(&mut ids, id, "the manifest's servers")?;
            let passes = u32::try_from(RULES.whole(o, "passes", &what, 1)?)
                .map_err(|_| RULES.field(format!("{what}.passes is too large")))?;
            // Completeness is a claim two readings back; one reading cannot make it.
            if complete && passes < 2 {
                return Err(RULES.field(format!(
                    "{what}.passes is {passes}, and a capture read once cannot be complete: \
                     complete must be false, or the listings read twice"
                )));
            }
            servers.push(ManifestServer {
                id: id.to_string(),
                reported_name: RULES.optional_text(o, "reported_name", &what)?,
                protocol_version: RULES.text(o, "protocol_version", &what)?.to_string(),
                passes,
                instructions: RULES.optional_text(o, "instructions", &what)?,
                package: match o.get("package") {
                    None | Some(Value::Null) => None,
                    Some(p) => Some(Package::read(p, &what, RULES)?),
                },
                tools: listing(o, "tools", &what, true)?,
                prompts: listing(o, "prompts", &what, false)?,
            });
        }
        if let Some(scope) = &scope {
            let named: HashSet<String> = scope.iter().map(|s| nfc(s)).collect();
            if named != ids || named.len() != scope.len() {
                return Err(refuse(
                    "manifest-scope",
                    "scope must name exactly the servers the manifest holds, each once",
                ));
            }
        }
        Ok(Manifest {
            protocol_version: RULES
                .text(top, "protocol_version", "the manifest")?
                .to_string(),
            complete,
            captured_at: RULES.text(top, "captured_at", "the manifest")?.to_string(),
            captured_by: RULES.text(top, "captured_by", "the manifest")?.to_string(),
            scope,
            servers,
        })
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
                package: None,
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

#[cfg(test)]
mod read_tests {
    use super::*;

    const GOOD: &str = r#"{"captured_at":"2026-11-30T12:00:00Z","captured_by":"pinlog/0.1.0","complete":true,"protocol_version":"2025-11-25","schema_version":2,"servers":[{"id":"billing","passes":2,"protocol_version":"2025-11-25","reported_name":"stripe-mcp","tools":[{"name":"stripe.refund","description":"Refund a charge."}]}]}"#;

    fn with(from: &str, to: &str) -> String {
        assert!(GOOD.contains(from), "{from}");
        GOOD.replacen(from, to, 1)
    }

    fn rule(text: &str) -> &'static str {
        Manifest::read(text.as_bytes()).unwrap_err().rule
    }

    #[test]
    fn reads_what_the_writer_writes_and_the_seed_example() {
        let m = Manifest::read(GOOD.as_bytes()).unwrap();
        assert_eq!(m.servers[0].id, "billing");
        assert_eq!(m.servers[0].reported_name.as_deref(), Some("stripe-mcp"));
        assert!(m.servers[0].prompts.is_empty() && m.servers[0].instructions.is_none());
        // What the writer writes reads back to the same bytes.
        let again = m.to_bytes();
        assert_eq!(Manifest::read(&again).unwrap().to_bytes(), again);
    }

    #[test]
    fn version_1_is_refused_with_what_to_do() {
        let e = Manifest::read(with("\"schema_version\":2", "\"schema_version\":1").as_bytes())
            .unwrap_err();
        assert_eq!(e.rule, "manifest-version");
        assert!(e.detail.contains("capture the surface again"), "{e}");
        assert_eq!(
            rule(&with("\"schema_version\":2", "\"schema_version\":3")),
            "manifest-version"
        );
        assert_eq!(rule(&with("\"schema_version\":2,", "")), "manifest-version");
    }

    #[test]
    fn every_member_is_held_to_its_type_and_unknown_ones_are_refused() {
        for (from, to) in [
            ("\"complete\":true", "\"complete\":\"yes\""),
            ("\"passes\":2", "\"passes\":0"),
            ("\"passes\":2", "\"passes\":2.5"),
            ("\"passes\":2", "\"passes\":1"),
            ("\"reported_name\":\"stripe-mcp\"", "\"reported_name\":7"),
            ("\"id\":\"billing\"", "\"id\":\"\""),
            ("{\"name\":\"stripe.refund\",", "{\"name\":1,"),
            (
                "\"captured_by\":\"pinlog/0.1.0\"",
                "\"captured_by\":\"pinlog/0.1.0\",\"approver\":\"me\"",
            ),
            ("\"passes\":2", "\"passes\":2,\"package\":{}"),
        ] {
            assert_eq!(rule(&with(from, to)), "manifest-field", "{to}");
        }
        assert_eq!(
            rule("{\"schema_version\":2,\"schema_version\":2}"),
            "manifest-json"
        );
    }

    #[test]
    fn names_equal_after_nfc_are_refused() {
        // "é" precomposed and decomposed.
        let two_servers = GOOD.replace(
            "]}]}",
            "]},{\"id\":\"caf\\u00e9\",\"passes\":2,\"protocol_version\":\"x\",\"tools\":[]},{\"id\":\"cafe\\u0301\",\"passes\":2,\"protocol_version\":\"x\",\"tools\":[]}]}",
        );
        assert_eq!(rule(&two_servers), "manifest-duplicate-name");
        let two_tools = with(
            "{\"name\":\"stripe.refund\",\"description\":\"Refund a charge.\"}",
            "{\"name\":\"r\\u00e9\"},{\"name\":\"re\\u0301\"}",
        );
        assert_eq!(rule(&two_tools), "manifest-duplicate-name");
    }

    #[test]
    fn a_scope_must_name_exactly_the_servers() {
        assert!(Manifest::read(
            with(
                "\"schema_version\":2",
                "\"schema_version\":2,\"scope\":[\"billing\"]"
            )
            .as_bytes()
        )
        .is_ok());
        assert_eq!(
            rule(&with(
                "\"schema_version\":2",
                "\"schema_version\":2,\"scope\":[\"billing\",\"other\"]"
            )),
            "manifest-scope"
        );
        assert_eq!(
            rule(&with(
                "\"schema_version\":2",
                "\"schema_version\":2,\"scope\":[\"billing\",\"billing\"]"
            )),
            "manifest-scope"
        );
        assert_eq!(
            rule(&with(
                "\"schema_version\":2",
                "\"schema_version\":2,\"scope\":[]"
            )),
            "manifest-scope"
        );
    }
}
