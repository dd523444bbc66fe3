//! `pinlog log …`: the operator's commands over the log store.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use pinlog_core::exit::{Exit, Failure};
use pinlog_core::files::read_bounded;
use pinlog_core::render;
use pinlog_log::http::Http;
use pinlog_log::keyfile;
use pinlog_log::note::SignerKey;
use pinlog_log::publish::{self, Published, Witnessing};
use pinlog_log::store::Store;
use pinlog_log::tiles::MAX_ENTRY;
use pinlog_log::witness_policy::WitnessPolicy;

use pinlog_verifier::cli::LogKeyArgs;
use pinlog_verifier::command::{mirror_command, VerifyLogOptions};

use crate::io;

#[derive(Subcommand)]
pub enum LogCommand {
    /// Create the log store and its signing key (if absent), and print the public key
    ///
    /// The key file is created with mode 0600 and never when the CI environment variable is set.
    Init(InitArgs),
    /// Append one entry (canonical JSON, docs/SPEC-log.md) and its surface blob
    Append(AppendArgs),
    /// Write the log as C2SP tlog-tiles to a directory and sign a checkpoint for it
    ///
    /// Tiles, bundles and blobs are written first and the checkpoint last, each whole or not at
    /// all. Refuses (exit 1) to sign a tree that does not extend the last checkpoint signed. With
    /// --witness-policy, the checkpoint is served only once the policy's quorum of witnesses
    /// cosigned it; otherwise the directory keeps its checkpoint and the command says which
    /// witnesses failed and why (exit 1 when one saw a fork, 4 otherwise).
    Publish(PublishArgs),
    /// Print the c2sp.org/tlog-proof@v1 inclusion receipt of one entry of a published log
    Prove(ProveArgs),
    /// Copy a log served over HTTP(S) into a directory, verifying it first
    ///
    /// The checkpoint is fetched first, then the files the copy lacks, into a holding place
    /// inside DIR; they move into place only once the whole new part verified against the pinned
    /// key, and the copy's checkpoint is replaced last. So the copy always verifies, a rollback or
    /// a fork of the served log is refused (exit 1, both checkpoints printed), and a second run
    /// fetches only what is new.
    Mirror(MirrorArgs),
}

#[derive(Args)]
pub struct MirrorArgs {
    /// The URL serving the log (the directory that holds `checkpoint`)
    #[arg(value_name = "URL")]
    pub url: String,
    /// The copy: created if absent
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub keys: LogKeyArgs,
    /// How long one request may take before it is tried again
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
    /// Check only the tlog-tiles layers, for a log that is not pinlog's
    #[arg(long)]
    pub generic: bool,
    /// No progress bar
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args)]
pub struct InitArgs {
    /// The SQLite store to create (or open)
    #[arg(long, value_name = "FILE", default_value = "data/log.db")]
    pub db: PathBuf,
    /// The log's name, as checkpoints carry it: a URL without scheme, e.g. example.com/pinlog
    #[arg(long)]
    pub origin: String,
    /// The signing key file: read if present, else created
    #[arg(long, value_name = "KEYFILE")]
    pub key: PathBuf,
}

#[derive(Args)]
pub struct AppendArgs {
    /// The SQLite store
    #[arg(long, value_name = "FILE", default_value = "data/log.db")]
    pub db: PathBuf,
    /// The entry: canonical JSON, at most 65535 bytes
    #[arg(value_name = "ENTRY.json")]
    pub entry: PathBuf,
    /// The surface the entry's `blob` names, if the store does not hold it yet
    #[arg(long, value_name = "SURFACE.json")]
    pub blob: Option<PathBuf>,
}

#[derive(Args)]
pub struct PublishArgs {
    /// The SQLite store
    #[arg(long, value_name = "FILE", default_value = "data/log.db")]
    pub db: PathBuf,
    /// The signing key file
    #[arg(long, value_name = "KEYFILE")]
    pub key: PathBuf,
    /// The directory to publish to
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    #[command(flatten)]
    pub witnesses: WitnessArgs,
}

/// The witnesses a publish asks, for `log publish` and `crawl --publish`.
#[derive(Args)]
pub struct WitnessArgs {
    /// Serve a new checkpoint only once the quorum of this witness policy cosigned it (C2SP
    /// tlog-policy lines `log`, `witness NAME KEY URL`, `group`, `quorum`; docs/WITNESSING.md)
    #[arg(long, value_name = "FILE")]
    pub witness_policy: Option<PathBuf>,
    /// How long the witnesses may take to answer, all together
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = humantime::parse_duration)]
    pub witness_timeout: Duration,
}

impl WitnessArgs {
    /// The policy, read now so that a bad one stops a command before its work.
    pub fn policy(&self) -> Result<Option<WitnessPolicy>, Failure> {
        self.witness_policy
            .as_deref()
            .map(WitnessPolicy::load)
            .transpose()
    }
}

/// Publishes `store` to `out`, asking the witnesses of `policy` first if there is one.
pub fn publish_to(
    store: &mut Store,
    key: &SignerKey,
    out: &Path,
    policy: Option<&WitnessPolicy>,
    timeout: Duration,
    progress: impl FnMut(u64, u64),
) -> Result<Published, Failure> {
    let http = Http::default();
    let witnessing = policy.map(|policy| Witnessing {
        policy,
        transport: &http,
        timeout,
    });
    Ok(publish::publish_witnessed(
        store,
        key,
        out,
        witnessing.as_ref(),
        progress,
    )?)
}

/// `; cosigned by a, b` for a checkpoint that carries witness cosignatures.
pub fn cosigned_note(p: &Published) -> String {
    if p.cosigned_by.is_empty() {
        return String::new();
    }
    let names: Vec<_> = p.cosigned_by.iter().map(|n| render::safe(n)).collect();
    format!("; cosigned by {}", names.join(", "))
}

#[derive(Args)]
pub struct ProveArgs {
    /// The published log directory
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// The entry's index
    #[arg(long, value_name = "N")]
    pub index: u64,
    /// Write the receipt to this file instead of standard output
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// The largest surface blob `append` reads.
const MAX_BLOB: u64 = 64 << 20;

pub fn init(args: InitArgs) -> Result<Exit, Failure> {
    // The key first: where none may be made (CI), nothing else is made either.
    let (key, created) = keyfile::load_or_create(&args.key, &args.origin)?;
    Store::create(&args.db, &args.origin)?;
    if created {
        eprintln!(
            "created the signing key {} (mode 0600); keep it out of the repository",
            args.key.display()
        );
    }
    println!("{}", render::safe(&key.verifier().to_string()));
    Ok(Exit::Ok)
}

pub fn append(args: AppendArgs) -> Result<Exit, Failure> {
    let read = |path: &std::path::Path, max: u64| {
        read_bounded(path, max)
            .map_err(|e| Failure::unreadable(format!("cannot read {}: {e}", path.display())))
    };
    let entry = read_bounded(&args.entry, MAX_ENTRY as u64).map_err(|e| {
        if e.kind() == std::io::ErrorKind::InvalidData {
            // Named by the entry rule it breaks, as any other refused entry.
            Failure::unreadable(format!(
                "entry-too-large: {} is larger than {MAX_ENTRY} bytes",
                args.entry.display()
            ))
        } else {
            Failure::unreadable(format!("cannot read {}: {e}", args.entry.display()))
        }
    })?;
    let blob = args
        .blob
        .as_deref()
        .map(|p| read(p, MAX_BLOB))
        .transpose()?;
    let mut store = Store::open(&args.db)?;
    let index = store.append(&entry, blob.as_deref())?;
    println!("appended entry {index}");
    Ok(Exit::Ok)
}

pub fn publish(args: PublishArgs) -> Result<Exit, Failure> {
    let policy = args.witnesses.policy()?;
    let mut store = Store::open(&args.db)?;
    let key = keyfile::load(&args.key)?;
    let bar = if std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} entries, {eta} left")
                .expect("a fixed template"),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    let outcome = publish_to(
        &mut store,
        &key,
        &args.out,
        policy.as_ref(),
        args.witnesses.witness_timeout,
        |done, total| {
            bar.set_length(total);
            bar.set_position(done);
        },
    );
    bar.finish_and_clear();
    let p = outcome?;
    let what = if p.signed {
        "signed a new checkpoint"
    } else {
        "nothing new to sign"
    };
    println!(
        "published {}: {} entries, root {}; {what}; {} files written{}",
        render::safe(key.name()),
        p.size,
        p.root,
        p.written,
        cosigned_note(&p)
    );
    Ok(Exit::Ok)
}

pub fn prove(args: ProveArgs) -> Result<Exit, Failure> {
    let receipt = publish::prove(&args.dir, args.index)?;
    let text = receipt.to_text();
    match &args.output {
        Some(path) => io::write_atomic(path, text.as_bytes())?,
        // The checkpoint comes from the directory: on a terminal it is rendered safe.
        None if io::stdout_is_terminal() => print!("{}", render::safe(&text)),
        None => print!("{text}"),
    }
    Ok(Exit::Ok)
}

pub fn mirror(args: MirrorArgs) -> Result<Exit, Failure> {
    let options = VerifyLogOptions {
        log: None,
        cache: None,
        timeout: args.timeout,
        vkey: args.keys.vkey,
        vkey_file: args.keys.vkey_file,
        witness: args.keys.witness,
        quorum: args.keys.quorum,
        witness_policy: args.keys.witness_policy,
        state: None,
        generic: args.generic,
        proof: None,
        quiet: args.quiet,
    };
    mirror_command(&args.url, &args.dir, &options)
}
