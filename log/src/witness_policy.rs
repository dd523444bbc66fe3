//! Which witnesses must cosign a checkpoint: the policy file of C2SP tlog-policy, the format
//! Sigsum and Tessera read (docs/WITNESSING.md).
//!
//! ```text
//! log <vkey or hex key> [<url>]
//! witness <name> <vkey or hex key> [<url>]
//! group <name> all|any|<k> <member>...
//! quorum <name>|none
//! ```
//!
//! A witness key is a C2SP vkey of type 0x04 (the form witnesses print) or Sigsum's 64 hex digits
//! of the Ed25519 public key; a log key is a vkey of type 0x01 or the same hex form. Names are
//! defined before they are used, each once; a witness or group is a member of one group at most;
//! exactly one `quorum` line. Anything else is refused with its line and the rule it breaks.

use std::fmt;
use std::path::Path;

use pinlog_core::exit::Failure;

use crate::cosignature::Cosigner;
use crate::note::{VerifierKey, ALG_COSIGNATURE_V1, ALG_ED25519};

/// The largest policy file read.
pub const MAX_POLICY: usize = 64 << 10;
/// The most witnesses, groups or logs a policy may name, each (C2SP asks for at least 32).
const MAX_NAMES: usize = 256;

/// A policy as read: the logs it is for, the witnesses with their keys and addresses, and the
/// quorum their cosignatures must meet.
#[derive(Debug, Clone, Default)]
pub struct WitnessPolicy {
    pub logs: Vec<PolicyLog>,
    pub witnesses: Vec<PolicyWitness>,
    groups: Vec<Group>,
    quorum: Option<Member>,
}

/// A `log` line: the log's public key, and where it is served if given.
#[derive(Debug, Clone)]
pub struct PolicyLog {
    pub key: LogKey,
    pub url: Option<String>,
}

/// A log's key as a policy writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogKey {
    /// A vkey: its name is the log's origin.
    Vkey(VerifierKey),
    /// Sigsum's bare Ed25519 public key.
    Bare([u8; 32]),
}

impl LogKey {
    /// True when this is the key of `log`, a log's vkey.
    pub fn is(&self, log: &VerifierKey) -> bool {
        match self {
            LogKey::Vkey(k) => k == log,
            LogKey::Bare(public) => log.public() == public,
        }
    }
}

/// A `witness` line.
#[derive(Debug, Clone)]
pub struct PolicyWitness {
    /// The name the policy gives it (for a vkey, usually the vkey's own name).
    pub name: String,
    pub key: Cosigner,
    /// The witness's tlog-witness submission prefix, if given.
    pub url: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Member {
    Witness(usize),
    Group(usize),
}

#[derive(Debug, Clone)]
struct Group {
    name: String,
    threshold: usize,
    members: Vec<Member>,
}

/// Why a policy file was refused: the line (from 1; 0 for the file as a whole), a stable rule
/// name, and what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    pub line: usize,
    pub rule: &'static str,
    pub detail: String,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.rule, self.detail)
        } else {
            write!(f, "line {}: {}: {}", self.line, self.rule, self.detail)
        }
    }
}

impl std::error::Error for PolicyError {}

impl WitnessPolicy {
    /// Reads the policy file at `path`; a file that cannot be read or breaks a rule is exit 4.
    pub fn load(path: &Path) -> Result<WitnessPolicy, Failure> {
        let bytes = pinlog_core::files::read_bounded(path, MAX_POLICY as u64).map_err(|e| {
            Failure::unreadable(format!(
                "cannot read the witness policy {}: {e}",
                path.display()
            ))
        })?;
        WitnessPolicy::parse(&bytes)
            .map_err(|e| Failure::unreadable(format!("the witness policy {}: {e}", path.display())))
    }

    /// Reads a policy file.
    pub fn parse(bytes: &[u8]) -> Result<WitnessPolicy, PolicyError> {
        let whole = |rule, detail: String| PolicyError {
            line: 0,
            rule,
            detail,
        };
        if bytes.len() > MAX_POLICY {
            return Err(whole(
                "policy-too-large",
                format!("the file is over {} KiB", MAX_POLICY >> 10),
            ));
        }
        let text = std::str::from_utf8(bytes)
            .map_err(|e| whole("policy-not-utf8", format!("the file is not UTF-8 ({e})")))?;
        let mut reader = Reader::default();
        for (n, line) in text.split('\n').enumerate() {
            reader.line = n + 1;
            reader.read(line)?;
        }
        let Reader {
            policy, quorum_set, ..
        } = reader;
        if !quorum_set {
            return Err(whole(
                "policy-no-quorum",
                "the policy has no `quorum` line (write `quorum none` for none)".into(),
            ));
        }
        Ok(policy)
    }

    /// True when no cosignature is required (`quorum none`).
    pub fn needs_none(&self) -> bool {
        self.quorum.is_none()
    }

    /// Whether the witnesses marked in `cosigned` (by their place in [`Self::witnesses`]) meet
    /// the quorum.
    pub fn is_met(&self, cosigned: &[bool]) -> bool {
        self.quorum.is_none_or(|q| self.holds(q, cosigned))
    }

    fn holds(&self, m: Member, cosigned: &[bool]) -> bool {
        match m {
            Member::Witness(i) => cosigned.get(i).copied().unwrap_or(false),
            Member::Group(g) => {
                let group = &self.groups[g];
                let met = group
                    .members
                    .iter()
                    .filter(|&&m| self.holds(m, cosigned))
                    .count();
                met >= group.threshold
            }
        }
    }

    /// The quorum in words, e.g. `2 of (a, b, any of (c, d))`.
    pub fn describe(&self) -> String {
        match self.quorum {
            None => "none".into(),
            Some(q) => self.describe_member(q),
        }
    }

    fn describe_member(&self, m: Member) -> String {
        match m {
            Member::Witness(i) => self.witnesses[i].name.clone(),
            Member::Group(g) => {
                let group = &self.groups[g];
                let members: Vec<String> = group
                    .members
                    .iter()
                    .map(|&m| self.describe_member(m))
                    .collect();
                format!("{} of ({})", group.threshold, members.join(", "))
            }
        }
    }
}

#[derive(Default)]
struct Reader {
    policy: WitnessPolicy,
    line: usize,
    quorum_set: bool,
    /// Members already placed in a group.
    used: Vec<Member>,
}

impl Reader {
    fn err(&self, rule: &'static str, detail: impl Into<String>) -> PolicyError {
        PolicyError {
            line: self.line,
            rule,
            detail: detail.into(),
        }
    }

    fn read(&mut self, line: &str) -> Result<(), PolicyError> {
        if let Some(c) = line
            .chars()
            .find(|&c| (c < ' ' && c != '\t') || c == '\u{7f}')
        {
            return Err(self.err(
                "policy-control-character",
                format!("the line holds the control character U+{:04X}", c as u32),
            ));
        }
        let fields: Vec<&str> = line.split([' ', '\t']).filter(|f| !f.is_empty()).collect();
        let Some((&keyword, args)) = fields.split_first() else {
            return Ok(());
        };
        if keyword.starts_with('#') {
            return Ok(());
        }
        match keyword {
            "log" => self.log(args),
            "witness" => self.witness(args),
            "group" => self.group(args),
            "quorum" => self.quorum(args),
            other => Err(self.err(
                "policy-unknown-line",
                format!(
                    "{:?} is not one of log, witness, group, quorum",
                    pinlog_core::render::safe(other)
                ),
            )),
        }
    }

    fn count_check(&self, n: usize, what: &str) -> Result<(), PolicyError> {
        if n >= MAX_NAMES {
            return Err(self.err("policy-too-many", format!("more than {MAX_NAMES} {what}")));
        }
        Ok(())
    }

    fn log(&mut self, args: &[&str]) -> Result<(), PolicyError> {
        let (key, url) = match args {
            [key] => (key, None),
            [key, url] => (key, Some(self.url(url)?)),
            _ => {
                return Err(self.err("policy-log-line", "write `log <key> [<url>]`"));
            }
        };
        self.count_check(self.policy.logs.len(), "logs")?;
        let key = match bare_key(key) {
            Some(public) => LogKey::Bare(public),
            None => {
                let k = VerifierKey::parse(key)
                    .map_err(|e| self.err("policy-bad-key", e.to_string()))?;
                if k.alg() != ALG_ED25519 {
                    return Err(self.err(
                        "policy-bad-key",
                        "a log's vkey is an Ed25519 note key (type 0x01)",
                    ));
                }
                LogKey::Vkey(k)
            }
        };
        if self.policy.logs.iter().any(|l| same_log_key(&l.key, &key)) {
            return Err(self.err("policy-duplicate-key", "this log's key is given twice"));
        }
        self.policy.logs.push(PolicyLog { key, url });
        Ok(())
    }

    fn witness(&mut self, args: &[&str]) -> Result<(), PolicyError> {
        let (name, key, url) = match args {
            [name, key] => (name, key, None),
            [name, key, url] => (name, key, Some(self.url(url)?)),
            _ => {
                return Err(self.err(
                    "policy-witness-line",
                    "write `witness <name> <key> [<url>]`",
                ));
            }
        };
        self.new_name(name)?;
        self.count_check(self.policy.witnesses.len(), "witnesses")?;
        let key = match bare_key(key) {
            Some(public) => {
                Cosigner::bare(public).map_err(|e| self.err("policy-bad-key", e.to_string()))?
            }
            None => {
                let k = VerifierKey::parse(key)
                    .map_err(|e| self.err("policy-bad-key", e.to_string()))?;
                if k.alg() != ALG_COSIGNATURE_V1 {
                    return Err(self.err(
                        "policy-bad-key",
                        "a witness's vkey is a cosignature/v1 key (type 0x04)",
                    ));
                }
                Cosigner::Vkey(k)
            }
        };
        if self
            .policy
            .witnesses
            .iter()
            .any(|w| w.key.public() == key.public())
        {
            return Err(self.err(
                "policy-duplicate-key",
                format!("the key of witness {name:?} is also another witness's"),
            ));
        }
        self.policy.witnesses.push(PolicyWitness {
            name: name.to_string(),
            key,
            url,
        });
        Ok(())
    }

    fn group(&mut self, args: &[&str]) -> Result<(), PolicyError> {
        let [name, threshold, members @ ..] = args else {
            return Err(self.err(
                "policy-group-line",
                "write `group <name> all|any|<k> <member>...`",
            ));
        };
        if members.is_empty() {
            return Err(self.err("policy-group-line", "a group has at least one member"));
        }
        self.new_name(name)?;
        self.count_check(self.policy.groups.len(), "groups")?;
        let mut resolved = Vec::with_capacity(members.len());
        for m in members {
            let member = self.lookup(m)?;
            if self.used.contains(&member) || resolved.contains(&member) {
                return Err(self.err(
                    "policy-member-twice",
                    format!("{m:?} is already a member of a group"),
                ));
            }
            resolved.push(member);
        }
        let n = resolved.len();
        let threshold = match *threshold {
            "all" => n,
            "any" => 1,
            text => match text.parse::<usize>() {
                Ok(k) if (1..=n).contains(&k) && !text.starts_with('0') => k,
                _ => {
                    return Err(self.err(
                        "policy-group-threshold",
                        format!(
                            "the threshold {:?} is not all, any or a number from 1 to {n}",
                            pinlog_core::render::safe(text)
                        ),
                    ))
                }
            },
        };
        self.used.extend(&resolved);
        self.policy.groups.push(Group {
            name: name.to_string(),
            threshold,
            members: resolved,
        });
        Ok(())
    }

    fn quorum(&mut self, args: &[&str]) -> Result<(), PolicyError> {
        let [name] = args else {
            return Err(self.err("policy-quorum-line", "write `quorum <name>|none`"));
        };
        if self.quorum_set {
            return Err(self.err("policy-quorum-twice", "a policy has one `quorum` line"));
        }
        self.policy.quorum = match *name {
            "none" => None,
            name => Some(self.lookup(name)?),
        };
        self.quorum_set = true;
        Ok(())
    }

    fn lookup(&self, name: &str) -> Result<Member, PolicyError> {
        if let Some(i) = self.policy.witnesses.iter().position(|w| w.name == name) {
            return Ok(Member::Witness(i));
        }
        if let Some(g) = self.policy.groups.iter().position(|g| g.name == name) {
            return Ok(Member::Group(g));
        }
        Err(self.err(
            "policy-undefined-name",
            format!(
                "{:?} is not a witness or group defined on an earlier line",
                pinlog_core::render::safe(name)
            ),
        ))
    }

    fn new_name(&self, name: &str) -> Result<(), PolicyError> {
        if name == "none" {
            return Err(self.err("policy-reserved-name", "`none` is not a name to define"));
        }
        if self.lookup(name).is_ok() {
            return Err(self.err(
                "policy-duplicate-name",
                format!("{:?} is defined twice", pinlog_core::render::safe(name)),
            ));
        }
        Ok(())
    }

    /// A witness's or log's address: `http` or `https`, nothing a shell or a terminal reads.
    fn url(&self, url: &str) -> Result<String, PolicyError> {
        let rest = url
            .strip_prefix("https://")
            .or_else(|| url.strip_prefix("http://"));
        match rest {
            Some(r) if !r.is_empty() && url.is_ascii() => Ok(url.trim_end_matches('/').to_string()),
            _ => Err(self.err(
                "policy-bad-url",
                format!(
                    "{:?} is not an http:// or https:// address",
                    pinlog_core::render::safe(url)
                ),
            )),
        }
    }
}

fn same_log_key(a: &LogKey, b: &LogKey) -> bool {
    let public = |k: &LogKey| match k {
        LogKey::Vkey(v) => *v.public(),
        LogKey::Bare(p) => *p,
    };
    public(a) == public(b)
}

/// Sigsum's key form: 64 hex digits of an Ed25519 public key, either case.
fn bare_key(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in text.as_bytes().chunks(2).enumerate() {
        let s = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(s, 16).ok()?;
    }
    Some(out)
}
