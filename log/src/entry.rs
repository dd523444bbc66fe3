//! The pinlog log entry: one look at a server whose surface is new or moved, as canonical JSON.
//!
//! The format is `docs/SPEC-log.md`; every rule below is named there. An entry is read back only
//! if its bytes are exactly the canonical form of what they say, so one entry has one encoding.

use std::fmt;

use pinlog_core::json::{self, Limits, Value};
use pinlog_core::{Digest, Listing, ServerId};

use crate::tiles::MAX_ENTRY;

/// The entry format version written in `v`.
pub const VERSION: u64 = 1;

pub use pinlog_core::clock::Timestamp;

/// The server's entry before this one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Previous {
    pub index: u64,
    pub surface: Digest,
}

/// How the server was looked at. Names of environment variables only, never their values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// The crawler and its version, e.g. `pinlog/0.1.0`.
    pub crawler: String,
    /// The package version or image digest probed; `None` for a remote endpoint.
    pub package_version: Option<String>,
    pub protocol_asked: String,
    pub protocol_negotiated: String,
    /// `stdio`, `streamable-http` or `sse`.
    pub transport: String,
    /// Sandbox used, e.g. `bubblewrap`, or `none`.
    pub sandbox: String,
    pub env_supplied: Vec<String>,
    pub env_placeholders: Vec<String>,
    /// Command-line arguments filled with placeholder values: an option by its name (`--token`),
    /// a positional argument by its position (`$2`). Written only when there is one, so an entry
    /// made before arguments were recorded reads back unchanged.
    pub arg_placeholders: Vec<String>,
}

/// One log entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub observed_at: Timestamp,
    pub server: ServerId,
    /// The digest of the surface commitment: see [`surface_digest`].
    pub surface: Digest,
    pub tools: Digest,
    pub prompts: Digest,
    pub instructions: Option<Digest>,
    pub previous: Option<Previous>,
    /// Change labels, sorted and unique.
    pub labels: Vec<String>,
    pub probe: Probe,
    /// The digest of the canonical surface document, served at `blobs/sha256/<hex>`.
    pub blob: Digest,
}

/// Why an entry (or a surface blob) was refused: a stable rule name and what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryError {
    pub rule: &'static str,
    pub detail: String,
}

impl EntryError {
    fn new(rule: &'static str, detail: impl Into<String>) -> Self {
        EntryError {
            rule,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for EntryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.rule, self.detail)
    }
}

impl std::error::Error for EntryError {}

const FIELDS: [&str; 11] = [
    "blob",
    "instructions",
    "labels",
    "observed_at",
    "previous",
    "probe",
    "prompts",
    "server",
    "surface",
    "tools",
    "v",
];
const PROBE_FIELDS: [&str; 8] = [
    "crawler",
    "env_placeholders",
    "env_supplied",
    "package_version",
    "protocol_asked",
    "protocol_negotiated",
    "sandbox",
    "transport",
];
/// `probe` with its optional member, which sorts first.
const PROBE_FIELDS_WITH_ARGS: [&str; 9] = [
    "arg_placeholders",
    "crawler",
    "env_placeholders",
    "env_supplied",
    "package_version",
    "protocol_asked",
    "protocol_negotiated",
    "sandbox",
    "transport",
];
const TRANSPORTS: [&str; 3] = ["sse", "stdio", "streamable-http"];

/// The surface digest: SHA-256 of the canonical `{"instructions":…,"prompts":…,"tools":…}` whose
/// values are the instructions digest (or null) and the two set hashes, as `sha256:<hex>` strings.
pub fn surface_digest(tools: &Digest, prompts: &Digest, instructions: Option<&Digest>) -> Digest {
    // Written piece by piece: this runs once per entry read.
    let mut text = [0u8; 256];
    let mut len = 0;
    let mut put = |b: &[u8]| {
        text[len..len + b.len()].copy_from_slice(b);
        len += b.len();
    };
    put(b"{\"instructions\":");
    match instructions {
        Some(d) => {
            put(b"\"sha256:");
            put(&d.hex_bytes());
            put(b"\"");
        }
        None => put(b"null"),
    }
    put(b",\"prompts\":\"sha256:");
    put(&prompts.hex_bytes());
    put(b"\",\"tools\":\"sha256:");
    put(&tools.hex_bytes());
    put(b"\"}");
    Digest::of(&text[..len])
}

impl Entry {
    /// The canonical bytes of the entry, as appended to the log.
    pub fn to_bytes(&self) -> Result<Vec<u8>, EntryError> {
        self.check()?;
        let mut o = Vec::with_capacity(1024);
        let s = |o: &mut Vec<u8>, v: &str| json::write_string(o, v);
        let list = |o: &mut Vec<u8>, items: &[String]| {
            json::write_strings(o, items.iter().map(String::as_str));
        };
        // Members in RFC 8785 order; all names are ASCII, so byte order is UTF-16 order.
        o.extend_from_slice(b"{\"blob\":");
        s(&mut o, &self.blob.to_string());
        o.extend_from_slice(b",\"instructions\":");
        match &self.instructions {
            Some(d) => s(&mut o, &d.to_string()),
            None => o.extend_from_slice(b"null"),
        }
        o.extend_from_slice(b",\"labels\":");
        list(&mut o, &self.labels);
        o.extend_from_slice(b",\"observed_at\":");
        s(&mut o, self.observed_at.as_str());
        o.extend_from_slice(b",\"previous\":");
        match &self.previous {
            Some(p) => {
                o.extend_from_slice(format!("{{\"index\":{},\"surface\":", p.index).as_bytes());
                s(&mut o, &p.surface.to_string());
                o.push(b'}');
            }
            None => o.extend_from_slice(b"null"),
        }
        let p = &self.probe;
        o.extend_from_slice(b",\"probe\":{");
        if !p.arg_placeholders.is_empty() {
            o.extend_from_slice(b"\"arg_placeholders\":");
            list(&mut o, &p.arg_placeholders);
            o.push(b',');
        }
        o.extend_from_slice(b"\"crawler\":");
        s(&mut o, &p.crawler);
        o.extend_from_slice(b",\"env_placeholders\":");
        list(&mut o, &p.env_placeholders);
        o.extend_from_slice(b",\"env_supplied\":");
        list(&mut o, &p.env_supplied);
        o.extend_from_slice(b",\"package_version\":");
        match &p.package_version {
            Some(v) => s(&mut o, v),
            None => o.extend_from_slice(b"null"),
        }
        o.extend_from_slice(b",\"protocol_asked\":");
        s(&mut o, &p.protocol_asked);
        o.extend_from_slice(b",\"protocol_negotiated\":");
        s(&mut o, &p.protocol_negotiated);
        o.extend_from_slice(b",\"sandbox\":");
        s(&mut o, &p.sandbox);
        o.extend_from_slice(b",\"transport\":");
        s(&mut o, &p.transport);
        o.extend_from_slice(b"},\"prompts\":");
        s(&mut o, &self.prompts.to_string());
        o.extend_from_slice(b",\"server\":");
        s(&mut o, self.server.as_str());
        o.extend_from_slice(b",\"surface\":");
        s(&mut o, &self.surface.to_string());
        o.extend_from_slice(b",\"tools\":");
        s(&mut o, &self.tools.to_string());
        o.extend_from_slice(format!(",\"v\":{VERSION}}}").as_bytes());
        if o.len() > MAX_ENTRY {
            return Err(EntryError::new(
                "entry-too-large",
                format!("{} bytes; an entry is at most {MAX_ENTRY}", o.len()),
            ));
        }
        Ok(o)
    }

    /// Reads an entry, holding it to every rule that needs no other entry.
    pub fn read(bytes: &[u8]) -> Result<Entry, EntryError> {
        if bytes.len() > MAX_ENTRY {
            return Err(EntryError::new(
                "entry-too-large",
                format!("{} bytes; an entry is at most {MAX_ENTRY}", bytes.len()),
            ));
        }
        let value = json::parse(bytes, Limits::default())
            .map_err(|e| EntryError::new("entry-json", e.to_string()))?;
        // Sized for the answer expected: a canonical entry writes back to its own length.
        let mut canonical = Vec::with_capacity(bytes.len());
        json::write_canonical(&value, &mut canonical)
            .map_err(|e| EntryError::new("entry-json", e.to_string()))?;
        if canonical != bytes {
            let at = canonical
                .iter()
                .zip(bytes)
                .position(|(a, b)| a != b)
                .unwrap_or(canonical.len().min(bytes.len()));
            return Err(EntryError::new(
                "entry-not-canonical",
                format!("the bytes differ from their RFC 8785 form at byte {at}"),
            ));
        }
        let entry = from_value(&value)?;
        entry.check()?;
        Ok(entry)
    }

    /// `previous` must name exactly this server's last entry, `last` (index and surface), or be
    /// null when the server has none.
    pub fn check_previous(&self, last: Option<(u64, Digest)>) -> Result<(), EntryError> {
        let server = &self.server;
        let why = match (&self.previous, last) {
            (None, None) => return Ok(()),
            (Some(p), Some((i, s))) if p.index == i && p.surface == s => return Ok(()),
            (Some(p), None) => format!(
                "previous names entry {} but {server} has no earlier entry; it must be null",
                p.index
            ),
            (None, Some((i, _))) => {
                format!("previous is null but {server} already has entry {i}")
            }
            (Some(p), Some((i, s))) => format!(
                "previous is entry {} with {}, but {server}'s last entry is {i} with {s}",
                p.index, p.surface
            ),
        };
        Err(EntryError::new("entry-previous", why))
    }

    /// The blob must hold the surface the entry's digests describe.
    pub fn check_blob(&self, blob: &SurfaceSummary) -> Result<(), EntryError> {
        let parts = [
            ("tools", Some(self.tools), Some(blob.tools)),
            ("prompts", Some(self.prompts), Some(blob.prompts)),
            ("instructions", self.instructions, blob.instructions),
        ];
        for (name, e, b) in parts {
            if e != b {
                let show = |d: Option<Digest>| d.map_or("null".to_string(), |d| d.to_string());
                return Err(EntryError::new(
                    "blob-mismatch",
                    format!(
                        "the entry's {name} is {} but the blob gives {}",
                        show(e),
                        show(b)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The rules on values that the types do not already hold.
    fn check(&self) -> Result<(), EntryError> {
        let want = surface_digest(&self.tools, &self.prompts, self.instructions.as_ref());
        if self.surface != want {
            return Err(EntryError::new(
                "entry-surface",
                format!("surface is {} but its parts give {want}", self.surface),
            ));
        }
        if let Some(p) = &self.previous {
            if p.surface == self.surface {
                return Err(EntryError::new(
                    "entry-unchanged",
                    "the surface is the same as the previous entry's: nothing moved",
                ));
            }
        }
        sorted_tokens("labels", &self.labels, is_label)?;
        let p = &self.probe;
        sorted_tokens("probe.env_supplied", &p.env_supplied, is_env_name)?;
        sorted_tokens("probe.env_placeholders", &p.env_placeholders, is_env_name)?;
        sorted_tokens("probe.arg_placeholders", &p.arg_placeholders, is_arg_token)?;
        if let Some(both) = p
            .env_supplied
            .iter()
            .find(|n| p.env_placeholders.contains(n))
        {
            return Err(EntryError::new(
                "entry-field",
                format!("probe: {both} is both supplied and a placeholder"),
            ));
        }
        text_field("probe.crawler", &p.crawler)?;
        text_field("probe.sandbox", &p.sandbox)?;
        if let Some(v) = &p.package_version {
            text_field("probe.package_version", v)?;
        }
        for (name, v) in [
            ("probe.protocol_asked", &p.protocol_asked),
            ("probe.protocol_negotiated", &p.protocol_negotiated),
        ] {
            text_field(name, v)?;
        }
        if !TRANSPORTS.contains(&p.transport.as_str()) {
            return Err(EntryError::new(
                "entry-field",
                format!("probe.transport is not one of {}", TRANSPORTS.join(", ")),
            ));
        }
        Ok(())
    }
}

fn is_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// An option's name (`-` or `--`, a letter or digit, then letters, digits and `._-`), or `$` and
/// a position from 1 to 999 without a leading zero; at most 128 bytes.
fn is_arg_token(s: &str) -> bool {
    if let Some(n) = s.strip_prefix('$') {
        return (1..=3).contains(&n.len())
            && !n.starts_with('0')
            && n.bytes().all(|b| b.is_ascii_digit());
    }
    let body = s.strip_prefix("--").or_else(|| s.strip_prefix('-'));
    s.len() <= 128
        && body.is_some_and(|b| {
            b.bytes().next().is_some_and(|c| c.is_ascii_alphanumeric())
                && b.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
        })
}

fn is_env_name(s: &str) -> bool {
    let mut b = s.bytes();
    s.len() <= 128
        && b.next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// Printable ASCII without spaces, 1 to 128 bytes: safe to show anywhere as it is.
fn text_field(name: &str, v: &str) -> Result<(), EntryError> {
    if v.is_empty() || v.len() > 128 || !v.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(EntryError::new(
            "entry-field",
            format!("{name} must be 1 to 128 printable ASCII characters without spaces"),
        ));
    }
    Ok(())
}

fn sorted_tokens(name: &str, items: &[String], ok: fn(&str) -> bool) -> Result<(), EntryError> {
    if items.len() > 256 {
        return Err(EntryError::new(
            "entry-field",
            format!("{name} holds over 256 items"),
        ));
    }
    if let Some(bad) = items.iter().find(|s| !ok(s)) {
        return Err(EntryError::new(
            "entry-field",
            format!(
                "{name} holds an item of the wrong shape: {}",
                pinlog_core::render::quoted(bad, 64)
            ),
        ));
    }
    if items.windows(2).any(|w| w[0] >= w[1]) {
        return Err(EntryError::new(
            "entry-field",
            format!("{name} must be sorted with no repeats"),
        ));
    }
    Ok(())
}

fn field_err(name: &str, want: &str) -> EntryError {
    EntryError::new("entry-field", format!("{name} must be {want}"))
}

fn members<'v>(
    v: &'v Value<'_>,
    name: &str,
    known: &[&str],
) -> Result<&'v json::Object<'v>, EntryError> {
    let o = v.as_object().ok_or_else(|| field_err(name, "an object"))?;
    // The common case, and the only one in canonical input: exactly the known names, in order.
    if o.len() == known.len() && o.iter().zip(known).all(|((k, _), want)| k == *want) {
        return Ok(o);
    }
    for (k, _) in o.iter() {
        if !known.contains(&k) {
            return Err(EntryError::new(
                "entry-field",
                format!(
                    "unknown member {} in {name}",
                    pinlog_core::render::quoted(k, 64)
                ),
            ));
        }
    }
    for k in known {
        if o.get(k).is_none() {
            return Err(EntryError::new(
                "entry-field",
                format!("{name} has no member \"{k}\""),
            ));
        }
    }
    Ok(o)
}

/// The values of an object that [`members`] accepted, in the order of `known`.
fn fields<'v, const N: usize>(o: &'v json::Object<'v>, known: &[&str; N]) -> [&'v Value<'v>; N] {
    let in_order = o.iter().map(|(k, _)| k).eq(known.iter().copied());
    let mut values = o.iter().map(|(_, v)| v);
    std::array::from_fn(|i| {
        if in_order {
            values.next()
        } else {
            o.get(known[i])
        }
        .expect("members() checked every name is present")
    })
}

fn string<'v>(v: &'v Value<'_>, name: &str) -> Result<&'v str, EntryError> {
    v.as_str().ok_or_else(|| field_err(name, "a string"))
}

fn digest(v: &Value<'_>, name: &str) -> Result<Digest, EntryError> {
    string(v, name)?
        .parse()
        .map_err(|_| field_err(name, "a digest sha256:<64 lowercase hex>"))
}

fn strings(v: &Value<'_>, name: &str) -> Result<Vec<String>, EntryError> {
    v.as_array()
        .ok_or_else(|| field_err(name, "an array of strings"))?
        .iter()
        .map(|item| string(item, name).map(str::to_string))
        .collect()
}

fn from_value(v: &Value<'_>) -> Result<Entry, EntryError> {
    // The version first: another version may well have other members.
    let version = v.as_object().and_then(|o| o.get("v"));
    if !matches!(version, Some(Value::Number(n)) if n.literal() == "1") {
        return Err(EntryError::new(
            "entry-version",
            "v must be 1; this reader knows no other entry version",
        ));
    }
    let o = members(v, "the entry", &FIELDS)?;
    let [blob, instructions, labels, observed_at, previous, probe, prompts, server, surface, tools, _] =
        fields(o, &FIELDS);
    let previous = match previous {
        Value::Null => None,
        p => {
            let po = members(p, "previous", &["index", "surface"])?;
            let [index, surface] = fields(po, &["index", "surface"]);
            let index = match index {
                Value::Number(n) => n.literal().parse::<u64>().ok(),
                _ => None,
            }
            .ok_or_else(|| field_err("previous.index", "a whole number"))?;
            Some(Previous {
                index,
                surface: digest(surface, "previous.surface")?,
            })
        }
    };
    // `arg_placeholders` is there only when it says something: an empty one is a second
    // spelling of its absence, and one entry has one spelling.
    let (po, arg_placeholders) = match probe.as_object().and_then(|o| o.get("arg_placeholders")) {
        None => (members(probe, "probe", &PROBE_FIELDS)?, Vec::new()),
        Some(a) => {
            let po = members(probe, "probe", &PROBE_FIELDS_WITH_ARGS)?;
            let args = strings(a, "probe.arg_placeholders")?;
            if args.is_empty() {
                return Err(EntryError::new(
                    "entry-field",
                    "probe.arg_placeholders is left out when no argument was a placeholder; \
                     it is never empty",
                ));
            }
            (po, args)
        }
    };
    let [crawler, env_placeholders, env_supplied, package_version, protocol_asked, protocol_negotiated, sandbox, transport] =
        PROBE_FIELDS.map(|k| po.get(k).expect("members() checked every name is present"));
    let probe = Probe {
        crawler: string(crawler, "probe.crawler")?.to_string(),
        package_version: match package_version {
            Value::Null => None,
            v => Some(string(v, "probe.package_version")?.to_string()),
        },
        protocol_asked: string(protocol_asked, "probe.protocol_asked")?.to_string(),
        protocol_negotiated: string(protocol_negotiated, "probe.protocol_negotiated")?.to_string(),
        transport: string(transport, "probe.transport")?.to_string(),
        sandbox: string(sandbox, "probe.sandbox")?.to_string(),
        env_supplied: strings(env_supplied, "probe.env_supplied")?,
        env_placeholders: strings(env_placeholders, "probe.env_placeholders")?,
        arg_placeholders,
    };
    Ok(Entry {
        observed_at: Timestamp::parse(string(observed_at, "observed_at")?)
            .ok_or_else(|| field_err("observed_at", "a UTC time YYYY-MM-DDTHH:MM:SSZ"))?,
        server: string(server, "server")?.parse().map_err(
            |e: pinlog_core::server::ServerIdError| {
                EntryError::new("entry-field", format!("server: {}", e.0))
            },
        )?,
        surface: digest(surface, "surface")?,
        tools: digest(tools, "tools")?,
        prompts: digest(prompts, "prompts")?,
        instructions: match instructions {
            Value::Null => None,
            v => Some(digest(v, "instructions")?),
        },
        previous,
        labels: strings(labels, "labels")?,
        probe,
        blob: digest(blob, "blob")?,
    })
}

/// A surface document as stored in a blob: the canonical JSON object
/// `{"instructions": string|null, "prompts": [...], "tools": [...]}`, each tool and prompt as
/// served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SurfaceSummary {
    pub tools: Digest,
    pub prompts: Digest,
    pub instructions: Option<Digest>,
}

impl SurfaceSummary {
    /// Reads a surface blob, holding it to canonical bytes, and digests its parts.
    ///
    /// No tree of the blob is built: it is read once into its canonical bytes (which must be the
    /// blob), then each listing one item at a time, keeping 40 bytes an item. A blob of the
    /// largest size is checked in at most about 3.3 times its size besides itself (docs/SPEC-log.md,
    /// section 9).
    pub fn read(bytes: &[u8]) -> Result<SurfaceSummary, EntryError> {
        let canonical = json::canonicalize(bytes, Limits::default())
            .map_err(|e| EntryError::new("blob-json", e.to_string()))?
            .map_err(|e| EntryError::new("blob-undecidable", e.to_string()))?;
        if canonical != bytes {
            return Err(EntryError::new(
                "blob-not-canonical",
                "the bytes differ from their RFC 8785 form",
            ));
        }
        drop(canonical);
        // Canonical and strictly read: the members are in order and each value is where the
        // separators between them say.
        let shape = || {
            EntryError::new(
                "blob-field",
                "the surface must be an object of exactly instructions, prompts and tools",
            )
        };
        if bytes.first() != Some(&b'{') {
            return Err(shape());
        }
        let first = json::next_item_separator(bytes, 1, 1).ok_or_else(shape)?;
        let second = json::next_item_separator(bytes, first + 1, first + 1).ok_or_else(shape)?;
        if json::next_item_separator(bytes, second + 1, second + 1).is_some() {
            return Err(shape());
        }
        let member = |from: usize, to: usize, name: &str| {
            let head = format!("\"{name}\":");
            bytes[from..to]
                .strip_prefix(head.as_bytes())
                .ok_or_else(shape)
        };
        let instructions = member(1, first, "instructions")?;
        let prompts = member(first + 1, second, "prompts")?;
        let tools = member(second + 1, bytes.len() - 1, "tools")?;
        let set = |name: &str, items: &[u8]| -> Result<Digest, EntryError> {
            if items.first() != Some(&b'[') {
                return Err(EntryError::new(
                    "blob-field",
                    format!("{name} must be an array"),
                ));
            }
            let listing = Listing::read(items, Limits::default())
                .map_err(|e| EntryError::new("blob-field", format!("{name}: {e}")))?;
            listing.set_hash().ok_or_else(|| {
                EntryError::new("blob-undecidable", format!("{name}: an item has no digest"))
            })
        };
        let instructions = match instructions {
            b"null" => None,
            text if text.first() == Some(&b'"') => match json::parse(text, Limits::default()) {
                Ok(Value::String(s)) => pinlog_core::digest::instructions_digest(Some(&s)),
                _ => return Err(shape()),
            },
            _ => {
                return Err(EntryError::new(
                    "blob-field",
                    "instructions must be a string or null",
                ))
            }
        };
        Ok(SurfaceSummary {
            tools: set("tools", tools)?,
            prompts: set("prompts", prompts)?,
            instructions,
        })
    }
}
