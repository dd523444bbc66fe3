//! The queue's two messages: a job (one look to make) and a result (what the look found), or in
//! place of a result too large for one message of the server's, a reference to it in the object
//! store. All are canonical JSON, bounded in size, read back with the strict reader and held to
//! every rule below; a message that breaks one is refused with the rule's name
//! (docs/OPERATIONS.md, "Workers").

use std::fmt;
use std::time::Duration;

use pinlog_core::json::{self, Limits, Object, Value};
use pinlog_core::{Digest, ServerId};
use pinlog_log::surface_blob::{self, SurfaceBlob, MAX_BLOB};
use pinlog_mcp::revision::Revision;
use pinlog_mcp::surface::Surface;

use crate::candidate::{Candidate, EnvVar, Launch, Remote, SourceKind};
use crate::limits::{Enforcer, InForce, Limits as Caps};
use crate::look::{Install, Look};
use crate::names;
use crate::outcome::{LookFailure, Reason};
use crate::run::Conditions;
use crate::start::Start;

use super::OBJECTS;

/// The largest job. A candidate is a few names, and its start at most 32 arguments and 32
/// variables of 512 bytes (1 KiB each once escaped), beside at most 64 variable names per
/// source: under 128 KiB, so every job a plan can make fits.
pub const MAX_JOB: usize = 256 << 10;
/// The largest result: the largest surface the log takes, and room for the rest.
pub const MAX_RESULT: usize = MAX_BLOB + (256 << 10);
/// The format both messages are written in; a message of another is refused.
const VERSION: &str = "1";
/// The longest failure detail a result carries.
const MAX_DETAIL: usize = 16 << 10;
/// The most notes a result carries: a look makes at most three.
const MAX_NOTES: usize = 8;

/// A message refused: the rule it broke, and what was found (safe to print).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub rule: &'static str,
    pub detail: String,
}

impl Refused {
    fn new(rule: &'static str, detail: impl Into<String>) -> Refused {
        Refused {
            rule,
            detail: pinlog_core::render::safe(&detail.into()).into_owned(),
        }
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.rule, self.detail)
    }
}

/// The id of one planned look: the run's random token and the look's place in the plan, as in
/// `3f9c0a1b2d4e5f60-17`. Random per run, so two stores feeding one NATS server, or a store
/// made again, never reuse an id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LookId(String);

impl LookId {
    pub fn new(token: &RunToken, index: u64) -> LookId {
        LookId(format!("{}-{index}", token.0))
    }

    pub fn parse(s: &str) -> Result<LookId, Refused> {
        let bad = || {
            Refused::new(
                "look-id",
                format!(
                    "{} is not <16 hex digits>-<number>",
                    pinlog_core::render::quoted(s, 60)
                ),
            )
        };
        let (token, index) = s.split_once('-').ok_or_else(bad)?;
        RunToken::parse(token).ok_or_else(bad)?;
        if index.is_empty()
            || index.len() > 10
            || !index.bytes().all(|b| b.is_ascii_digit())
            || (index.len() > 1 && index.starts_with('0'))
        {
            return Err(bad());
        }
        Ok(LookId(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for LookId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A run's random token, 16 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunToken(String);

impl RunToken {
    pub fn random() -> RunToken {
        let mut b = [0u8; 8];
        getrandom::fill(&mut b).expect("the system's random source");
        RunToken(b.iter().map(|x| format!("{x:02x}")).collect())
    }

    pub fn parse(s: &str) -> Option<RunToken> {
        (s.len() == 16 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
            .then(|| RunToken(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// One look to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub look: LookId,
    pub candidate: Candidate,
}

impl Job {
    pub fn to_bytes(&self) -> Vec<u8> {
        let c = &self.candidate;
        let mut o = Vec::new();
        o.extend_from_slice(b"{\"candidate\":{\"env\":[");
        for (i, v) in c.env.iter().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            o.extend_from_slice(b"{\"name\":");
            json::write_string(&mut o, &v.name);
            o.extend_from_slice(
                format!(",\"required\":{},\"secret\":{}}}", v.required, v.secret).as_bytes(),
            );
        }
        o.extend_from_slice(b"],\"found_by\":");
        json::write_strings(&mut o, c.found_by.iter().map(|s| s.as_str()));
        o.extend_from_slice(b",\"launch\":");
        write_launch(&mut o, &c.launch);
        o.extend_from_slice(b",\"server\":");
        json::write_string(&mut o, c.id.as_str());
        o.extend_from_slice(b",\"start\":{\"arg_placeholders\":");
        json::write_strings(
            &mut o,
            c.start.arg_placeholders().iter().map(String::as_str),
        );
        o.extend_from_slice(b",\"args\":");
        json::write_strings(&mut o, c.start.args().iter().map(String::as_str));
        o.extend_from_slice(b",\"env\":[");
        for (i, (name, value)) in c.start.env().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            o.extend_from_slice(b"{\"name\":");
            json::write_string(&mut o, name);
            o.extend_from_slice(b",\"value\":");
            write_optional(&mut o, value);
            o.push(b'}');
        }
        o.extend_from_slice(b"]}},\"look\":");
        json::write_string(&mut o, self.look.as_str());
        o.extend_from_slice(b",\"v\":");
        json::write_string(&mut o, VERSION);
        o.push(b'}');
        o
    }

    pub fn read(bytes: &[u8]) -> Result<Job, Refused> {
        let doc = read_canonical(bytes, MAX_JOB, "job")?;
        let top = object(&doc, "the job", &["candidate", "look", "v"])?;
        version(top)?;
        let look = LookId::parse(string(top, "look")?)?;
        let c = object(
            member(top, "candidate")?,
            "candidate",
            &["env", "found_by", "launch", "server", "start"],
        )?;
        let launch = read_launch(member(c, "launch")?)?;
        let found_by = array(c, "found_by")?
            .iter()
            .map(|v| {
                v.as_str().and_then(SourceKind::parse).ok_or_else(|| {
                    Refused::new("found-by", "found_by holds something not a source's name")
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let first = *found_by
            .first()
            .ok_or_else(|| Refused::new("found-by", "found_by is empty"))?;
        let mut candidate = Candidate::new(launch, first).map_err(|e| Refused::new("server", e))?;
        candidate.found_by = found_by;
        let server = string(c, "server")?;
        if candidate.id.as_str() != server {
            return Err(Refused::new(
                "server",
                format!(
                    "the job names {} but its launch is {}",
                    pinlog_core::render::quoted(server, 120),
                    candidate.id
                ),
            ));
        }
        for v in array(c, "env")? {
            let e = object(v, "an env item", &["name", "required", "secret"])?;
            candidate.env.push(EnvVar {
                name: env_name(string(e, "name")?)?,
                required: boolean(e, "required")?,
                secret: boolean(e, "secret")?,
            });
        }
        let start = object(
            member(c, "start")?,
            "start",
            &["arg_placeholders", "args", "env"],
        )?;
        let texts = |name: &str| -> Result<Vec<String>, Refused> {
            array(start, name)?
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| Refused::new("start", format!("{name} holds a non-string")))
                })
                .collect()
        };
        let env = array(start, "env")?
            .iter()
            .map(|v| {
                let e = object(v, "a start variable", &["name", "value"])?;
                Ok((string(e, "name")?.to_string(), optional_string(e, "value")?))
            })
            .collect::<Result<Vec<_>, Refused>>()?;
        candidate.start = Start::from_parts(texts("args")?, &texts("arg_placeholders")?, &env)
            .map_err(|e| Refused::new("start", e))?;
        Ok(Job { look, candidate })
    }
}

fn write_launch(o: &mut Vec<u8>, launch: &Launch) {
    let package = |o: &mut Vec<u8>, kind: &str, name: &str, version: &Option<String>| {
        o.extend_from_slice(format!("{{\"kind\":\"{kind}\",\"name\":").as_bytes());
        json::write_string(o, name);
        o.extend_from_slice(b",\"version\":");
        match version {
            Some(v) => json::write_string(o, v),
            None => o.extend_from_slice(b"null"),
        }
        o.push(b'}');
    };
    match launch {
        Launch::Npm { name, version } => package(o, "npm", name, version),
        Launch::Pypi { name, version } => package(o, "pypi", name, version),
        Launch::Oci { image, digest } => {
            o.extend_from_slice(b"{\"digest\":");
            json::write_string(o, digest);
            o.extend_from_slice(b",\"image\":");
            json::write_string(o, image);
            o.extend_from_slice(b",\"kind\":\"oci\"}");
        }
        Launch::Remote { url, transport } => {
            o.extend_from_slice(b"{\"kind\":\"remote\",\"transport\":");
            json::write_string(o, remote_name(*transport));
            o.extend_from_slice(b",\"url\":");
            json::write_string(o, url);
            o.push(b'}');
        }
    }
}

fn remote_name(t: Remote) -> &'static str {
    match t {
        Remote::StreamableHttp => "streamable-http",
        Remote::Sse => "sse",
    }
}

/// A launch, held to the rules discovery holds names to.
fn read_launch(v: &Value<'_>) -> Result<Launch, Refused> {
    let kind = v
        .as_object()
        .and_then(|o| o.get("kind"))
        .and_then(Value::as_str)
        .ok_or_else(|| Refused::new("launch", "the launch has no kind"))?;
    let name_rule = |r: Result<(), String>| r.map_err(|e| Refused::new("launch", e));
    match kind {
        "npm" | "pypi" => {
            let o = object(v, "launch", &["kind", "name", "version"])?;
            let name = string(o, "name")?.to_string();
            let version = optional_string(o, "version")?;
            if let Some(v) = &version {
                name_rule(names::version(v))?;
            }
            if kind == "npm" {
                name_rule(names::npm_name(&name))?;
                Ok(Launch::Npm { name, version })
            } else {
                name_rule(names::pypi_name(&name))?;
                Ok(Launch::Pypi { name, version })
            }
        }
        "oci" => {
            let o = object(v, "launch", &["digest", "image", "kind"])?;
            let image = string(o, "image")?.to_string();
            let digest = string(o, "digest")?.to_string();
            name_rule(names::oci_image(&image))?;
            name_rule(names::oci_digest(&digest))?;
            Ok(Launch::Oci { image, digest })
        }
        "remote" => {
            let o = object(v, "launch", &["kind", "transport", "url"])?;
            let transport = match string(o, "transport")? {
                "streamable-http" => Remote::StreamableHttp,
                "sse" => Remote::Sse,
                t => {
                    return Err(Refused::new(
                        "launch",
                        format!(
                            "unknown remote transport {}",
                            pinlog_core::render::quoted(t, 40)
                        ),
                    ))
                }
            };
            let url = string(o, "url")?;
            // One endpoint has one identity: the URL as discovery writes it, nothing else.
            if names::remote_url(url).as_deref() != Ok(url) {
                return Err(Refused::new(
                    "launch",
                    format!(
                        "{} is not a remote URL as written by discovery",
                        pinlog_core::render::quoted(url, 120)
                    ),
                ));
            }
            Ok(Launch::Remote {
                url: url.to_string(),
                transport,
            })
        }
        k => Err(Refused::new(
            "launch",
            format!("unknown launch kind {}", pinlog_core::render::quoted(k, 40)),
        )),
    }
}

/// What a look found, as a worker reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct LookResult {
    pub look: LookId,
    pub server: ServerId,
    /// The surface as the log would commit to it, or why there is none.
    pub found: Result<Found, LookFailure>,
    pub version: Option<String>,
    pub registry_digest: Option<String>,
    pub transport: &'static str,
    pub env_wanted: Vec<String>,
    pub env_supplied: Vec<String>,
    pub env_placeholders: Vec<String>,
    pub arg_placeholders: Vec<String>,
    pub caps: Option<InForce>,
    pub install: Option<Install>,
    /// What else the look did to read the server, each safe to print.
    pub notes: Vec<String>,
    pub took: Duration,
    pub conditions: Conditions,
}

/// A surface found.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub revision: Revision,
    /// How many readings of each listing agreed.
    pub passes: u32,
    pub blob: SurfaceBlob,
}

impl LookResult {
    /// The report of a look. The surface is made into the blob the log would commit to here, on
    /// the worker: a surface that cannot be (a number with no canonical form, one too large) is
    /// the failure the single process records for it.
    pub fn of(look: LookId, server: ServerId, l: Look, conditions: Conditions) -> LookResult {
        let found = l.outcome.and_then(|s| {
            surface_blob::build(s.instructions.as_deref(), &s.prompts, &s.tools)
                .map(|blob| Found {
                    revision: s.revision,
                    passes: s.passes,
                    blob,
                })
                .map_err(LookFailure::from_blob)
        });
        LookResult {
            look,
            server,
            found,
            version: l.version,
            registry_digest: l.registry_digest,
            transport: l.transport,
            env_wanted: l.env_wanted,
            env_supplied: l.env_supplied,
            env_placeholders: l.env_placeholders,
            arg_placeholders: l.arg_placeholders,
            caps: l.caps,
            install: l.install,
            notes: l.notes,
            took: l.took,
            conditions,
        }
    }

    /// The look, for the coordinator to settle as the single process settles its own.
    pub fn into_look(self) -> (Look, Conditions) {
        let outcome = self.found.map(|f| {
            let parts = f.blob.parts();
            Surface {
                revision: f.revision,
                // Evidence the entry does not carry: nothing settles on it.
                server_info: None,
                instructions: parts.instructions,
                tools: parts.tools,
                prompts: parts.prompts,
                passes: f.passes,
                // The worker sends only surfaces whose readings agreed.
                complete: true,
            }
        });
        (
            Look {
                outcome,
                version: self.version,
                registry_digest: self.registry_digest,
                transport: self.transport,
                env_wanted: self.env_wanted,
                env_supplied: self.env_supplied,
                env_placeholders: self.env_placeholders,
                arg_placeholders: self.arg_placeholders,
                caps: self.caps,
                install: self.install,
                notes: self.notes,
                // Not carried by the result format: the worker's own table is where to look.
                python: None,
                took: self.took,
            },
            self.conditions,
        )
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut o = Vec::new();
        o.extend_from_slice(b"{\"arg_placeholders\":");
        json::write_strings(&mut o, self.arg_placeholders.iter().map(String::as_str));
        o.extend_from_slice(b",\"caps\":");
        match &self.caps {
            None => o.extend_from_slice(b"null"),
            Some(c) => {
                let l = &c.limits;
                o.extend_from_slice(b"{\"by\":");
                json::write_string(&mut o, c.by.as_str());
                o.extend_from_slice(
                    format!(
                        ",\"cpu_seconds\":{},\"file_bytes\":{},\"memory_bytes\":{},\"processes\":{},\"tmpfs_bytes\":{},\"unpacked_bytes\":{}}}",
                        l.cpu_seconds, l.file_bytes, l.memory_bytes, l.processes, l.tmpfs_bytes, l.unpacked_bytes
                    )
                    .as_bytes(),
                );
            }
        }
        o.extend_from_slice(b",\"conditions\":{\"asked\":");
        json::write_string(&mut o, &self.conditions.asked);
        o.extend_from_slice(b",\"crawler\":");
        json::write_string(&mut o, &self.conditions.crawler);
        o.extend_from_slice(b",\"sandbox\":");
        json::write_string(&mut o, &self.conditions.sandbox);
        o.extend_from_slice(b"},\"env_placeholders\":");
        json::write_strings(&mut o, self.env_placeholders.iter().map(String::as_str));
        o.extend_from_slice(b",\"env_supplied\":");
        json::write_strings(&mut o, self.env_supplied.iter().map(String::as_str));
        o.extend_from_slice(b",\"env_wanted\":");
        json::write_strings(&mut o, self.env_wanted.iter().map(String::as_str));
        o.extend_from_slice(b",\"failure\":");
        match &self.found {
            Ok(_) => o.extend_from_slice(b"null"),
            Err(f) => {
                o.extend_from_slice(b"{\"detail\":");
                json::write_string(&mut o, truncated(&f.detail, MAX_DETAIL));
                o.extend_from_slice(b",\"exit_code\":");
                match f.exit_code {
                    Some(c) => o.extend_from_slice(c.to_string().as_bytes()),
                    None => o.extend_from_slice(b"null"),
                }
                o.extend_from_slice(b",\"reason\":");
                json::write_string(&mut o, f.reason.as_str());
                o.push(b'}');
            }
        }
        o.extend_from_slice(b",\"install\":");
        write_optional(
            &mut o,
            self.install
                .as_ref()
                .map(|i| i.to_string())
                .as_deref()
                .map(|i| truncated(i, MAX_DETAIL)),
        );
        o.extend_from_slice(b",\"look\":");
        json::write_string(&mut o, self.look.as_str());
        o.extend_from_slice(b",\"notes\":");
        json::write_strings(
            &mut o,
            self.notes
                .iter()
                .take(MAX_NOTES)
                .map(|n| truncated(n, MAX_DETAIL)),
        );
        o.extend_from_slice(b",\"passes\":");
        match &self.found {
            Ok(f) => o.extend_from_slice(f.passes.to_string().as_bytes()),
            Err(_) => o.extend_from_slice(b"null"),
        }
        o.extend_from_slice(b",\"registry_digest\":");
        write_optional(&mut o, self.registry_digest.as_deref());
        o.extend_from_slice(b",\"revision\":");
        write_optional(
            &mut o,
            self.found.as_ref().ok().map(|f| f.revision.as_str()),
        );
        o.extend_from_slice(b",\"server\":");
        json::write_string(&mut o, self.server.as_str());
        o.extend_from_slice(b",\"surface\":");
        match &self.found {
            // The blob is canonical, so the result stays canonical with it inside.
            Ok(f) => o.extend_from_slice(f.blob.bytes()),
            Err(_) => o.extend_from_slice(b"null"),
        }
        o.extend_from_slice(format!(",\"took_ms\":{}", self.took.as_millis()).as_bytes());
        o.extend_from_slice(b",\"transport\":");
        json::write_string(&mut o, self.transport);
        o.extend_from_slice(b",\"v\":");
        json::write_string(&mut o, VERSION);
        o.extend_from_slice(b",\"version\":");
        write_optional(&mut o, self.version.as_deref());
        o.push(b'}');
        o
    }

    /// A result, of at most [`MAX_RESULT`] bytes: as a message holds it, or as fetched from the
    /// object store.
    pub fn read(bytes: &[u8]) -> Result<LookResult, Refused> {
        LookResult::from_doc(&read_canonical(bytes, MAX_RESULT, "result")?)
    }

    fn from_doc(doc: &Value<'_>) -> Result<LookResult, Refused> {
        let top = object(
            doc,
            "the result",
            &[
                "arg_placeholders",
                "caps",
                "conditions",
                "env_placeholders",
                "env_supplied",
                "env_wanted",
                "failure",
                "install",
                "look",
                "notes",
                "passes",
                "registry_digest",
                "revision",
                "server",
                "surface",
                "took_ms",
                "transport",
                "v",
                "version",
            ],
        )?;
        version(top)?;
        let look = LookId::parse(string(top, "look")?)?;
        let server_text = string(top, "server")?;
        let server: ServerId = server_text.parse().map_err(|_| {
            Refused::new(
                "server",
                format!(
                    "{} is not a server id",
                    pinlog_core::render::quoted(server_text, 120)
                ),
            )
        })?;
        let transport = match string(top, "transport")? {
            "stdio" => "stdio",
            "streamable-http" => "streamable-http",
            "sse" => "sse",
            t => {
                return Err(Refused::new(
                    "transport",
                    format!("unknown transport {}", pinlog_core::render::quoted(t, 40)),
                ))
            }
        };
        let found = match (member(top, "failure")?, member(top, "surface")?) {
            (Value::Null, Value::Null) | (Value::Object(_), Value::Object(_)) => {
                return Err(Refused::new(
                    "outcome",
                    "a result holds exactly one of a surface and a failure",
                ))
            }
            (Value::Null, surface) => {
                let bytes = json::to_canonical(surface)
                    .map_err(|e| Refused::new("surface", e.to_string()))?;
                let blob =
                    SurfaceBlob::read(bytes).map_err(|e| Refused::new("surface", e.to_string()))?;
                let revision = string(top, "revision")?;
                Ok(Found {
                    revision: revision.parse().map_err(
                        |e: pinlog_mcp::revision::UnknownRevision| {
                            Refused::new("revision", e.to_string())
                        },
                    )?,
                    passes: u32::try_from(number(top, "passes", 1 << 16)?)
                        .map_err(|_| Refused::new("passes", "out of range"))?,
                    blob,
                })
            }
            (failure, _) => {
                let f = object(failure, "failure", &["detail", "exit_code", "reason"])?;
                let token = string(f, "reason")?;
                let reason = Reason::parse(token)
                    .filter(|r| !r.coordinator_only())
                    .ok_or_else(|| {
                        Refused::new(
                            "reason",
                            format!(
                                "{} is not a reason a look ends in",
                                pinlog_core::render::quoted(token, 60)
                            ),
                        )
                    })?;
                let detail = string(f, "detail")?;
                if detail.len() > MAX_DETAIL {
                    return Err(Refused::new(
                        "detail",
                        format!("the detail is {} bytes; at most {MAX_DETAIL}", detail.len()),
                    ));
                }
                let mut failure = LookFailure::new(reason, detail);
                failure.exit_code = match member(f, "exit_code")? {
                    Value::Null => None,
                    v => Some(integer(v, "exit_code")?),
                };
                if !matches!(member(top, "revision")?, Value::Null)
                    || !matches!(member(top, "passes")?, Value::Null)
                {
                    return Err(Refused::new(
                        "outcome",
                        "a failed look has no revision and no passes",
                    ));
                }
                Err(failure)
            }
        };
        let caps = match member(top, "caps")? {
            Value::Null => None,
            v => {
                let c = object(
                    v,
                    "caps",
                    &[
                        "by",
                        "cpu_seconds",
                        "file_bytes",
                        "memory_bytes",
                        "processes",
                        "tmpfs_bytes",
                        "unpacked_bytes",
                    ],
                )?;
                let by = match string(c, "by")? {
                    "cgroup-v1" => Enforcer::CgroupV1,
                    "cgroup-v2" => Enforcer::CgroupV2,
                    "rlimit" => Enforcer::Rlimit,
                    b => {
                        return Err(Refused::new(
                            "caps",
                            format!("unknown enforcer {}", pinlog_core::render::quoted(b, 40)),
                        ))
                    }
                };
                let n = |name| number(c, name, u64::MAX >> 11);
                Some(InForce {
                    limits: Caps {
                        memory_bytes: n("memory_bytes")?,
                        processes: n("processes")?,
                        cpu_seconds: n("cpu_seconds")?,
                        tmpfs_bytes: n("tmpfs_bytes")?,
                        file_bytes: n("file_bytes")?,
                        unpacked_bytes: n("unpacked_bytes")?,
                    },
                    by,
                })
            }
        };
        let cond = object(
            member(top, "conditions")?,
            "conditions",
            &["asked", "crawler", "sandbox"],
        )?;
        let conditions = Conditions {
            crawler: crawler_name(string(cond, "crawler")?)?,
            asked: match string(cond, "asked")? {
                "auto" => "auto".to_string(),
                r => r
                    .parse::<Revision>()
                    .map_err(|e| Refused::new("asked", e.to_string()))?
                    .as_str()
                    .to_string(),
            },
            sandbox: match string(cond, "sandbox")? {
                s @ ("bubblewrap" | "none" | "ssrf-guard") => s.to_string(),
                s => {
                    return Err(Refused::new(
                        "sandbox",
                        format!("unknown sandbox {}", pinlog_core::render::quoted(s, 40)),
                    ))
                }
            },
        };
        let names = |name: &str| -> Result<Vec<String>, Refused> {
            array(top, name)?
                .iter()
                .map(|v| {
                    v.as_str()
                        .ok_or_else(|| Refused::new("env", format!("{name} holds a non-string")))
                        .and_then(env_name)
                })
                .collect()
        };
        Ok(LookResult {
            look,
            server,
            found,
            version: optional_string(top, "version")?
                .map(|v| plain(v, "version"))
                .transpose()?,
            registry_digest: optional_string(top, "registry_digest")?
                .map(|v| plain(v, "registry_digest"))
                .transpose()?,
            transport,
            env_wanted: names("env_wanted")?,
            env_supplied: names("env_supplied")?,
            env_placeholders: names("env_placeholders")?,
            arg_placeholders: array(top, "arg_placeholders")?
                .iter()
                .map(|v| {
                    v.as_str()
                        .filter(|a| is_arg_placeholder(a))
                        .map(str::to_string)
                        .ok_or_else(|| {
                            Refused::new(
                                "arg-placeholders",
                                "arg_placeholders holds something not an option or a position",
                            )
                        })
                })
                .collect::<Result<_, _>>()?,
            caps,
            install: match optional_string(top, "install")? {
                None => None,
                Some(text) => Some(
                    Install::parse(&text)
                        .filter(|_| text.len() <= MAX_DETAIL && !text.chars().any(char::is_control))
                        .ok_or_else(|| {
                            Refused::new(
                                "install",
                                format!(
                                    "{} is not how a look came by its package",
                                    pinlog_core::render::quoted(&text, 60)
                                ),
                            )
                        })?,
                ),
            },
            notes: {
                let notes = array(top, "notes")?;
                if notes.len() > MAX_NOTES {
                    return Err(Refused::new(
                        "notes",
                        format!("more than {MAX_NOTES} notes"),
                    ));
                }
                notes
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .filter(|n| {
                                !n.is_empty()
                                    && n.len() <= MAX_DETAIL
                                    && !n.chars().any(char::is_control)
                            })
                            .map(str::to_string)
                            .ok_or_else(|| {
                                Refused::new("notes", "a note is not one line of printable text")
                            })
                    })
                    .collect::<Result<_, _>>()?
            },
            took: Duration::from_millis(number(top, "took_ms", 1 << 40)?),
            conditions,
        })
    }
}

/// What a worker puts on the results stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Reported {
    /// The result itself, when it fits one message.
    Inline(Box<LookResult>),
    /// Where the result is in the object store.
    Stored(Stored),
}

impl Reported {
    /// A result, or a reference to one: the message's members tell which.
    pub fn read(bytes: &[u8]) -> Result<Reported, Refused> {
        let doc = read_canonical(bytes, MAX_RESULT, "result")?;
        if doc.as_object().is_some_and(|o| o.get("object").is_some()) {
            Stored::from_doc(&doc).map(Reported::Stored)
        } else {
            LookResult::from_doc(&doc).map(|r| Reported::Inline(Box::new(r)))
        }
    }
}

/// A reference to a result put in the object store's bucket [`OBJECTS`]: the object is named by
/// the look id, so a reference can name no other look's object, and must be exactly `length`
/// bytes with this SHA-256 digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub look: LookId,
    pub length: usize,
    pub digest: Digest,
}

impl Stored {
    /// The reference to `result`, a result's bytes, put under `look`.
    pub fn of(look: &LookId, result: &[u8]) -> Stored {
        Stored {
            look: look.clone(),
            length: result.len(),
            digest: Digest::of(result),
        }
    }

    /// The object's name in the bucket.
    pub fn name(&self) -> &str {
        self.look.as_str()
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut o = Vec::new();
        o.extend_from_slice(b"{\"look\":");
        json::write_string(&mut o, self.look.as_str());
        o.extend_from_slice(b",\"object\":{\"bucket\":");
        json::write_string(&mut o, OBJECTS);
        o.extend_from_slice(b",\"digest\":");
        json::write_string(&mut o, &self.digest.to_string());
        o.extend_from_slice(format!(",\"length\":{},\"name\":", self.length).as_bytes());
        json::write_string(&mut o, self.name());
        o.extend_from_slice(b"},\"v\":");
        json::write_string(&mut o, VERSION);
        o.push(b'}');
        o
    }

    fn from_doc(doc: &Value<'_>) -> Result<Stored, Refused> {
        let top = object(doc, "the reference", &["look", "object", "v"])?;
        version(top)?;
        let look = LookId::parse(string(top, "look")?)?;
        let o = object(
            member(top, "object")?,
            "object",
            &["bucket", "digest", "length", "name"],
        )?;
        let bucket = string(o, "bucket")?;
        if bucket != OBJECTS {
            return Err(Refused::new(
                "object-bucket",
                format!(
                    "the reference names the bucket {}; results are put in {OBJECTS}",
                    pinlog_core::render::quoted(bucket, 60)
                ),
            ));
        }
        let name = string(o, "name")?;
        if name != look.as_str() {
            return Err(Refused::new(
                "object-name",
                format!(
                    "the reference names the object {}; the look {look}'s result is put under \
                     its look id",
                    pinlog_core::render::quoted(name, 60)
                ),
            ));
        }
        let text = string(o, "digest")?;
        let digest = text.parse().map_err(|_| {
            Refused::new(
                "object-digest",
                format!(
                    "{} is not sha256:<64 lowercase hex digits>",
                    pinlog_core::render::quoted(text, 80)
                ),
            )
        })?;
        let length = number(o, "length", u64::MAX >> 11)?;
        if length > MAX_RESULT as u64 {
            return Err(Refused::new(
                "too-large",
                format!("the result is {length} bytes; at most {MAX_RESULT}"),
            ));
        }
        Ok(Stored {
            look,
            length: length as usize,
            digest,
        })
    }

    /// The rule an object fetched for this reference breaks, if any: `bytes` are at most one
    /// past [`Stored::length`], as read.
    pub fn check(&self, bytes: &[u8]) -> Result<(), Refused> {
        if bytes.len() != self.length {
            return Err(self.length_differs(bytes.len()));
        }
        let found = Digest::of(bytes);
        if found != self.digest {
            return Err(Refused::new(
                "object-digest",
                format!(
                    "the object {} has the digest {found}; its reference says {}",
                    self.name(),
                    self.digest
                ),
            ));
        }
        Ok(())
    }

    /// The object is not as long as its reference says: `found` bytes, as its description in
    /// the bucket gives or as read (at most one past the reference's length).
    pub fn length_differs(&self, found: usize) -> Refused {
        let found = if found > self.length {
            format!("more than {} bytes", self.length)
        } else {
            format!("{found} bytes")
        };
        Refused::new(
            "object-length",
            format!(
                "the object {} is {found}; its reference says {} bytes",
                self.name(),
                self.length
            ),
        )
    }

    /// No object, or a deleted one, by the reference's name.
    pub fn missing(&self) -> Refused {
        Refused::new(
            "object-missing",
            format!("the bucket {OBJECTS} holds no object {}", self.name()),
        )
    }

    /// An object that is a link to another: a result is put, never linked.
    pub fn linked(&self) -> Refused {
        Refused::new(
            "object-name",
            format!("the object {} is a link to another object", self.name()),
        )
    }

    /// The object's chunks do not match the digest its own description gives.
    pub fn damaged(&self, detail: &str) -> Refused {
        Refused::new(
            "object-digest",
            format!("the object {} does not read: {detail}", self.name()),
        )
    }
}

fn write_optional(o: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => json::write_string(o, s),
        None => o.extend_from_slice(b"null"),
    }
}

/// At most `max` bytes of `s`, cut at a character boundary.
fn truncated(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Reads a message that must be canonical JSON of at most `max` bytes.
fn read_canonical<'a>(bytes: &'a [u8], max: usize, what: &str) -> Result<Value<'a>, Refused> {
    if bytes.len() > max {
        return Err(Refused::new(
            "too-large",
            format!("the {what} is {} bytes; at most {max}", bytes.len()),
        ));
    }
    let doc = json::parse(bytes, Limits::with_max_bytes(max))
        .map_err(|e| Refused::new("json", e.to_string()))?;
    match json::to_canonical(&doc) {
        Ok(c) if c == bytes => Ok(doc),
        Ok(_) => Err(Refused::new(
            "not-canonical",
            format!("the {what} is not written in canonical form (RFC 8785)"),
        )),
        Err(e) => Err(Refused::new("not-canonical", e.to_string())),
    }
}

fn version(o: &Object<'_>) -> Result<(), Refused> {
    match string(o, "v")? {
        VERSION => Ok(()),
        v => Err(Refused::new(
            "version",
            format!(
                "format {} is not this crawler's ({VERSION})",
                pinlog_core::render::quoted(v, 20)
            ),
        )),
    }
}

/// `v` as an object with exactly the members `names`.
fn object<'v, 'a>(v: &'v Value<'a>, what: &str, names: &[&str]) -> Result<&'v Object<'a>, Refused> {
    let o = v
        .as_object()
        .ok_or_else(|| Refused::new("shape", format!("{what} is a {}, not an object", v.kind())))?;
    for (name, _) in o.iter() {
        if !names.contains(&name) {
            return Err(Refused::new(
                "shape",
                format!(
                    "{what} has an unknown member {}",
                    pinlog_core::render::quoted(name, 60)
                ),
            ));
        }
    }
    if let Some(missing) = names.iter().find(|n| o.get(n).is_none()) {
        return Err(Refused::new("shape", format!("{what} has no {missing}")));
    }
    Ok(o)
}

fn member<'v, 'a>(o: &'v Object<'a>, name: &str) -> Result<&'v Value<'a>, Refused> {
    o.get(name)
        .ok_or_else(|| Refused::new("shape", format!("no member {name}")))
}

fn string<'v>(o: &'v Object<'_>, name: &str) -> Result<&'v str, Refused> {
    member(o, name)?
        .as_str()
        .ok_or_else(|| Refused::new("shape", format!("{name} is not a string")))
}

fn optional_string(o: &Object<'_>, name: &str) -> Result<Option<String>, Refused> {
    match member(o, name)? {
        Value::Null => Ok(None),
        v => v
            .as_str()
            .map(|s| Some(s.to_string()))
            .ok_or_else(|| Refused::new("shape", format!("{name} is neither a string nor null"))),
    }
}

fn array<'v, 'a>(o: &'v Object<'a>, name: &str) -> Result<&'v [Value<'a>], Refused> {
    member(o, name)?
        .as_array()
        .ok_or_else(|| Refused::new("shape", format!("{name} is not an array")))
}

fn boolean(o: &Object<'_>, name: &str) -> Result<bool, Refused> {
    match member(o, name)? {
        Value::Bool(b) => Ok(*b),
        _ => Err(Refused::new(
            "shape",
            format!("{name} is not true or false"),
        )),
    }
}

/// A whole number from 0 to `max`, as canonical JSON writes one.
fn number(o: &Object<'_>, name: &str, max: u64) -> Result<u64, Refused> {
    let bad = || {
        Refused::new(
            "number",
            format!("{name} is not a whole number up to {max}"),
        )
    };
    match member(o, name)? {
        Value::Number(n) => n
            .literal()
            .parse::<u64>()
            .ok()
            .filter(|v| *v <= max)
            .ok_or_else(bad),
        _ => Err(bad()),
    }
}

fn integer(v: &Value<'_>, name: &str) -> Result<i32, Refused> {
    match v {
        Value::Number(n) => n.literal().parse::<i32>().ok(),
        _ => None,
    }
    .ok_or_else(|| Refused::new("number", format!("{name} is not a 32-bit integer")))
}

/// An environment variable's name: what a server reads, and an entry may name.
fn env_name(s: &str) -> Result<String, Refused> {
    let ok = !s.is_empty()
        && s.len() <= 128
        && !s.as_bytes()[0].is_ascii_digit()
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok {
        Ok(s.to_string())
    } else {
        Err(Refused::new(
            "env",
            format!(
                "{} is not a variable's name",
                pinlog_core::render::quoted(s, 60)
            ),
        ))
    }
}

/// A short printable value: a version or a registry digest.
/// An argument named in `arg_placeholders`: an option (`-x`, `--name`) or a position (`$N`), as
/// the log entry's rules have them; the entry's own reader checks them again at the append.
fn is_arg_placeholder(a: &str) -> bool {
    let position = a
        .strip_prefix('$')
        .is_some_and(|n| !n.is_empty() && n.len() <= 2 && n.bytes().all(|b| b.is_ascii_digit()));
    let option = a.len() <= 128
        && a.starts_with('-')
        && a.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    position || option
}

fn plain(s: String, name: &str) -> Result<String, Refused> {
    if s.is_empty() || s.len() > 256 || s.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(Refused::new(
            "shape",
            format!(
                "{name} {} is not a short printable value",
                pinlog_core::render::quoted(&s, 60)
            ),
        ));
    }
    Ok(s)
}

/// `pinlog/<version>`, as a crawler names itself in an entry.
fn crawler_name(s: &str) -> Result<String, Refused> {
    let ok = s.strip_prefix("pinlog/").is_some_and(|v| {
        !v.is_empty()
            && v.len() <= 64
            && v.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+'))
    });
    if ok {
        Ok(s.to_string())
    } else {
        Err(Refused::new(
            "crawler",
            format!(
                "{} is not pinlog/<version>",
                pinlog_core::render::quoted(s, 60)
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(launch: Launch) -> Job {
        let mut candidate = Candidate::new(launch, SourceKind::Registry).unwrap();
        candidate.found_by.push(SourceKind::Seeds);
        candidate.env.push(EnvVar {
            name: "API_KEY".into(),
            required: true,
            secret: true,
        });
        candidate.start = Start::from_parts(
            vec![
                "server".into(),
                "start".into(),
                "--token".into(),
                "pinlog-placeholder".into(),
            ],
            &["--token".into()],
            &[
                ("REGION".into(), Some("eu".into())),
                ("API_KEY".into(), None),
            ],
        )
        .unwrap();
        Job {
            look: LookId::new(&RunToken::parse("00112233445566ff").unwrap(), 7),
            candidate,
        }
    }

    fn result(found: Result<Surface, LookFailure>) -> LookResult {
        let look = Look {
            outcome: found,
            version: Some("1.2.3".into()),
            registry_digest: Some("sha512-abc".into()),
            transport: "stdio",
            env_wanted: vec!["API_KEY".into()],
            env_supplied: vec!["REGION".into()],
            env_placeholders: vec!["API_KEY".into()],
            arg_placeholders: vec!["$2".into(), "--token".into()],
            caps: Some(InForce {
                limits: Caps::default(),
                by: Enforcer::CgroupV2,
            }),
            install: Some(Install::Reinstalled(
                "the kept tree was installed 8 days ago".into(),
            )),
            notes: vec!["started as `python -m x`: the package has no console script".into()],
            python: None,
            took: Duration::from_millis(1234),
        };
        LookResult::of(
            LookId::parse("00112233445566ff-0").unwrap(),
            "npm:x".parse().unwrap(),
            look,
            Conditions {
                crawler: "pinlog/0.2.0".into(),
                asked: "2025-11-25".into(),
                sandbox: "bubblewrap".into(),
            },
        )
    }

    fn surface() -> Surface {
        let tools = json::parse(
            br#"[{"name":"echo","description":"Echoes.","inputSchema":{"type":"object"}}]"#,
            Limits::default(),
        )
        .unwrap()
        .into_owned();
        Surface {
            revision: Revision::R2025_06_18,
            server_info: None,
            instructions: Some("Be kind.".into()),
            tools: tools.as_array().unwrap().to_vec(),
            prompts: Vec::new(),
            passes: 2,
            complete: true,
        }
    }

    #[test]
    fn a_job_of_every_launch_reads_back_as_written() {
        for launch in [
            Launch::Npm {
                name: "@scope/server".into(),
                version: Some("1.0.0".into()),
            },
            Launch::Pypi {
                name: "mcp-server-time".into(),
                version: None,
            },
            Launch::Oci {
                image: "ghcr.io/example/image".into(),
                digest: format!("sha256:{}", "a".repeat(64)),
            },
            Launch::Remote {
                url: "https://mcp.example.com/mcp".into(),
                transport: Remote::Sse,
            },
        ] {
            let j = job(launch);
            let bytes = j.to_bytes();
            assert_eq!(Job::read(&bytes).unwrap(), j);
            // Written canonical: the strict reader's canonical form is the same bytes.
            let v = json::parse(&bytes, Limits::default()).unwrap();
            assert_eq!(json::to_canonical(&v).unwrap(), bytes);
        }
    }

    #[test]
    fn a_result_reads_back_as_written_and_gives_the_same_surface() {
        let r = result(Ok(surface()));
        let back = LookResult::read(&r.to_bytes()).unwrap();
        assert_eq!(back, r);
        let (look, conditions) = back.into_look();
        let s = look.outcome.unwrap();
        let blob = surface_blob::build(s.instructions.as_deref(), &s.prompts, &s.tools).unwrap();
        assert_eq!(blob.bytes(), r.found.as_ref().unwrap().blob.bytes());
        assert_eq!(conditions.sandbox, "bubblewrap");

        let mut f = LookFailure::new(Reason::Exited, "it stopped");
        f.exit_code = Some(3);
        let r = result(Err(f.clone()));
        let back = LookResult::read(&r.to_bytes()).unwrap();
        assert_eq!(back.found, Err(f));
    }

    #[test]
    fn a_surface_with_no_canonical_form_is_the_failure_the_single_process_records() {
        let mut s = surface();
        s.tools = json::parse(
            br#"[{"name":"a","default":9007199254740993}]"#,
            Limits::default(),
        )
        .unwrap()
        .into_owned()
        .as_array()
        .unwrap()
        .to_vec();
        let r = result(Ok(s));
        assert_eq!(r.found.as_ref().unwrap_err().reason, Reason::Undecidable);
        assert!(LookResult::read(&r.to_bytes()).is_ok());
    }

    #[test]
    fn a_message_that_breaks_a_rule_is_refused_by_name() {
        let good =
            String::from_utf8(result(Err(LookFailure::new(Reason::Timeout, "slow"))).to_bytes())
                .unwrap();
        let rule = |bytes: &[u8]| LookResult::read(bytes).unwrap_err().rule;
        assert_eq!(
            rule(
                good.replace("{\"arg_placeholders\"", "{ \"arg_placeholders\"")
                    .as_bytes()
            ),
            "not-canonical"
        );
        assert_eq!(rule(b"{\"caps\":"), "json");
        assert_eq!(rule(&vec![b' '; MAX_RESULT + 1]), "too-large");
        assert_eq!(
            rule(good.replace("\"timeout\"", "\"opt-out\"").as_bytes()),
            "reason"
        );
        assert_eq!(
            rule(
                good.replace(
                    "\"transport\":\"stdio\"",
                    "\"transport\":\"carrier-pigeon\""
                )
                .as_bytes()
            ),
            "transport"
        );
        assert_eq!(
            rule(
                good.replace("{\"arg_placeholders\":", "{\"a\":1,\"arg_placeholders\":")
                    .as_bytes()
            ),
            "shape"
        );
        assert_eq!(
            rule(good.replace("\"reinstalled: ", "\"repainted: ").as_bytes()),
            "install"
        );
        assert_eq!(
            rule(good.replace("\"$2\"", "\"$ 2\"").as_bytes()),
            "arg-placeholders"
        );
        assert_eq!(
            rule(good.replace("\"v\":\"1\"", "\"v\":\"2\"").as_bytes()),
            "version"
        );
        assert_eq!(
            rule(good.replace("\"API_KEY\"", "\"API KEY\"").as_bytes()),
            "env"
        );
        assert_eq!(
            rule(good.replace("00112233445566ff-0", "../x").as_bytes()),
            "look-id"
        );
        let job = String::from_utf8(
            job(Launch::Npm {
                name: "x".into(),
                version: None,
            })
            .to_bytes(),
        )
        .unwrap();
        // A placeholder past the arguments it names.
        assert_eq!(
            Job::read(job.replace("[\"--token\"]", "[\"$9\"]").as_bytes())
                .unwrap_err()
                .rule,
            "start"
        );
        assert_eq!(
            Job::read(
                job.replace("\"server\":\"npm:x\"", "\"server\":\"npm:y\"")
                    .as_bytes()
            )
            .unwrap_err()
            .rule,
            "server"
        );
        assert_eq!(
            Job::read(
                job.replace("\"name\":\"x\"", "\"name\":\"../x\"")
                    .as_bytes()
            )
            .unwrap_err()
            .rule,
            "launch"
        );
    }

    #[test]
    fn a_reference_reads_back_and_holds_its_object_to_its_length_and_digest() {
        let r = result(Ok(surface())).to_bytes();
        let look = LookId::parse("00112233445566ff-0").unwrap();
        let s = Stored::of(&look, &r);
        let bytes = s.to_bytes();
        assert_eq!(Reported::read(&bytes).unwrap(), Reported::Stored(s.clone()));
        let v = json::parse(&bytes, Limits::default()).unwrap();
        assert_eq!(json::to_canonical(&v).unwrap(), bytes);
        assert!(matches!(Reported::read(&r).unwrap(), Reported::Inline(_)));
        assert!(s.check(&r).is_ok());
        let mut other = r.clone();
        other[1] = b'X';
        assert_eq!(s.check(&other).unwrap_err().rule, "object-digest");
        assert_eq!(s.check(&r[1..]).unwrap_err().rule, "object-length");

        let text = String::from_utf8(bytes).unwrap();
        let rule = |t: String| Reported::read(t.as_bytes()).unwrap_err().rule;
        assert_eq!(
            rule(text.replace(
                "\"name\":\"00112233445566ff-0\"",
                "\"name\":\"00112233445566ff-1\""
            )),
            "object-name"
        );
        assert_eq!(
            rule(text.replace("PINLOG_LARGE_RESULTS", "OTHER")),
            "object-bucket"
        );
        assert_eq!(
            rule(text.replace(&format!("\"length\":{}", r.len()), "\"length\":4456449")),
            "too-large"
        );
        assert_eq!(rule(text.replace("sha256:", "sha512:")), "object-digest");
        assert_eq!(
            rule(text.replace("{\"bucket\"", "{\"a\":1,\"bucket\"")),
            "shape"
        );
    }

    #[test]
    fn look_ids_are_a_run_token_and_an_index() {
        assert!(LookId::parse("00112233445566ff-0").is_ok());
        assert!(LookId::parse("00112233445566ff-12345").is_ok());
        for bad in [
            "",
            "00112233445566ff",
            "00112233445566FF-1",
            "00112233445566ff-01",
            "00112233445566ff--1",
            "0011223344-1",
            "00112233445566ff-1x",
        ] {
            assert!(LookId::parse(bad).is_err(), "{bad}");
        }
    }
}
