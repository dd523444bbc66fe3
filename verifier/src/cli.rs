//! The `verify-log` command as both binaries (`pinlog` and `pinlog-verify`) offer it: its
//! arguments, and the lines it prints.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use pinlog_core::render;
use pinlog_log::files::read_bounded;
use pinlog_log::note::VerifierKey;

use crate::checkpoint::Policy;
use crate::verify_log::{verify_log, Options};
use crate::verify_proof::verify_proof;

/// Exit codes (docs/CLI.md).
pub const EXIT_OK: u8 = 0;
pub const EXIT_USAGE: u8 = 2;
pub const EXIT_UNREADABLE: u8 = 4;

#[derive(Args, Debug)]
pub struct VerifyLogArgs {
    /// The log directory (holding `checkpoint`, `tile/`, `blobs/`)
    #[arg(value_name = "DIR", required_unless_present = "proof")]
    pub dir: Option<PathBuf>,
    /// The log's public key, `name+hex8+base64`, pinned from a source you trust (never the copy
    /// shipped beside the data)
    #[arg(long, value_name = "VKEY")]
    pub vkey: Vec<String>,
    /// A file holding the log's public key (one per line; `#` starts a comment)
    #[arg(long, value_name = "FILE")]
    pub vkey_file: Vec<PathBuf>,
    /// A witness's cosignature key (tlog-cosignature/v1); repeat for each witness
    #[arg(long, value_name = "VKEY")]
    pub witness: Vec<String>,
    /// How many of the witnesses must have cosigned [default: all of them]
    #[arg(long, value_name = "K")]
    pub quorum: Option<usize>,
    /// Remember the verified checkpoint in FILE, and prove the log consistent with the one
    /// remembered there (a rollback or a fork fails)
    #[arg(long, value_name = "FILE", conflicts_with = "proof")]
    pub state: Option<PathBuf>,
    /// Check only the tlog-tiles layers, for a log that is not pinlog's
    #[arg(long)]
    pub generic: bool,
    /// Check one c2sp.org/tlog-proof@v1 receipt instead of the whole log
    #[arg(long, value_name = "FILE")]
    pub proof: Option<PathBuf>,
    /// No progress bar
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs the command and returns the process exit code.
pub fn run(args: VerifyLogArgs) -> u8 {
    let policy = match policy(&args) {
        Ok(p) => p,
        Err((code, message)) => {
            eprintln!("error: {}", render::safe(&message));
            return code;
        }
    };
    if let Some(proof) = &args.proof {
        let bytes = match read_bounded(proof, pinlog_log::proof::MAX_RECEIPT as u64) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", proof.display());
                return EXIT_UNREADABLE;
            }
        };
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
                EXIT_OK
            }
            Err(e) => report(&e, "proof"),
        };
    }
    let dir = args
        .dir
        .as_deref()
        .expect("clap requires DIR without --proof");
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
            EXIT_OK
        }
        Err(e) => report(&e, "log"),
    }
}

/// Prints a failure: `<what> BAD: …` on standard output when it is proven, `error: …` on standard
/// error when an input could not be read.
fn report(e: &crate::VerifyError, what: &str) -> u8 {
    let line = render::safe(&e.to_string()).into_owned();
    match e.exit_code() {
        1 => println!("{what} BAD: {line}"),
        _ => eprintln!("error: {line}"),
    }
    e.exit_code()
}

fn parse_key(text: &str, from: &str) -> Result<VerifierKey, (u8, String)> {
    VerifierKey::parse(text.trim()).map_err(|e| (EXIT_USAGE, format!("{from}: {e}")))
}

/// The keys and the quorum the arguments pin.
fn policy(args: &VerifyLogArgs) -> Result<Policy, (u8, String)> {
    let mut log_keys = Vec::new();
    for v in &args.vkey {
        log_keys.push(parse_key(v, "--vkey")?);
    }
    for f in &args.vkey_file {
        let bytes = read_bounded(f, 64 << 10)
            .map_err(|e| (EXIT_UNREADABLE, format!("cannot read {}: {e}", f.display())))?;
        let text = String::from_utf8_lossy(&bytes);
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            if !line.is_empty() {
                log_keys.push(parse_key(line, &f.display().to_string())?);
            }
        }
    }
    if log_keys.is_empty() {
        return Err((
            EXIT_USAGE,
            "give the log's public key with --vkey or --vkey-file (docs/VERIFYING.md says where \
             to get it)"
                .into(),
        ));
    }
    if let Some(k) = log_keys.iter().find(|k| k.is_cosignature()) {
        return Err((
            EXIT_USAGE,
            format!(
                "{} is a witness cosignature key; give it with --witness",
                k.name()
            ),
        ));
    }
    let mut witnesses = Vec::new();
    for w in &args.witness {
        let key = parse_key(w, "--witness")?;
        if !key.is_cosignature() {
            return Err((
                EXIT_USAGE,
                format!(
                    "--witness {}: not a tlog-cosignature/v1 key (its key type is not 0x04)",
                    render::safe(key.name())
                ),
            ));
        }
        witnesses.push(key);
    }
    let quorum = args.quorum.unwrap_or(witnesses.len());
    if quorum > witnesses.len() {
        return Err((
            EXIT_USAGE,
            format!(
                "--quorum {quorum} asks for more witnesses than the {} given",
                witnesses.len()
            ),
        ));
    }
    Ok(Policy {
        log_keys,
        witnesses,
        quorum,
    })
}
