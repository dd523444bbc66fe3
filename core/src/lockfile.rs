//! The lockfile: the surface a team approved, per server, kept whole beside its digests.
//!
//! Version 2 (written here) stores every approved tool and prompt object and the instructions text
//! next to its digest, so that a report can say what changed and the file checks itself: every
//! digest is computed again from the object beside it when the file is read, and a file whose two
//! halves disagree is refused. Version 1 (digests of tools only) is still read; it can say that a
//! tool moved but not how, and it pins neither prompts nor instructions. The format is specified in
//! docs/GATE.md.

use std::collections::HashSet;

use crate::digest::{instructions_digest, value_digest, Digest};
use crate::format::{schema_version, FormatError, Rules};
use crate::json::{self, cmp_utf16, Limits, Value};
use crate::package::Package;
use crate::render::quoted;

/// The version this module writes.
pub const SCHEMA_VERSION: u64 = 2;

/// The largest `approval_serial`: 2^53, the largest integer every JSON reader reads exactly.
pub const MAX_SERIAL: u64 = 1 << 53;

const RULES: Rules = Rules {
    field: "lockfile-field",
    duplicate: "lockfile-duplicate-name",
};

/// A lockfile as read, of either version.
#[derive(Debug, Clone, PartialEq)]
pub struct Lockfile<'a> {
    /// 1 or 2.
    pub schema_version: u64,
    /// How many times a changed surface was approved into this file; 0 for version 1, which did
    /// not count.
    pub approval_serial: u64,
    pub servers: Vec<LockServer<'a>>,
}

/// One approved server.
#[derive(Debug, Clone, PartialEq)]
pub struct LockServer<'a> {
    /// The identity from the configuration that declared the server.
    pub id: String,
    /// What the server called itself when it was approved.
    pub reported_name: Option<String>,
    /// The revision it was approved over; version 1 may not say.
    pub protocol_version: Option<String>,
    pub package: Option<Package>,
    pub instructions: InstructionsPin,
    pub tools: Vec<Pin<'a>>,
    /// `None` for version 1, which pinned tools only.
    pub prompts: Option<Vec<Pin<'a>>>,
}

/// What was approved of a server's instructions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstructionsPin {
    /// Version 1 did not pin them.
    Unpinned,
    /// The text approved; `None` when the server gave none.
    Approved(Option<String>),
}

/// One approved tool or prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Pin<'a> {
    pub name: String,
    /// The digest of the approved object, or the number literals that keep it from having one.
    pub digest: Result<Digest, Vec<String>>,
    /// The object as approved; `None` in version 1.
    pub approved: Option<Value<'a>>,
}

impl<'a> Pin<'a> {
    /// Pins a tool or prompt object as served. `None` when it has no string `name` (the manifest
    /// reader guarantees one).
    pub fn approve(item: &Value<'a>) -> Option<Pin<'a>> {
        let name = item.as_object()?.get("name")?.as_str()?.to_string();
        Some(Pin {
            name,
            digest: undecidable_literals(item),
            approved: Some(item.clone()),
        })
    }
}

/// The digest of `v`, or the literals that keep it from having one: each distinct literal once,
/// sorted by its bytes, so that the list does not depend on the order members were written in.
fn undecidable_literals(v: &Value<'_>) -> Result<Digest, Vec<String>> {
    value_digest(v).map_err(|u| {
        let mut literals: Vec<String> = u.literals.into_iter().map(|l| l.literal).collect();
        literals.sort();
        literals.dedup();
        literals
    })
}

impl Lockfile<'_> {
    pub fn server(&self, id: &str) -> Option<&LockServer<'_>> {
        self.servers.iter().find(|s| s.id == id)
    }

    /// The lockfile as version 2, laid out for review: canonical member order, servers by id and
    /// tools and prompts by name (UTF-16 order), one member per line with two-space indents, and
    /// each approved object or text, the package and the literals on one line of canonical JSON
    /// (so that a deeply nested tool cannot multiply the file's size, and a change to one is one
    /// changed line); a final line feed. Equal lockfiles give equal bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut o = Vec::new();
        o.extend_from_slice(
            format!(
                "{{\n  \"approval_serial\": {},\n  \"schema_version\": {SCHEMA_VERSION},\n  \"servers\": [",
                self.approval_serial
            )
            .as_bytes(),
        );
        let mut servers: Vec<_> = self.servers.iter().collect();
        servers.sort_by(|a, b| cmp_utf16(&a.id, &b.id));
        for (i, s) in servers.iter().enumerate() {
            o.extend_from_slice(if i == 0 { b"\n    {" } else { b",\n    {" });
            o.extend_from_slice(b"\n      \"id\": ");
            json::write_string(&mut o, &s.id);
            o.extend_from_slice(b",\n      \"instructions\": ");
            match &s.instructions {
                InstructionsPin::Approved(Some(text)) => {
                    o.extend_from_slice(b"{\"approved\":");
                    json::write_string(&mut o, text);
                    o.extend_from_slice(b",\"digest\":");
                    json::write_string(&mut o, &Digest::of(text.as_bytes()).to_string());
                    o.push(b'}');
                }
                InstructionsPin::Approved(None) | InstructionsPin::Unpinned => {
                    o.extend_from_slice(b"null")
                }
            }
            o.extend_from_slice(b",\n      \"package\": ");
            match &s.package {
                Some(p) => p.write(&mut o),
                None => o.extend_from_slice(b"null"),
            }
            o.extend_from_slice(b",\n      \"prompts\": ");
            write_pins(&mut o, s.prompts.as_deref().unwrap_or_default());
            o.extend_from_slice(b",\n      \"protocol_version\": ");
            json::write_string(&mut o, s.protocol_version.as_deref().unwrap_or_default());
            o.extend_from_slice(b",\n      \"reported_name\": ");
            match &s.reported_name {
                Some(n) => json::write_string(&mut o, n),
                None => o.extend_from_slice(b"null"),
            }
            o.extend_from_slice(b",\n      \"tools\": ");
            write_pins(&mut o, &s.tools);
            o.extend_from_slice(b"\n    }");
        }
        o.extend_from_slice(if servers.is_empty() {
            b"]\n}\n"
        } else {
            b"\n  ]\n}\n"
        });
        o
    }
}

fn write_pins(o: &mut Vec<u8>, pins: &[Pin<'_>]) {
    if pins.is_empty() {
        o.extend_from_slice(b"[]");
        return;
    }
    let mut pins: Vec<_> = pins.iter().collect();
    pins.sort_by(|a, b| cmp_utf16(&a.name, &b.name));
    o.push(b'[');
    for (i, p) in pins.into_iter().enumerate() {
        o.extend_from_slice(if i == 0 {
            b"\n        {"
        } else {
            b",\n        {"
        });
        o.extend_from_slice(b"\n          \"approved\": ");
        match &p.approved {
            Some(v) => json::write_as_served(v, o),
            None => o.extend_from_slice(b"null"),
        }
        match &p.digest {
            Ok(d) => {
                o.extend_from_slice(b",\n          \"digest\": ");
                json::write_string(o, &d.to_string());
                o.extend_from_slice(b",\n          \"name\": ");
                json::write_string(o, &p.name);
            }
            Err(literals) => {
                o.extend_from_slice(b",\n          \"name\": ");
                json::write_string(o, &p.name);
                o.extend_from_slice(b",\n          \"undecidable_literals\": ");
                json::write_strings(o, literals.iter().map(String::as_str));
            }
        }
        o.extend_from_slice(b"\n        }");
    }
    o.extend_from_slice(b"\n      ]");
}

/// The digest a signature covers: SHA-256 of the lockfile's canonical form (RFC 8785, except
/// that a number literal without one is kept as written), so that re-indenting or re-ordering the
/// file does not change it and changing any value does.
pub fn canonical_digest(bytes: &[u8]) -> Result<Digest, FormatError> {
    let v = json::parse(bytes, Limits::default()).map_err(|e| FormatError {
        rule: "lockfile-json",
        detail: e.to_string(),
    })?;
    let mut out = Vec::with_capacity(bytes.len());
    json::write_as_served(&v, &mut out);
    Ok(Digest::of(&out))
}

fn mismatch(detail: String) -> FormatError {
    FormatError {
        rule: "lockfile-digest-mismatch",
        detail: format!(
            "{detail}: the file was edited by hand or damaged; restore it from version control, \
             or approve the surface again with `pinlog lock` after reviewing it"
        ),
    }
}

fn digest_member(o: &json::Object<'_>, what: &str) -> Result<Digest, FormatError> {
    RULES
        .text(o, "digest", what)?
        .parse()
        .map_err(|_| RULES.field(format!("{what}.digest must be sha256:<64 lowercase hex>")))
}

fn literals_member(o: &json::Object<'_>, what: &str) -> Result<Vec<String>, FormatError> {
    let items = RULES.array(o, "undecidable_literals", what)?;
    items
        .iter()
        .map(|i| i.as_str().map(str::to_string))
        .collect::<Option<Vec<_>>>()
        .filter(|l| !l.is_empty())
        .ok_or_else(|| {
            RULES.field(format!(
                "{what}.undecidable_literals must be a non-empty array of strings"
            ))
        })
}

/// One pin of version 2: `name`, `approved`, and `digest` or `undecidable_literals` computed
/// again from `approved`.
fn read_pin_v2<'a>(v: &Value<'a>, what: &str) -> Result<Pin<'a>, FormatError> {
    let o = RULES.object(
        v,
        what,
        &["approved", "digest", "name", "undecidable_literals"],
    )?;
    let name = RULES.text(o, "name", what)?;
    let approved = o
        .get("approved")
        .filter(|a| a.as_object().is_some())
        .ok_or_else(|| RULES.field(format!("{what}.approved must be an object")))?;
    if approved
        .as_object()
        .and_then(|a| a.get("name"))
        .and_then(Value::as_str)
        != Some(name)
    {
        return Err(mismatch(format!(
            "{what}: the approved object is not named {}",
            quoted(name, 64)
        )));
    }
    let recorded = match (o.get("digest"), o.get("undecidable_literals")) {
        (Some(_), None) => Ok(digest_member(o, what)?),
        (None, Some(_)) => Err(literals_member(o, what)?),
        _ => {
            return Err(RULES.field(format!(
                "{what} must carry exactly one of digest and undecidable_literals"
            )))
        }
    };
    let computed = undecidable_literals(approved);
    if computed != recorded {
        let say = |d: &Result<Digest, Vec<String>>| match d {
            Ok(d) => d.to_string(),
            Err(l) => format!("undecidable ({})", quoted(&l.join(", "), 64)),
        };
        return Err(mismatch(format!(
            "{what} ({}): the lockfile records {} but the approved object beside it gives {}",
            quoted(name, 64),
            say(&recorded),
            say(&computed)
        )));
    }
    Ok(Pin {
        name: name.to_string(),
        digest: recorded,
        approved: Some(approved.clone()),
    })
}

/// One pin of version 1: `name` and `digest` or `undecidable_literals`.
fn read_pin_v1<'a>(v: &Value<'a>, what: &str) -> Result<Pin<'a>, FormatError> {
    let o = RULES.object(v, what, &["digest", "name", "undecidable_literals"])?;
    let digest = match (o.get("digest"), o.get("undecidable_literals")) {
        (Some(_), None) => Ok(digest_member(o, what)?),
        (None, Some(_)) => Err(literals_member(o, what)?),
        _ => {
            return Err(RULES.field(format!(
                "{what} must carry exactly one of digest and undecidable_literals"
            )))
        }
    };
    Ok(Pin {
        name: RULES.text(o, "name", what)?.to_string(),
        digest,
        approved: None,
    })
}

fn read_pins<'a>(
    o: &json::Object<'a>,
    member: &str,
    what: &str,
    read: fn(&Value<'a>, &str) -> Result<Pin<'a>, FormatError>,
) -> Result<Vec<Pin<'a>>, FormatError> {
    let mut seen = HashSet::new();
    let mut pins = Vec::new();
    for (i, item) in RULES.array(o, member, what)?.iter().enumerate() {
        let pin = read(item, &format!("{what}.{member}[{i}]"))?;
        RULES.unique(&mut seen, &pin.name, &format!("{what}.{member}"))?;
        pins.push(pin);
    }
    Ok(pins)
}

fn read_instructions(o: &json::Object<'_>, what: &str) -> Result<InstructionsPin, FormatError> {
    let v = o
        .get("instructions")
        .ok_or_else(|| RULES.field(format!("{what}.instructions is missing")))?;
    if let Value::Null = v {
        return Ok(InstructionsPin::Approved(None));
    }
    let what = format!("{what}.instructions");
    let i = RULES.object(v, &what, &["approved", "digest"])?;
    let text = RULES.text(i, "approved", &what)?;
    let recorded = digest_member(i, &what)?;
    if instructions_digest(Some(text)) != Some(recorded) {
        return Err(mismatch(format!(
            "{what}: the lockfile records {recorded} but the approved text beside it gives {}",
            Digest::of(text.as_bytes())
        )));
    }
    Ok(InstructionsPin::Approved(Some(text.to_string())))
}

impl<'a> Lockfile<'a> {
    /// Reads a lockfile of version 1 or 2 strictly: the JSON by the strict reader, then exactly
    /// the members of its version, each of its type; names equal after NFC refused; in version 2
    /// every digest computed again from the object beside it.
    pub fn read(bytes: &'a [u8]) -> Result<Lockfile<'a>, FormatError> {
        let v = json::parse(bytes, Limits::default()).map_err(|e| FormatError {
            rule: "lockfile-json",
            detail: e.to_string(),
        })?;
        let version = schema_version(&v).filter(|v| (1..=SCHEMA_VERSION).contains(v));
        let Some(version) = version else {
            return Err(FormatError {
                rule: "lockfile-version",
                detail: "schema_version must be 1 or 2, the lockfile versions this reader knows"
                    .into(),
            });
        };
        let top: &[&str] = if version == 1 {
            &["schema_version", "servers"]
        } else {
            &["approval_serial", "schema_version", "servers"]
        };
        let top = RULES.object(&v, "the lockfile", top)?;
        let approval_serial = if version == 1 {
            0
        } else {
            let serial = RULES.whole(top, "approval_serial", "the lockfile", 1)?;
            // Every reader must read the same serial: at most 2^53, like every pinned number.
            if serial > MAX_SERIAL {
                return Err(RULES.field("approval_serial is above 2^53"));
            }
            serial
        };
        let mut ids = HashSet::new();
        let mut servers = Vec::new();
        for (i, sv) in RULES
            .array(top, "servers", "the lockfile")?
            .iter()
            .enumerate()
        {
            let what = format!("servers[{i}]");
            let server = if version == 1 {
                let o = RULES.object(
                    sv,
                    &what,
                    &["id", "protocol_version", "reported_name", "tools"],
                )?;
                LockServer {
                    id: RULES.text(o, "id", &what)?.to_string(),
                    reported_name: RULES.text_or_null(o, "reported_name", &what)?,
                    protocol_version: RULES.optional_text(o, "protocol_version", &what)?,
                    package: None,
                    instructions: InstructionsPin::Unpinned,
                    tools: read_pins(o, "tools", &what, read_pin_v1)?,
                    prompts: None,
                }
            } else {
                let known = [
                    "id",
                    "instructions",
                    "package",
                    "prompts",
                    "protocol_version",
                    "reported_name",
                    "tools",
                ];
                let o = RULES.object(sv, &what, &known)?;
                LockServer {
                    id: RULES.text(o, "id", &what)?.to_string(),
                    reported_name: RULES.text_or_null(o, "reported_name", &what)?,
                    protocol_version: Some(RULES.text(o, "protocol_version", &what)?.to_string()),
                    package: match o.get("package") {
                        Some(Value::Null) => None,
                        Some(p) => Some(Package::read(p, &what, RULES)?),
                        None => return Err(RULES.field(format!("{what}.package is missing"))),
                    },
                    instructions: read_instructions(o, &what)?,
                    tools: read_pins(o, "tools", &what, read_pin_v2)?,
                    prompts: Some(read_pins(o, "prompts", &what, read_pin_v2)?),
                }
            };
            if server.id.is_empty() {
                return Err(RULES.field(format!("{what}.id is empty")));
            }
            RULES.unique(&mut ids, &server.id, "the lockfile's servers")?;
            servers.push(server);
        }
        Ok(Lockfile {
            schema_version: version,
            approval_serial,
            servers,
        })
    }
}
