//! The clap definitions of the gate's commands, shared by the two binaries that offer them
//! (`pinlog` and `pinlog-verify`): their arguments, and the one-dash spellings other pinning tools
//! use. Built only with the `cli` feature; the commands themselves are in [`crate::commands`].

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::commands::{Format, LockOptions, VerifyOptions};
use crate::Gate;

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

impl LockArgs {
    /// The options of `lock` without `--check`; `None` when `--check` was given.
    pub fn options(&self) -> Option<LockOptions> {
        Some(LockOptions {
            manifest: self.manifest.clone()?,
            output: self.output.clone(),
            ascii: self.ascii,
        })
    }
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
    /// prompt-removed, instructions-changed, package-changed]
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

impl VerifyArgs {
    pub fn options(&self) -> VerifyOptions {
        VerifyOptions {
            manifest: self.manifest.clone(),
            lock: self.lock.clone(),
            fail_on: self.fail_on.clone().unwrap_or_default(),
            format: self.format,
            output: self.output.clone(),
            pubkey: self.pubkey.clone(),
            min_serial: self.min_serial,
            max_signature_age: self.max_signature_age,
            ascii: self.ascii,
        }
    }
}

#[derive(Args, Debug)]
pub struct KeyArgs {
    /// Where to write the private key (PKCS#8 PEM, mode 0600); the public key goes to FILE.pub
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
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
