//! The gate's commands as both binaries offer them (`lock`, `verify`, `key`, `sign`): their
//! arguments, the files they read and write, and what they print. Exit codes are a contract
//! (docs/GATE.md): 0 holds, 1 a departure proven, 2 the command line is wrong, 3 something could
//! not be compared, 4 an input could not be read (a bad or stale signature included).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, ValueEnum};
use pinlog_core::lockfile::{canonical_digest, Lockfile};
use pinlog_core::manifest::Manifest;
use pinlog_core::render;
use pinlog_log::files::{read_bounded, write_atomic};

use super::lock::{approve, Approval};
use super::report_text::render_findings;
use super::{
    inspect, report_json, report_sarif, report_text, Gate, Inputs, Report, SignatureState,
};
use crate::signature;

const EXIT_OK: u8 = 0;
const EXIT_USAGE: u8 = 2;
const EXIT_UNREADABLE: u8 = 4;

/// The largest manifest or lockfile read, in bytes.
const MAX_DOCUMENT: u64 = 64 << 20;

/// The long flags of each gate command that may be written with one dash, and whether each
/// takes a value.
pub fn flags_of(command: &str) -> Option<&'static [(&'static str, bool)]> {
    Some(match command {
        "lock" => &[
            ("-output", true),
            ("-ascii", false),
            ("-check", false),
            ("-npm-registry", true),
            ("-pypi-index", true),
        ],
        "verify" => &[
            ("-lock", true),
            ("-fail-on", true),
            ("-format", true),
            ("-output", true),
            ("-pubkey", true),
            ("-min-serial", true),
            ("-max-signature-age", true),
            ("-ascii", false),
        ],
        "key" => &[("-output", true)],
        "sign" => &[("-lock", true), ("-key", true)],
        _ => return None,
    })
}

/// `args` with each of `flags` written with one dash (`-lock`, `-lock=F`) rewritten to two. The
/// value after a flag that takes one is left alone, and so is everything after `--`.
pub fn one_dash(args: Vec<OsString>, flags: &[(&str, bool)]) -> Vec<OsString> {
    let mut out = Vec::with_capacity(args.len());
    let mut args = args.into_iter();
    while let Some(a) = args.next() {
        let Some(text) = a.to_str() else {
            out.push(a);
            continue;
        };
        if text == "--" {
            out.push(a);
            out.extend(args);
            break;
        }
        // `-o` is a short flag: it is never rewritten, and its value is left alone.
        if text == "-o" {
            out.push(a);
            out.extend(args.next());
            continue;
        }
        let name = text.split_once('=').map_or(text, |(n, _)| n);
        match flags.iter().find(|(f, _)| *f == name) {
            Some((_, takes_value)) => {
                out.push(format!("-{text}").into());
                if *takes_value && !text.contains('=') {
                    out.extend(args.next());
                }
            }
            // A two-dash spelling of a flag that takes a value: its value is left alone too.
            None => {
                let value_follows = text
                    .strip_prefix('-')
                    .is_some_and(|t| flags.iter().any(|(f, v)| *v && *f == t));
                out.push(a);
                if value_follows {
                    out.extend(args.next());
                }
            }
        }
    }
    out
}

/// A failure: the exit code and what to print after `error: `.
struct Stop(u8, String);

fn unreadable(message: impl Into<String>) -> Stop {
    Stop(EXIT_UNREADABLE, message.into())
}

fn finish(outcome: Result<u8, Stop>) -> u8 {
    match outcome {
        Ok(code) => code,
        Err(Stop(code, message)) => {
            eprintln!("error: {}", render::safe(&message));
            code
        }
    }
}

/// A path from the command line, for messages: rendered like any other text from outside.
fn shown(path: &Path) -> String {
    render::safe(&path.display().to_string()).into_owned()
}

fn read(path: &Path, what: &str) -> Result<Vec<u8>, Stop> {
    read_bounded(path, MAX_DOCUMENT).map_err(|e| {
        let hint = match (what, e.kind()) {
            ("lockfile", std::io::ErrorKind::NotFound) => {
                "; approve a manifest first with `pinlog lock -o LOCKFILE MANIFEST`"
            }
            ("manifest", std::io::ErrorKind::NotFound) => {
                "; capture one with `pinlog export -config mcp.json -o MANIFEST`"
            }
            _ => "",
        };
        unreadable(format!("cannot read the {what} {}: {e}{hint}", shown(path)))
    })
}

fn read_manifest<'b>(path: &Path, bytes: &'b [u8]) -> Result<Manifest<'b>, Stop> {
    Manifest::read(bytes).map_err(|e| {
        let swapped = if Lockfile::read(bytes).is_ok() {
            " (this is a lockfile: give it with -lock, and the manifest last)"
        } else {
            ""
        };
        unreadable(format!("the manifest {}: {e}{swapped}", shown(path)))
    })
}

fn read_lockfile<'b>(path: &Path, bytes: &'b [u8]) -> Result<Lockfile<'b>, Stop> {
    Lockfile::read(bytes).map_err(|e| {
        let swapped = if Manifest::read(bytes).is_ok() {
            " (this is a manifest: give the lockfile with -lock, and the manifest last)"
        } else {
            ""
        };
        unreadable(format!("the lockfile {}: {e}{swapped}", shown(path)))
    })
}

/// Writes a file others read (a lockfile, a signature, a report) whole or not at all, keeping
/// the mode of the file it replaces, or readable by all (0644) when it is new.
fn write_shared(path: &Path, bytes: &[u8]) -> Result<(), Stop> {
    let mode = std::fs::metadata(path).ok().map(|m| m.permissions());
    write_atomic(path, bytes)
        .map_err(|e| unreadable(format!("cannot write {}: {e}", shown(path))))?;
    #[cfg(unix)]
    let mode = mode.or_else(|| Some(std::os::unix::fs::PermissionsExt::from_mode(0o644)));
    if let Some(mode) = mode {
        std::fs::set_permissions(path, mode)
            .map_err(|e| unreadable(format!("cannot set the mode of {}: {e}", shown(path))))?;
    }
    Ok(())
}

fn signature_path(lock: &Path) -> PathBuf {
    let mut p = lock.as_os_str().to_owned();
    p.push(".sig");
    PathBuf::from(p)
}

#[derive(Args, Debug)]
pub struct LockArgs {
    /// The manifest to approve, as `pinlog export` writes it
    #[arg(value_name = "MANIFEST", required_unless_present = "check")]
    pub manifest: Option<PathBuf>,
    /// Write nothing: check that each registry still publishes, for each locked package
    /// version, the digest the lockfile (-o) pins. Exit 1 when one changed or is gone, 3 when
    /// one could not be checked; a newer version is only noted. Needs the network: `pinlog`
    /// only
    #[arg(long, conflicts_with = "manifest")]
    pub check: bool,
    /// With --check: the npm registry
    #[arg(long, value_name = "URL", default_value = "https://registry.npmjs.org")]
    pub npm_registry: String,
    /// With --check: the PyPI simple index (PEP 691 JSON)
    #[arg(long, value_name = "URL", default_value = "https://pypi.org/simple/")]
    pub pypi_index: String,
    /// The lockfile to write
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        default_value = "mcp.lock.json"
    )]
    pub output: PathBuf,
    /// Write every non-ASCII character of reported text as <U+XXXX>
    #[arg(long)]
    pub ascii: bool,
}

/// `lock`: approves the manifest as it stands.
pub fn lock(args: LockArgs) -> u8 {
    finish(run_lock(&args))
}

fn run_lock(args: &LockArgs) -> Result<u8, Stop> {
    let Some(manifest_path) = &args.manifest else {
        return Err(Stop(
            EXIT_USAGE,
            "lock --check reads registries over the network: run it with `pinlog`, which has \
             network code (pinlog-verify has none)"
                .into(),
        ));
    };
    let manifest_bytes = read(manifest_path, "manifest")?;
    let manifest = read_manifest(manifest_path, &manifest_bytes)?;
    let previous_bytes = match args.output.try_exists() {
        Ok(true) => Some(read(&args.output, "lockfile")?),
        Ok(false) => None,
        Err(e) => {
            return Err(unreadable(format!(
                "cannot look at {}: {e}",
                shown(&args.output)
            )))
        }
    };
    let previous = match &previous_bytes {
        Some(b) => Some(Lockfile::read(b).map_err(|e| {
            unreadable(format!(
                "the lockfile already at {} cannot be read ({e}); lock does not replace what it \
                 cannot read: restore it, or move it away and approve afresh",
                shown(&args.output)
            ))
        })?),
        None => None,
    };
    let inspections = inspect::inspect(&manifest);
    if !inspections.is_empty() {
        eprint!("{}", render_findings(&inspections, args.ascii));
        eprintln!(
            "warning: {} finding(s) above are approved with the rest; `pinlog verify -fail-on all` \
             gates on them",
            inspections.len()
        );
    }
    if !manifest.complete {
        eprintln!(
            "warning: the capture is not complete (a listing changed between readings, or was read \
             once): a tool it missed is not approved, and will show as added when it is served"
        );
    }
    let approval = approve(&manifest, previous.as_ref()).map_err(|e| unreadable(e.0))?;
    let written = match approval {
        Approval::Unchanged => {
            let serial = previous.as_ref().map_or(0, |p| p.approval_serial);
            println!(
                "{}: the approved surface did not move; the lockfile is left as it is (approval {serial})",
                shown(&args.output)
            );
            previous_bytes.unwrap_or_default()
        }
        Approval::Moved(lockfile) => {
            let bytes = lockfile.to_bytes();
            // What is written must read back: a lockfile that lock writes and verify refuses
            // would leave nothing to approve with.
            if let Err(e) = Lockfile::read(&bytes) {
                return Err(unreadable(format!(
                    "this surface cannot be pinned, so nothing was written ({e}); the previous \
                     lockfile, if any, is unchanged"
                )));
            }
            write_shared(&args.output, &bytes)?;
            let (tools, prompts, undecidable) = lockfile.servers.iter().fold((0, 0, 0), |n, s| {
                let prompts = s.prompts.as_deref().unwrap_or_default();
                let undecidable = s
                    .tools
                    .iter()
                    .chain(prompts)
                    .filter(|p| p.digest.is_err())
                    .count();
                (n.0 + s.tools.len(), n.1 + prompts.len(), n.2 + undecidable)
            });
            println!(
                "approved {} server(s), {tools} tool(s), {prompts} prompt(s) into {} (approval {})",
                lockfile.servers.len(),
                shown(&args.output),
                lockfile.approval_serial
            );
            if undecidable > 0 {
                eprintln!(
                    "warning: {undecidable} item(s) hold number literals no double identifies; \
                     verify can never report them as matching (exit 3)"
                );
            }
            bytes
        }
    };
    // A signature is somebody's statement: lock never removes one, and says when it no longer
    // covers the file.
    let sig = signature_path(&args.output);
    if sig.exists() {
        let covers = read_bounded(&sig, 64 << 10)
            .ok()
            .and_then(|b| signature::read_envelope(&b).ok())
            .zip(canonical_digest(&written).ok())
            .is_some_and(|(env, digest)| env.lock_digest == digest);
        if covers {
            println!(
                "{} names this lockfile (its signature is checked by verify -pubkey)",
                shown(&sig)
            );
        } else {
            eprintln!(
                "warning: {} does not sign this lockfile; it was left in place. Sign again with \
                 `pinlog sign -lock {} -key KEY`",
                shown(&sig),
                shown(&args.output)
            );
        }
    }
    Ok(EXIT_OK)
}

/// A report format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Sarif,
}

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The manifest of the surface served now, as `pinlog export` writes it
    #[arg(value_name = "MANIFEST")]
    pub manifest: PathBuf,
    /// The lockfile holding the approved surface
    #[arg(long = "lock", value_name = "FILE", default_value = "mcp.lock.json")]
    pub lock: PathBuf,
    /// The policies that fail the run: `all`, `none`, or a comma-separated list [default:
    /// tool-changed, tool-added, tool-removed, server-renamed, prompt-changed, prompt-added,
    /// prompt-removed, instructions-changed]
    #[arg(long = "fail-on", value_name = "POLICIES", value_parser = Gate::parse)]
    pub fail_on: Option<Gate>,
    /// The report's format
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the report to FILE (whole or not at all) instead of standard output
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// A public key (SPKI PEM) the lockfile's signature (LOCK.sig) must verify against; repeat
    /// for rotation. With it, a missing, foreign or bad signature exits 4
    #[arg(long = "pubkey", value_name = "FILE")]
    pub pubkey: Vec<PathBuf>,
    /// Refuse a lockfile whose approval_serial is below N (exit 4); a floor is only worth
    /// having under a signature, so this needs -pubkey
    #[arg(long = "min-serial", value_name = "N", requires = "pubkey")]
    pub min_serial: Option<u64>,
    /// Refuse a signature older than this, e.g. 720h or 30days (exit 4)
    #[arg(long = "max-signature-age", value_name = "DURATION", requires = "pubkey",
          value_parser = humantime::parse_duration)]
    pub max_signature_age: Option<Duration>,
    /// Write every non-ASCII character of reported text as <U+XXXX>
    #[arg(long)]
    pub ascii: bool,
}

/// `verify`: the served surface against the approved one. Returns the exit code.
pub fn verify(args: VerifyArgs) -> u8 {
    finish(run_verify(args))
}

fn run_verify(args: VerifyArgs) -> Result<u8, Stop> {
    let lock_bytes = read(&args.lock, "lockfile")?;
    let lock = read_lockfile(&args.lock, &lock_bytes)?;
    let manifest_bytes = read(&args.manifest, "manifest")?;
    let manifest = read_manifest(&args.manifest, &manifest_bytes)?;
    let signature = check_signature(&args, &lock_bytes)?;
    if let Some(floor) = args.min_serial {
        if lock.approval_serial < floor {
            return Err(unreadable(format!(
                "the lockfile {} is approval {}, below the floor {floor} given with -min-serial: \
                 an older approval may have been put back",
                shown(&args.lock),
                lock.approval_serial
            )));
        }
    }
    let lock_path = args.lock.display().to_string();
    let manifest_path = args.manifest.display().to_string();
    let inputs = Inputs {
        lock_path: &lock_path,
        manifest_path: &manifest_path,
    };
    let gate = args.fail_on.clone().unwrap_or_default();
    let report = Report::new(&manifest, &lock, gate, signature, inputs);
    let bytes = match args.format {
        Format::Text => report_text::render(&report, args.ascii).into_bytes(),
        Format::Json => report_json::render(&report),
        Format::Sarif => report_sarif::render(&report, &String::from_utf8_lossy(&lock_bytes)),
    };
    match &args.output {
        Some(path) => write_shared(path, &bytes)?,
        None => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes)
                .and_then(|()| out.flush())
                .map_err(|e| unreadable(format!("cannot write the report: {e}")))?;
        }
    }
    if args.output.is_some() && args.format != Format::Text {
        eprintln!(
            "{}: exit {}",
            report.status.as_str(),
            report.status.exit_code()
        );
    }
    Ok(report.status.exit_code())
}

/// The signature's state: checked against the pinned keys when there are any (every failure is
/// exit 4: the lockfile cannot be read as an approval), otherwise only noticed.
fn check_signature(args: &VerifyArgs, lock_bytes: &[u8]) -> Result<SignatureState, Stop> {
    let sig = signature_path(&args.lock);
    if args.pubkey.is_empty() {
        return Ok(if sig.exists() {
            SignatureState::Unchecked
        } else {
            SignatureState::Absent
        });
    }
    let mut trusted = Vec::new();
    for p in &args.pubkey {
        trusted.push(
            signature::read_public_key(p)
                .map_err(|e| unreadable(format!("-pubkey {}: {e}", shown(p))))?,
        );
    }
    let sig_bytes = match read_bounded(&sig, 64 << 10) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(unreadable(format!(
                "-pubkey was given and the lockfile has no signature at {}: sign it with `pinlog \
                 sign -lock {} -key KEY`",
                shown(&sig),
                shown(&args.lock)
            )))
        }
        Err(e) => return Err(unreadable(format!("cannot read {}: {e}", shown(&sig)))),
    };
    let envelope = signature::read_envelope(&sig_bytes)
        .map_err(|e| unreadable(format!("{}: {e}", shown(&sig))))?;
    let digest = canonical_digest(lock_bytes)
        .map_err(|e| unreadable(format!("the lockfile {}: {e}", shown(&args.lock))))?;
    signature::check(
        &envelope,
        &trusted,
        &digest,
        signature::now_unix(),
        args.max_signature_age,
    )
    .map_err(|e| unreadable(format!("{}: {e}", shown(&sig))))?;
    Ok(SignatureState::Verified {
        public_key_fingerprint: envelope.public_key_fingerprint,
        signed_at: envelope.signed_at.clone(),
    })
}

#[derive(Args, Debug)]
pub struct KeyArgs {
    /// Where to write the private key (PKCS#8 PEM, mode 0600); the public key goes to FILE.pub
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
}

/// `key`: a new Ed25519 key pair for signing lockfiles.
pub fn key(args: KeyArgs) -> u8 {
    finish((|| {
        let key = signature::generate().map_err(|e| unreadable(e.to_string()))?;
        signature::write_key_pair(&args.output, &key).map_err(|e| {
            let code = if e.rule == "key-exists" {
                EXIT_USAGE
            } else {
                EXIT_UNREADABLE
            };
            Stop(code, e.to_string())
        })?;
        println!(
            "wrote {} (private: keep it secret) and {}.pub (for verify -pubkey); key {}",
            shown(&args.output),
            shown(&args.output),
            key.public().fingerprint()
        );
        Ok(EXIT_OK)
    })())
}

#[derive(Args, Debug)]
pub struct SignArgs {
    /// The lockfile to sign; the signature goes to LOCK.sig
    #[arg(long = "lock", value_name = "FILE", default_value = "mcp.lock.json")]
    pub lock: PathBuf,
    /// The private key (PKCS#8 PEM, as `pinlog key` or `openssl genpkey -algorithm ed25519`
    /// writes it)
    #[arg(long = "key", value_name = "FILE")]
    pub key: PathBuf,
}

/// `sign`: signs a lockfile that reads, as it stands.
pub fn sign(args: SignArgs) -> u8 {
    finish((|| {
        let bytes = read(&args.lock, "lockfile")?;
        let lock = read_lockfile(&args.lock, &bytes)?;
        let digest = canonical_digest(&bytes)
            .map_err(|e| unreadable(format!("the lockfile {}: {e}", shown(&args.lock))))?;
        let key = signature::read_signing_key(&args.key)
            .map_err(|e| unreadable(format!("{}: {e}", shown(&args.key))))?;
        let sig = signature_path(&args.lock);
        let envelope = signature::sign(&key, &digest, signature::now_unix())
            .map_err(|e| unreadable(e.to_string()))?;
        write_shared(&sig, &envelope)?;
        println!(
            "signed {} (approval {}) with key {}; wrote {}",
            shown(&args.lock),
            lock.approval_serial,
            key.public().fingerprint(),
            shown(&sig)
        );
        Ok(EXIT_OK)
    })())
}
