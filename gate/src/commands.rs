//! The gate's commands as both binaries offer them (`lock`, `verify`, `key`, `sign`): the files
//! they read and write, and what they print. Exit codes are a contract (docs/GATE.md): 0 holds,
//! 1 a departure proven, 2 the command line is wrong, 3 something could not be compared, 4 an
//! input could not be read (a bad or stale signature included).

use std::path::{Path, PathBuf};
use std::time::Duration;

use pinlog_core::exit::{Exit, Failure};
use pinlog_core::files::{read_bounded, write_atomic};
use pinlog_core::lockfile::{canonical_digest, Lockfile};
use pinlog_core::manifest::Manifest;
use pinlog_core::render;

use crate::lock::{approve, Approval};
use crate::report_text::render_findings;
use crate::signature;
use crate::{
    inspect, report_json, report_sarif, report_text, Gate, Inputs, Report, SignatureState,
};

/// The largest manifest or lockfile read, in bytes.
const MAX_DOCUMENT: u64 = 64 << 20;

/// `lock`: approve a manifest as it stands.
pub struct LockOptions {
    /// The manifest to approve.
    pub manifest: PathBuf,
    /// The lockfile to write.
    pub output: PathBuf,
    /// Write every non-ASCII character of reported text as <U+XXXX>.
    pub ascii: bool,
}

/// `verify`: a manifest against a lockfile.
pub struct VerifyOptions {
    pub manifest: PathBuf,
    pub lock: PathBuf,
    /// The policies that fail the run.
    pub fail_on: Gate,
    pub format: Format,
    /// Where the report goes; standard output for none.
    pub output: Option<PathBuf>,
    /// Public keys the lockfile's signature must verify against; none: the signature is only
    /// noticed.
    pub pubkey: Vec<PathBuf>,
    pub min_serial: Option<u64>,
    pub max_signature_age: Option<Duration>,
    pub ascii: bool,
}

/// A path from the command line, for messages: rendered like any other text from outside.
fn shown(path: &Path) -> String {
    render::safe(&path.display().to_string()).into_owned()
}

fn read(path: &Path, what: &str) -> Result<Vec<u8>, Failure> {
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
        Failure::unreadable(format!("cannot read the {what} {}: {e}{hint}", shown(path)))
    })
}

fn read_manifest<'b>(path: &Path, bytes: &'b [u8]) -> Result<Manifest<'b>, Failure> {
    Manifest::read(bytes).map_err(|e| {
        let swapped = if Lockfile::read(bytes).is_ok() {
            " (this is a lockfile: give it with -lock, and the manifest last)"
        } else {
            ""
        };
        Failure::unreadable(format!("the manifest {}: {e}{swapped}", shown(path)))
    })
}

fn read_lockfile<'b>(path: &Path, bytes: &'b [u8]) -> Result<Lockfile<'b>, Failure> {
    Lockfile::read(bytes).map_err(|e| {
        let swapped = if Manifest::read(bytes).is_ok() {
            " (this is a manifest: give the lockfile with -lock, and the manifest last)"
        } else {
            ""
        };
        Failure::unreadable(format!("the lockfile {}: {e}{swapped}", shown(path)))
    })
}

/// Writes a file others read (a lockfile, a signature, a report) whole or not at all, keeping
/// the mode of the file it replaces, or readable by all (0644) when it is new.
fn write_shared(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let mode = std::fs::metadata(path).ok().map(|m| m.permissions());
    write_atomic(path, bytes)
        .map_err(|e| Failure::unreadable(format!("cannot write {}: {e}", shown(path))))?;
    #[cfg(unix)]
    let mode = mode.or_else(|| Some(std::os::unix::fs::PermissionsExt::from_mode(0o644)));
    if let Some(mode) = mode {
        std::fs::set_permissions(path, mode).map_err(|e| {
            Failure::unreadable(format!("cannot set the mode of {}: {e}", shown(path)))
        })?;
    }
    Ok(())
}

fn signature_path(lock: &Path) -> PathBuf {
    let mut p = lock.as_os_str().to_owned();
    p.push(".sig");
    PathBuf::from(p)
}

/// `lock`: approves the manifest as it stands.
pub fn lock(args: &LockOptions) -> Result<Exit, Failure> {
    let manifest_path = &args.manifest;
    let manifest_bytes = read(manifest_path, "manifest")?;
    let manifest = read_manifest(manifest_path, &manifest_bytes)?;
    let previous_bytes = match args.output.try_exists() {
        Ok(true) => Some(read(&args.output, "lockfile")?),
        Ok(false) => None,
        Err(e) => {
            return Err(Failure::unreadable(format!(
                "cannot look at {}: {e}",
                shown(&args.output)
            )))
        }
    };
    let previous = match &previous_bytes {
        Some(b) => Some(Lockfile::read(b).map_err(|e| {
            Failure::unreadable(format!(
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
    let approval = approve(&manifest, previous.as_ref()).map_err(|e| Failure::unreadable(e.0))?;
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
                return Err(Failure::unreadable(format!(
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
    Ok(Exit::Ok)
}

/// A report format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Format {
    Text,
    Json,
    Sarif,
}

/// What a caller adds to `verify`'s report from the manifest the gate read: `text` after the text
/// report, `json` as members at the end of the JSON report (a name and its value, already JSON).
/// The SARIF report takes neither. None of it changes the verdict.
#[derive(Debug, Default)]
pub struct Addendum {
    pub text: String,
    pub json: Vec<(&'static str, Vec<u8>)>,
}

/// `verify`: the served surface against the approved one. Returns the exit code of the verdict.
pub fn verify(args: &VerifyOptions) -> Result<Exit, Failure> {
    verify_with(args, |_| Addendum::default())
}

/// `verify`, with what `addendum` says of the manifest added to the report.
pub fn verify_with(
    args: &VerifyOptions,
    addendum: impl FnOnce(&Manifest<'_>) -> Addendum,
) -> Result<Exit, Failure> {
    let lock_bytes = read(&args.lock, "lockfile")?;
    let lock = read_lockfile(&args.lock, &lock_bytes)?;
    let manifest_bytes = read(&args.manifest, "manifest")?;
    let manifest = read_manifest(&args.manifest, &manifest_bytes)?;
    let signature = check_signature(args, &lock_bytes)?;
    if let Some(floor) = args.min_serial {
        if lock.approval_serial < floor {
            return Err(Failure::unreadable(format!(
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
    let gate = args.fail_on.clone();
    let report = Report::new(&manifest, &lock, gate, signature, inputs);
    let added = addendum(&manifest);
    let bytes = match args.format {
        Format::Text => {
            let mut text = report_text::render(&report, args.ascii);
            text.push_str(&added.text);
            text.into_bytes()
        }
        Format::Json => report_json::render_with(&report, &added.json),
        Format::Sarif => report_sarif::render(&report, &String::from_utf8_lossy(&lock_bytes)),
    };
    match &args.output {
        Some(path) => write_shared(path, &bytes)?,
        None => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes)
                .and_then(|()| out.flush())
                .map_err(|e| Failure::unreadable(format!("cannot write the report: {e}")))?;
        }
    }
    if args.output.is_some() && args.format != Format::Text {
        eprintln!(
            "{}: exit {}",
            report.status.as_str(),
            report.status.exit_code()
        );
    }
    Ok(report.status.exit())
}

/// The signature's state: checked against the pinned keys when there are any (every failure is
/// exit 4: the lockfile cannot be read as an approval), otherwise only noticed.
fn check_signature(args: &VerifyOptions, lock_bytes: &[u8]) -> Result<SignatureState, Failure> {
    if args.pubkey.is_empty() {
        return Ok(if signature_path(&args.lock).exists() {
            SignatureState::Unchecked
        } else {
            SignatureState::Absent
        });
    }
    let mut trusted = Vec::new();
    for p in &args.pubkey {
        trusted.push(
            signature::read_public_key(p)
                .map_err(|e| Failure::unreadable(format!("-pubkey {}: {e}", shown(p))))?,
        );
    }
    let envelope = check_lock_signature(&args.lock, lock_bytes, &trusted, args.max_signature_age)?;
    Ok(SignatureState::Verified {
        public_key_fingerprint: envelope.public_key_fingerprint,
        signed_at: envelope.signed_at.clone(),
    })
}

/// The signature beside the lockfile `lock` (`LOCK.sig`), checked against `trusted` (and, with
/// `max_age`, its age): the envelope when it holds. Every failure is exit 4, as the lockfile
/// cannot be read as an approval; `lock_bytes` are the lockfile as read.
pub fn check_lock_signature(
    lock: &Path,
    lock_bytes: &[u8],
    trusted: &[signature::PublicKey],
    max_age: Option<Duration>,
) -> Result<signature::Envelope, Failure> {
    let sig = signature_path(lock);
    let sig_bytes = match read_bounded(&sig, 64 << 10) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Failure::unreadable(format!(
                "the lockfile has no signature at {}: sign it with `pinlog sign -lock {} -key KEY`",
                shown(&sig),
                shown(lock)
            )))
        }
        Err(e) => {
            return Err(Failure::unreadable(format!(
                "cannot read {}: {e}",
                shown(&sig)
            )))
        }
    };
    let envelope = signature::read_envelope(&sig_bytes)
        .map_err(|e| Failure::unreadable(format!("{}: {e}", shown(&sig))))?;
    let digest = canonical_digest(lock_bytes)
        .map_err(|e| Failure::unreadable(format!("the lockfile {}: {e}", shown(lock))))?;
    signature::check(&envelope, trusted, &digest, signature::now_unix(), max_age)
        .map_err(|e| Failure::unreadable(format!("{}: {e}", shown(&sig))))?;
    Ok(envelope)
}

/// `key`: a new Ed25519 key pair for signing lockfiles.
pub fn key(output: &Path) -> Result<Exit, Failure> {
    let key = signature::generate().map_err(|e| Failure::unreadable(e.to_string()))?;
    signature::write_key_pair(output, &key).map_err(|e| {
        let exit = if e.rule == "key-exists" {
            Exit::Usage
        } else {
            Exit::Unreadable
        };
        Failure::new(exit, e.to_string())
    })?;
    println!(
        "wrote {} (private: keep it secret) and {}.pub (for verify -pubkey); key {}",
        shown(output),
        shown(output),
        key.public().fingerprint()
    );
    Ok(Exit::Ok)
}

/// `sign`: signs a lockfile that reads, as it stands.
pub fn sign(lock_path: &Path, key_path: &Path) -> Result<Exit, Failure> {
    let bytes = read(lock_path, "lockfile")?;
    let lock = read_lockfile(lock_path, &bytes)?;
    let digest = canonical_digest(&bytes)
        .map_err(|e| Failure::unreadable(format!("the lockfile {}: {e}", shown(lock_path))))?;
    let key = signature::read_signing_key(key_path)
        .map_err(|e| Failure::unreadable(format!("{}: {e}", shown(key_path))))?;
    let sig = signature_path(lock_path);
    let envelope = signature::sign(&key, &digest, signature::now_unix())
        .map_err(|e| Failure::unreadable(e.to_string()))?;
    write_shared(&sig, &envelope)?;
    println!(
        "signed {} (approval {}) with key {}; wrote {}",
        shown(lock_path),
        lock.approval_serial,
        key.public().fingerprint(),
        shown(&sig)
    );
    Ok(Exit::Ok)
}
