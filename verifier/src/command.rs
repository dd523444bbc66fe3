//! The `verify-log` command as both binaries (`pinlog` and `pinlog-verify`) offer it: what it
//! checks with the options given, and the lines it prints.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use pinlog_core::exit::{Exit, Failure};
use pinlog_core::files::read_bounded;
use pinlog_core::render;
use pinlog_log::fetch::{is_url, FetchOptions, Served};
use pinlog_log::keyfile::pinned_keys;
use pinlog_log::note::VerifierKey;
use pinlog_log::witness_policy::{LogKey, WitnessPolicy};

use crate::checkpoint::Policy;
use crate::mirror::{mirror, INCOMING};
use crate::outcome::Severity;
use crate::verify_log::{verify_log, verify_source, Options, State, Verified};
use crate::verify_proof::verify_proof;
use crate::VerifyError;

/// What `verify-log` checks, and against which keys.
#[derive(Debug)]
pub struct VerifyLogOptions {
    /// The log: a directory, or the http(s) URL serving one; with `proof`, a directory where the
    /// receipt's entry is checked too.
    pub log: Option<String>,
    /// For a URL: where fetched files are kept between runs.
    pub cache: Option<PathBuf>,
    /// For a URL: the deadline of one request.
    pub timeout: Duration,
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
        if args.log.as_deref().is_some_and(is_url) {
            return Err(Failure::usage(
                "--proof checks a receipt against a log directory, not a URL: leave the log out \
                 to check the receipt alone, or give a copy (`pinlog log mirror URL DIR`)",
            ));
        }
        let dir = args.log.as_deref().map(Path::new);
        return match verify_proof(&bytes, &policy, dir, args.generic) {
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
    let Some(log) = args.log.as_deref() else {
        return Err(Failure::usage(
            "give the log directory or URL, or a receipt with --proof",
        ));
    };
    let options = Options {
        policy,
        state: args.state.as_deref().map(State::at),
        generic: args.generic,
    };
    let bar = progress_bar(args.quiet);
    let progress = |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let outcome = if is_url(log) {
        let fetch = FetchOptions {
            timeout: args.timeout,
            ..FetchOptions::default()
        };
        let mut served = Served::new(log, fetch).map_err(Failure::usage)?;
        if let Some(cache) = &args.cache {
            served = served.with_cache(cache);
        }
        verify_served(&served, &options, progress)
    } else {
        if args.cache.is_some() {
            return Err(Failure::usage(
                "--cache keeps the files of a log fetched from a URL; a directory is read in place",
            ));
        }
        verify_log(Path::new(log), &options, progress)
    };
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
            if v.checked_from > 0 && !args.quiet {
                let (from, size) = (v.checked_from, c.size);
                if from == size {
                    eprintln!("no entry was added since the checkpoint verified before (--state)");
                } else {
                    eprintln!(
                        "read the {} entries added since the checkpoint verified before \
                         (--state); the first {from} were not read again",
                        size - from
                    );
                }
            }
            Ok(Exit::Ok)
        }
        Err(e) => report(&e, "log"),
    }
}

/// Runs `log mirror`: brings the copy in `dir` up to the log served at `url`, verified against the
/// keys and witness policy in `args` (its `log`, `state`, `cache` and `proof` are not used).
/// Prints `mirror OK: …` and returns exit 0; exit 1 with `mirror BAD: …` when the served log is
/// proven bad; exit 4 when it could not be fetched. The copy is left as it was on failure.
pub fn mirror_command(url: &str, dir: &Path, args: &VerifyLogOptions) -> Result<Exit, Failure> {
    let policy = policy(args)?;
    let fetch = FetchOptions {
        timeout: args.timeout,
        ..FetchOptions::default()
    };
    let served = Served::new(url, fetch)
        .map_err(Failure::usage)?
        .with_copy(dir)
        .with_cache(&dir.join(INCOMING));
    let bar = progress_bar(args.quiet);
    let outcome = mirror(&served, dir, policy, args.generic, |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    match outcome {
        Ok(m) => {
            let c = &m.verified.opened.checkpoint;
            let (requests, bytes) = served.fetched();
            println!(
                "mirror OK: {}, {} entries, root {}; {} files added ({requests} requests, {bytes} \
                 bytes fetched)",
                render::safe(&c.origin),
                c.size,
                c.root,
                m.added
            );
            Ok(Exit::Ok)
        }
        Err(e) => report(&e, "mirror"),
    }
}

/// Verifies a served log. A log proven bad over files the cache held is looked at once more
/// with every file fetched again: a cache damaged on disk must not make a good log fail.
pub fn verify_served(
    served: &Served,
    options: &Options,
    mut progress: impl FnMut(u64, u64),
) -> Result<Verified, VerifyError> {
    match verify_source(served, options, &mut progress) {
        Err(e) if e.severity == Severity::Bad && served.has_cache() => {
            served.refetch();
            verify_source(served, options, progress)
        }
        other => other,
    }
}

/// A progress bar on standard error, when it is a terminal and not turned off.
pub fn progress_bar(quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} entries, {eta} left")
            .expect("a fixed template"),
    );
    bar
}

/// A failure: `<what> BAD: …` on standard output when it is proven, else the input that could not
/// be read.
fn report(e: &crate::VerifyError, what: &str) -> Result<Exit, Failure> {
    match e.exit() {
        Exit::Bad => {
            println!("{what} BAD: {}", render::safe(&e.to_string()));
            if let Some(both) = &e.checkpoints {
                for (which, note) in [("verified before", &both.0), ("served now", &both.1)] {
                    println!("the checkpoint {which}:");
                    for line in note.lines() {
                        println!("  {}", render::safe(line));
                    }
                }
            }
            Ok(Exit::Bad)
        }
        exit => Err(Failure::new(exit, e.to_string())),
    }
}

/// The keys a command pins a log by, and the prefix its flags carry (none for `verify-log`'s
/// `--vkey`; `log-` for `verify`'s `--log-vkey`), for messages that name the flag to fix.
pub struct LogKeys<'a> {
    pub flags: &'a str,
    pub vkey: &'a [String],
    pub vkey_file: &'a [PathBuf],
    pub witness: &'a [String],
    pub quorum: Option<usize>,
    pub witness_policy: Option<&'a Path>,
}

/// The keys and the quorum the arguments pin.
fn policy(args: &VerifyLogOptions) -> Result<Policy, Failure> {
    pinned_policy(&LogKeys {
        flags: "",
        vkey: &args.vkey,
        vkey_file: &args.vkey_file,
        witness: &args.witness,
        quorum: args.quorum,
        witness_policy: args.witness_policy.as_deref(),
    })
}

/// The keys and the quorum `keys` pin: the log's keys (or a witness policy's `log` lines), the
/// witnesses' cosignature keys, and how many of them must have cosigned.
pub fn pinned_policy(keys: &LogKeys<'_>) -> Result<Policy, Failure> {
    let flag = |name: &str| format!("--{}{name}", keys.flags);
    let witness_policy = keys.witness_policy.map(WitnessPolicy::load).transpose()?;
    let mut log_keys: Vec<VerifierKey> = pinned_keys(&flag("vkey"), keys.vkey, keys.vkey_file)?
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
            return Err(Failure::usage(format!(
                "the witness policy's `log` lines name other keys than the log's given with \
                 {} or {}",
                flag("vkey"),
                flag("vkey-file")
            )));
        }
    }
    if log_keys.is_empty() {
        return Err(Failure::usage(format!(
            "give the log's public key with {} or {}, or a witness policy whose `log` line \
             holds it (docs/VERIFYING.md says where to get it)",
            flag("vkey"),
            flag("vkey-file")
        )));
    }
    if let Some(k) = log_keys.iter().find(|k| k.is_cosignature()) {
        return Err(Failure::usage(format!(
            "{} is a witness cosignature key; give it with {}",
            k.name(),
            flag("witness")
        )));
    }
    let mut witnesses = Vec::new();
    for w in pinned_keys(&flag("witness"), keys.witness, &[])? {
        let key = w.key;
        if !key.is_cosignature() {
            return Err(Failure::usage(format!(
                "{} {}: not a tlog-cosignature/v1 key (its key type is not 0x04)",
                flag("witness"),
                render::safe(key.name())
            )));
        }
        witnesses.push(key);
    }
    let quorum = keys.quorum.unwrap_or(witnesses.len());
    if quorum > witnesses.len() {
        return Err(Failure::usage(format!(
            "{} {quorum} asks for more witnesses than the {} given",
            flag("quorum"),
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
