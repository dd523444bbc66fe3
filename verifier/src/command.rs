//! The `verify-log` command as both binaries (`pinlog` and `pinlog-verify`) offer it: what it
//! checks with the options given, and the lines it prints.

use std::io::IsTerminal;
use std::path::PathBuf;

use indicatif::{ProgressBar, ProgressStyle};
use pinlog_core::exit::{Exit, Failure};
use pinlog_core::files::read_bounded;
use pinlog_core::render;
use pinlog_log::keyfile::pinned_keys;
use pinlog_log::note::VerifierKey;
use pinlog_log::witness_policy::{LogKey, WitnessPolicy};

use crate::checkpoint::Policy;
use crate::verify_log::{verify_log, Options};
use crate::verify_proof::verify_proof;

/// What `verify-log` checks, and against which keys.
#[derive(Debug, Default)]
pub struct VerifyLogOptions {
    /// The log directory; with `proof`, where the receipt's entry is checked too.
    pub dir: Option<PathBuf>,
    /// The log's public keys, as text.
    pub vkey: Vec<String>,
    /// Files holding the log's public keys, one per line.
    pub vkey_file: Vec<PathBuf>,
    /// Witnesses' cosignature keys, as text.
    pub witness: Vec<String>,
    /// How many witnesses must have cosigned; all of them for none.
    pub quorum: Option<usize>,
    /// A witness policy file (C2SP tlog-policy) whose quorum must be met.
    pub witness_policy: Option<PathBuf>,
    /// Where the last verified checkpoint is remembered.
    pub state: Option<PathBuf>,
    /// Check only the tlog-tiles layers.
    pub generic: bool,
    /// One receipt to check instead of the whole log.
    pub proof: Option<PathBuf>,
    /// No progress bar.
    pub quiet: bool,
}

/// Runs `verify-log`: prints `log OK: …` (or `proof OK: …`) and returns exit 0, prints `log BAD:
/// …` on standard output and returns exit 1 when the log is proven bad, and fails with exit 4
/// when an input could not be read (2 when the keys given are wrong).
pub fn verify_log_command(args: &VerifyLogOptions) -> Result<Exit, Failure> {
    let policy = policy(args)?;
    if let Some(proof) = &args.proof {
        let bytes = read_bounded(proof, pinlog_log::proof::MAX_RECEIPT as u64)
            .map_err(|e| Failure::unreadable(format!("cannot read {}: {e}", proof.display())))?;
        return match verify_proof(&bytes, &policy, args.dir.as_deref(), args.generic) {
            Ok(p) => {
                let c = &p.opened.checkpoint;
                let what = match &p.entry {
                    Some(e) => format!(" ({} {})", e.server, e.surface),
                    None => String::new(),
                };
                println!(
                    "proof OK: entry {}{what} is in {} at size {}, root {}",
                    p.index,
                    render::safe(&c.origin),
                    c.size,
                    c.root
                );
                Ok(Exit::Ok)
            }
            Err(e) => report(&e, "proof"),
        };
    }
    let Some(dir) = args.dir.as_deref() else {
        return Err(Failure::usage(
            "give the log directory, or a receipt with --proof",
        ));
    };
    let options = Options {
        policy,
        state: args.state.clone(),
        generic: args.generic,
    };
    let bar = if args.quiet || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} entries, {eta} left")
                .expect("a fixed template"),
        );
        bar
    };
    let outcome = verify_log(dir, &options, |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    match outcome {
        Ok(v) => {
            let c = &v.opened.checkpoint;
            println!(
                "log OK: {}, {} entries, root {}",
                render::safe(&c.origin),
                c.size,
                c.root
            );
            Ok(Exit::Ok)
        }
        Err(e) => report(&e, "log"),
    }
}

/// A failure: `<what> BAD: …` on standard output when it is proven, else the input that could not
/// be read.
fn report(e: &crate::VerifyError, what: &str) -> Result<Exit, Failure> {
    match e.exit() {
        Exit::Bad => {
            println!("{what} BAD: {}", render::safe(&e.to_string()));
            Ok(Exit::Bad)
        }
        exit => Err(Failure::new(exit, e.to_string())),
    }
}

/// The keys and the quorum the arguments pin.
fn policy(args: &VerifyLogOptions) -> Result<Policy, Failure> {
    let witness_policy = args
        .witness_policy
        .as_deref()
        .map(WitnessPolicy::load)
        .transpose()?;
    let mut log_keys: Vec<VerifierKey> = pinned_keys("--vkey", &args.vkey, &args.vkey_file)?
        .into_iter()
        .map(|p| p.key)
        .collect();
    if let Some(wp) = &witness_policy {
        if log_keys.is_empty() {
            // The policy file is pinned as a whole: its `log` vkeys name the log and its key.
            log_keys = wp
                .logs
                .iter()
                .filter_map(|l| match &l.key {
                    LogKey::Vkey(k) => Some(k.clone()),
                    LogKey::Bare(_) => None,
                })
                .collect();
        } else if !wp.logs.is_empty()
            && !log_keys.iter().any(|k| wp.logs.iter().any(|l| l.key.is(k)))
        {
            return Err(Failure::usage(
                "the witness policy's `log` lines name other keys than the log's given with \
                 --vkey or --vkey-file",
            ));
        }
    }
    if log_keys.is_empty() {
        return Err(Failure::usage(
            "give the log's public key with --vkey or --vkey-file, or a witness policy whose \
             `log` line holds it (docs/VERIFYING.md says where to get it)",
        ));
    }
    if let Some(k) = log_keys.iter().find(|k| k.is_cosignature()) {
        return Err(Failure::usage(format!(
            "{} is a witness cosignature key; give it with --witness",
            k.name()
        )));
    }
    let mut witnesses = Vec::new();
    for w in pinned_keys("--witness", &args.witness, &[])? {
        let key = w.key;
        if !key.is_cosignature() {
            return Err(Failure::usage(format!(
                "--witness {}: not a tlog-cosignature/v1 key (its key type is not 0x04)",
                render::safe(key.name())
            )));
        }
        witnesses.push(key);
    }
    let quorum = args.quorum.unwrap_or(witnesses.len());
    if quorum > witnesses.len() {
        return Err(Failure::usage(format!(
            "--quorum {quorum} asks for more witnesses than the {} given",
            witnesses.len()
        )));
    }
    Ok(Policy {
        log_keys,
        witnesses,
        quorum,
        witness_policy,
    })
}
