//! `pinlog crawl`: one run (or a daemon of runs) of the crawler, with a progress bar on a
//! terminal and one log line per server otherwise, then the run's summary; with `--queue`, the
//! run's coordinator. `pinlog crawl-worker`: a worker of a coordinator's queue, whose looker is
//! built from the same flags, by the same code, as the crawl's.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use pinlog_core::exit::{Exit, Failure};
use pinlog_core::render;
use pinlog_crawler::candidate::SourceKind;
use pinlog_crawler::cgroup::Cgroups;
use pinlog_crawler::discover::{Discovery, Sources};
use pinlog_crawler::install::Installers;
use pinlog_crawler::install_cache::Cache;
use pinlog_crawler::limits::Limits as CrawlLimits;
use pinlog_crawler::look::{Kept, Looker};
use pinlog_crawler::queue::coordinator::{coordinate, Coordinator};
use pinlog_crawler::queue::worker::{work, Event, Worker};
use pinlog_crawler::queue::Queue;
use pinlog_crawler::run::{self, Crawl, Observer, Reported, Summary};
use pinlog_crawler::sandbox::{self, Isolation};
use pinlog_crawler::schedule::When;
use pinlog_log::keyfile;
use pinlog_log::store::Store;
use pinlog_log::witness_policy::WitnessPolicy;
use pinlog_mcp::guard::NetGuard;

use crate::cli::log::{cosigned_note, publish_to, WitnessArgs};
use crate::cli::look::LookArgs;
use crate::io;

#[derive(Args)]
pub struct CrawlArgs {
    /// The SQLite store (created on first use)
    #[arg(long, value_name = "FILE", default_value = "data/log.db")]
    pub db: PathBuf,
    /// The log's name, for a store or key created by this run
    #[arg(long, default_value = "pinlog.local/log")]
    pub origin: String,
    /// A discovery source to ask (repeat for several; default: all of them)
    #[arg(long = "source", value_name = "SOURCE", value_parser = ["registry", "npm", "github", "seeds"])]
    pub sources: Vec<String>,
    /// The seed file: `npm:<pkg>[@ver]`, `pypi:<pkg>[==ver]`, `oci:<image>@sha256:…`, `remote:<url>`;
    /// a package's line may add `env=NAME[=VALUE]`… and `-- ARG…` (docs/OPERATIONS.md)
    #[arg(long, value_name = "FILE", default_value = "data/seeds.txt")]
    pub seeds: PathBuf,
    /// The opt-out list, applied before any probe (a missing or unreadable list stops the run)
    #[arg(long, value_name = "FILE", default_value = "OPTOUT.txt")]
    pub optout: PathBuf,
    /// Look at no more than N servers in this run (never-seen and longest-unseen servers in turn)
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Look at every planned server again, even one looked at today (only what moved is
    /// appended, as always)
    #[arg(long)]
    pub relook: bool,
    /// How many servers are looked at at once (a coordinator's workers have their own)
    #[arg(long, value_name = "N", default_value_t = 2, conflicts_with = "queue", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: u16,
    /// After the run, publish the log to DIR (tiles, bundles, blobs, signed checkpoint)
    #[arg(long, value_name = "DIR", requires = "key")]
    pub publish: Option<PathBuf>,
    /// The signing key for --publish: created on first use (mode 0600, never in CI); its
    /// verifier key is written beside it as KEYFILE.vkey
    #[arg(long, value_name = "KEYFILE", requires = "publish")]
    pub key: Option<PathBuf>,
    #[command(flatten)]
    pub witnesses: WitnessArgs,
    /// Run as a daemon on this cron schedule (UTC; 5 fields: minute hour day month weekday, with
    /// weekdays 1-7 from Sunday or by name)
    #[arg(long, value_name = "CRON")]
    pub schedule: Option<String>,
    /// The MCP registry's base URL
    #[arg(
        long,
        value_name = "URL",
        default_value = "https://registry.modelcontextprotocol.io"
    )]
    pub registry_url: String,
    /// The GitHub API (topic search runs only when GITHUB_TOKEN is set)
    #[arg(long, value_name = "URL", default_value = "https://api.github.com")]
    pub github_api: String,
    /// Be the coordinator of a crawl by workers (`crawl-worker`): plan the run, put one job per
    /// look on the NATS JetStream work queue at URL (nats://HOST:PORT), and apply the workers'
    /// results to the store. The flags of how servers are looked at then apply to the workers
    #[arg(long, value_name = "URL", value_parser = parse_queue_url)]
    pub queue: Option<String>,
    /// With --queue: a job neither finished nor reported in progress for this long, in
    /// seconds, is delivered to another worker
    #[arg(long, value_name = "S", default_value_t = 60, requires = "queue", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub ack_wait: u64,
    /// With --queue: deliveries of one job before it is recorded as worker-gave-up
    #[arg(long, value_name = "N", default_value_t = 3, requires = "queue", value_parser = clap::value_parser!(u32).range(1..=100))]
    pub max_deliver: u32,
    /// With --queue: how long a run waits for its results (from its start) before the looks
    /// still outstanding are recorded as no-result
    #[arg(long, value_name = "DURATION", default_value = "20h", requires = "queue", value_parser = humantime::parse_duration)]
    pub queue_deadline: Duration,
    #[command(flatten)]
    pub looker: LookerArgs,
}

/// How servers are looked at: the sandbox, the installers, the caps. A crawl and a worker take
/// the same flags and build their looker the same way.
#[derive(Args)]
pub struct LookerArgs {
    /// Run stdio servers WITHOUT a sandbox when bubblewrap is missing (they can then reach the
    /// network and your files as you)
    #[arg(long)]
    pub unsandboxed: bool,
    /// Let the SSRF guard connect to private, loopback and link-local addresses (for tests only)
    #[arg(long)]
    pub allow_private: bool,
    /// The npm registry (search and installs)
    #[arg(long, value_name = "URL", default_value = "https://registry.npmjs.org")]
    pub npm_registry: String,
    /// The PyPI simple index pip installs from
    #[arg(long, value_name = "URL", default_value = "https://pypi.org/simple")]
    pub pypi_index: String,
    /// Where to make the private scratch directory for installs (default: the system's temp
    /// dir); it is removed when the crawl ends
    #[arg(long, value_name = "DIR")]
    pub work: Option<PathBuf>,
    /// The longest an install may take, in seconds
    #[arg(long, value_name = "S", default_value_t = 300)]
    pub install_timeout: u64,
    /// Keep installed packages in DIR, so that a later look at the same version and registry
    /// digest runs them without installing (default: install-cache beside --db; for a worker,
    /// data/install-cache)
    #[arg(long, value_name = "DIR")]
    pub install_cache: Option<PathBuf>,
    /// The install cache's bound: past it, the least recently used packages are removed (0
    /// keeps none and installs every package afresh)
    #[arg(long, value_name = "BYTES", default_value_t = 8 << 30)]
    pub install_cache_bytes: u64,
    /// Install a kept package again after this many days, so that its dependencies' newer
    /// releases are looked at too
    #[arg(long, value_name = "DAYS", default_value_t = 7, value_parser = clap::value_parser!(u64).range(1..=365))]
    pub install_cache_days: u64,
    /// The Python that makes venvs and runs pip; given again, the interpreters a package whose
    /// Requires-Python excludes the first may be installed with (default: python3, then
    /// python3.X on PATH, pyenv's and uv's versions)
    #[arg(long, value_name = "PATH")]
    pub python: Vec<PathBuf>,
    /// The node that runs npm packages
    #[arg(long, value_name = "PATH", default_value = "node")]
    pub node: PathBuf,
    /// The npm that installs them
    #[arg(long, value_name = "PATH", default_value = "npm")]
    pub npm: PathBuf,
    /// The memory of one sandboxed server, all its processes together (cgroup; per process
    /// without one)
    #[arg(long, value_name = "BYTES", default_value_t = CrawlLimits::default().memory_bytes)]
    pub max_memory_bytes: u64,
    /// The processes and threads one sandboxed server may have at once
    #[arg(long, value_name = "N", default_value_t = CrawlLimits::default().processes)]
    pub max_processes: u64,
    /// The CPU time of each process of a sandboxed server, in seconds
    #[arg(long, value_name = "S", default_value_t = CrawlLimits::default().cpu_seconds)]
    pub max_cpu_seconds: u64,
    /// The size of each of a sandboxed server's tmpfs (/tmp and its home)
    #[arg(long, value_name = "BYTES", default_value_t = CrawlLimits::default().tmpfs_bytes)]
    pub max_tmpfs_bytes: u64,
    /// The largest file a sandboxed server may write
    #[arg(long, value_name = "BYTES", default_value_t = CrawlLimits::default().file_bytes)]
    pub max_file_bytes: u64,
    /// What one package may unpack when installed, all files together
    #[arg(long, value_name = "BYTES", default_value_t = CrawlLimits::default().unpacked_bytes)]
    pub max_unpacked_bytes: u64,
    #[command(flatten)]
    pub look: LookArgs,
}

impl LookerArgs {
    pub fn limits(&self) -> CrawlLimits {
        CrawlLimits {
            memory_bytes: self.max_memory_bytes,
            processes: self.max_processes,
            cpu_seconds: self.max_cpu_seconds,
            tmpfs_bytes: self.max_tmpfs_bytes,
            file_bytes: self.max_file_bytes,
            unpacked_bytes: self.max_unpacked_bytes,
        }
    }
}

/// The crawler's own step between itself and bubblewrap (docs/OPERATIONS.md, "Caps").
#[derive(Args)]
pub struct SandboxExecArgs {
    /// A cgroup.procs file to join (repeatable)
    #[arg(long, value_name = "FILE")]
    pub join: Vec<PathBuf>,
    #[arg(long, value_name = "S")]
    pub cpu_seconds: u64,
    #[arg(long, value_name = "BYTES")]
    pub file_bytes: u64,
    #[arg(long, value_name = "BYTES")]
    pub data_bytes: Option<u64>,
    #[arg(long, value_name = "N")]
    pub processes: Option<u64>,
    /// The command is bubblewrap: hand it the seccomp filters
    #[arg(long)]
    pub seccomp: bool,
    /// The command, after --
    #[arg(last = true, required = true)]
    pub command: Vec<std::ffi::OsString>,
}

/// `crawl-worker`: takes looks from a coordinator's queue until it is stopped.
#[derive(Args)]
pub struct CrawlWorkerArgs {
    /// The NATS JetStream server the coordinator (`crawl --queue`) queues jobs on:
    /// nats://HOST:PORT
    #[arg(long, value_name = "URL", value_parser = parse_queue_url)]
    pub queue: String,
    /// How many looks this worker makes at once
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: u16,
    #[command(flatten)]
    pub looker: LookerArgs,
}

fn parse_queue_url(s: &str) -> Result<String, String> {
    pinlog_crawler::queue::check_url(s)
        .map(|()| s.to_string())
        .map_err(|e| e.0)
}

pub fn run(args: CrawlArgs) -> Result<Exit, Failure> {
    if args.witnesses.witness_policy.is_some() && args.publish.is_none() {
        return Err(Failure::usage(
            "--witness-policy applies to --publish; give the directory to publish to",
        ));
    }
    let policy = args.witnesses.policy()?;
    let when = args
        .schedule
        .as_deref()
        .map(When::parse)
        .transpose()
        .map_err(Failure::usage)?;
    let kinds = if args.sources.is_empty() {
        SourceKind::ALL.to_vec()
    } else {
        args.sources
            .iter()
            .filter_map(|s| SourceKind::parse(s))
            .collect()
    };
    let sources = Sources {
        kinds,
        registry_url: args.registry_url.clone(),
        npm_registry: args.looker.npm_registry.clone(),
        github_api: args.github_api.clone(),
        github_token: std::env::var("GITHUB_TOKEN").ok().filter(|t| !t.is_empty()),
        seeds: args.seeds.clone(),
    };
    if let Some(url) = &args.queue {
        let coordinator = Coordinator {
            db: args.db.clone(),
            origin: args.origin.clone(),
            sources,
            optout: args.optout.clone(),
            limit: args.limit,
            relook: args.relook,
            queue: Queue {
                url: url.clone(),
                ack_wait: Duration::from_secs(args.ack_wait),
                max_deliver: args.max_deliver,
            },
            deadline: args.queue_deadline,
        };
        return on_schedule(when, || {
            let mut observer = Progress::new();
            let summary = coordinate(&coordinator, &mut observer)
                .map_err(|e| Failure::unreadable(e.to_string()))?;
            observer.finish();
            finish(&summary, &args, policy.as_ref())
        });
    }
    let beside_db = args
        .db
        .parent()
        .unwrap_or(Path::new(""))
        .join("install-cache");
    let (looker, scratch) = looker(&args.looker, &beside_db)?;
    let crawl = Crawl {
        db: args.db.clone(),
        origin: args.origin.clone(),
        sources,
        optout: args.optout.clone(),
        limit: args.limit,
        concurrency: usize::from(args.concurrency),
        relook: args.relook,
        looker,
    };
    let outcome = on_schedule(when, || once(&crawl, &args, policy.as_ref()));
    drop(scratch);
    outcome
}

/// Runs `run` once, or on the schedule until the process is stopped.
fn on_schedule(
    when: Option<When>,
    mut run: impl FnMut() -> Result<Exit, Failure>,
) -> Result<Exit, Failure> {
    let Some(when) = when else {
        return run();
    };
    loop {
        let Some(wait) = when.until_next() else {
            return Ok(Exit::Ok);
        };
        eprintln!("next run in {} s", wait.as_secs());
        std::thread::sleep(wait);
        if let Err(f) = run() {
            // A daemon reports a failed run and waits for the next one.
            eprintln!("error: {}", f.message);
        }
    }
}

/// The looker the flags describe, with its install cache (at `default_cache` unless the flags
/// name one), and its scratch directory (removed when dropped).
fn looker(args: &LookerArgs, default_cache: &Path) -> Result<(Looker, tempfile::TempDir), Failure> {
    if args.allow_private {
        eprintln!(
            "WARNING: --allow-private: the SSRF guard lets remotes reach loopback, private and \
             link-local addresses (cloud metadata included). Use it for tests only."
        );
    }
    let isolation = if args.unsandboxed {
        eprintln!(
            "WARNING: --unsandboxed: stdio servers run without a sandbox, with network access \
             and your files. Install bubblewrap instead."
        );
        Ok(Isolation::None)
    } else {
        Isolation::detect()
    };
    if let Err(why) = &isolation {
        eprintln!("no sandbox: {why}; stdio servers will be recorded as sandbox-unavailable (--unsandboxed runs them anyway)");
    }
    let cgroups = match &isolation {
        Ok(Isolation::Bubblewrap(_)) => match Cgroups::detect() {
            Ok(c) => Some(Arc::new(c)),
            Err(why) => {
                eprintln!("no cgroup for the sandbox's caps ({why}); memory and processes are capped by rlimits, per process");
                None
            }
        },
        _ => None,
    };
    let sandbox_exec = std::env::current_exe().map_err(|e| {
        Failure::unreadable(format!(
            "cannot find the pinlog binary to run sandbox-exec: {e}"
        ))
    })?;
    // A new private directory (mode 0700) for this process, removed when it ends: another user
    // cannot plant or swap what is installed in it.
    let base = args.work.clone().unwrap_or_else(std::env::temp_dir);
    let scratch = std::fs::create_dir_all(&base)
        .and_then(|()| std::path::absolute(&base))
        .and_then(|base| {
            tempfile::Builder::new()
                .prefix("pinlog-crawl-")
                .tempdir_in(base)
        })
        .map_err(|e| {
            Failure::unreadable(format!(
                "cannot make a scratch directory in {}: {e}",
                base.display()
            ))
        })?;
    let work = scratch.path().to_path_buf();
    let installer_home = work.join("installers");
    std::fs::create_dir_all(&installer_home).map_err(|e| {
        Failure::unreadable(format!("cannot create {}: {e}", installer_home.display()))
    })?;
    let resolve = |p: &Path| -> PathBuf {
        match p.to_str() {
            Some(name) if !name.contains('/') => {
                sandbox::find_program(name).unwrap_or_else(|| p.to_path_buf())
            }
            _ => p.to_path_buf(),
        }
    };
    let kept = if args.install_cache_bytes == 0 {
        None
    } else {
        let dir = args
            .install_cache
            .clone()
            .unwrap_or_else(|| default_cache.to_path_buf());
        let cache = Cache::open(
            &dir,
            args.install_cache_bytes,
            Duration::from_secs(args.install_cache_days * 86_400),
        )
        .map_err(|e| {
            Failure::unreadable(format!(
                "cannot open the install cache {}: {e} (give another with --install-cache, or \
                 --install-cache-bytes 0 for none)",
                dir.display()
            ))
        })?;
        Some(Kept::new(cache, Duration::from_secs(30)).map_err(Failure::unreadable)?)
    };
    let looker = Looker {
        isolation,
        installers: Installers {
            npm_registry: args.npm_registry.clone(),
            pypi_index: args.pypi_index.clone(),
            npm: resolve(&args.npm),
            node: resolve(&args.node),
            python: resolve(
                args.python
                    .first()
                    .map_or(Path::new("python3"), PathBuf::as_path),
            ),
            pythons: match args.python.len() {
                0 => pinlog_crawler::install::python::discover(),
                _ => args.python[1..].iter().map(|p| resolve(p)).collect(),
            },
            timeout: Duration::from_secs(args.install_timeout),
            home: installer_home,
        },
        guard: NetGuard::new(args.allow_private),
        caps: args.look.caps(),
        options: args.look.options(),
        work,
        limits: args.limits(),
        cgroups,
        sandbox_exec,
        kept,
    };
    Ok((looker, scratch))
}

/// `crawl-worker`: one `key=value` line per job taken and per result reported.
pub fn worker(args: CrawlWorkerArgs) -> Result<Exit, Failure> {
    let (looker, scratch) = looker(&args.looker, Path::new("data/install-cache"))?;
    let w = Worker {
        url: args.queue.clone(),
        concurrency: usize::from(args.concurrency),
        looker,
    };
    let on = |e: Event<'_>| {
        let at = pinlog_core::clock::now();
        match e {
            Event::Taken {
                look,
                server,
                delivery,
            } => eprintln!(
                "at={at} event=taken look={look} server={} delivery={delivery}",
                value(server.as_str())
            ),
            Event::Reported {
                look,
                server,
                outcome,
                took,
            } => eprintln!(
                "at={at} event=reported look={look} server={} outcome={outcome} took_ms={}",
                value(server.as_str()),
                took.as_millis()
            ),
            Event::Note(line) => eprintln!("at={at} event=note detail={}", value(line)),
        }
    };
    let outcome = work(&w, &on).map_err(|e| Failure::unreadable(e.to_string()));
    drop(scratch);
    outcome.map(|()| Exit::Ok)
}

fn once(crawl: &Crawl, args: &CrawlArgs, policy: Option<&WitnessPolicy>) -> Result<Exit, Failure> {
    // Each run starts with empty installer caches: nothing one run's packages left there is
    // served to the next, and a daemon's scratch space does not grow.
    let home = &crawl.looker.installers.home;
    let _ = std::fs::remove_dir_all(home);
    std::fs::create_dir_all(home)
        .map_err(|e| Failure::unreadable(format!("cannot create {}: {e}", home.display())))?;
    let mut observer = Progress::new();
    let summary =
        run::crawl(crawl, &mut observer).map_err(|e| Failure::unreadable(e.to_string()))?;
    observer.finish();
    finish(&summary, args, policy)
}

/// The run's summary, then the log published if asked.
fn finish(
    summary: &Summary,
    args: &CrawlArgs,
    policy: Option<&WitnessPolicy>,
) -> Result<Exit, Failure> {
    print_summary(summary);
    if let (Some(dir), Some(key)) = (&args.publish, &args.key) {
        publish_run(&args.db, key, dir, policy, args.witnesses.witness_timeout)?;
    }
    Ok(Exit::Ok)
}

fn publish_run(
    db: &Path,
    key_path: &Path,
    dir: &Path,
    policy: Option<&WitnessPolicy>,
    timeout: Duration,
) -> Result<(), Failure> {
    let mut store = Store::open(db)?;
    let origin = store.origin()?;
    let (key, created) = keyfile::load_or_create(key_path, &origin)?;
    let vkey = key.verifier().to_string();
    let vkey_path = PathBuf::from(format!("{}.vkey", key_path.display()));
    if created {
        eprintln!(
            "created the signing key {} (mode 0600); keep it out of the repository",
            key_path.display()
        );
    }
    io::write_atomic(&vkey_path, format!("{vkey}\n").as_bytes())?;
    let p = publish_to(&mut store, &key, dir, policy, timeout, |_, _| {})?;
    println!(
        "published {} entries to {}, root {}{}{}; verifier key in {}",
        p.size,
        dir.display(),
        p.root,
        if p.signed {
            ", new checkpoint signed"
        } else {
            ""
        },
        cosigned_note(&p),
        vkey_path.display()
    );
    Ok(())
}

fn print_summary(s: &Summary) {
    let failed: usize = s.failed.values().sum();
    println!(
        "crawl run {}: {} candidates; {} opted out, {} looked at within a day, {} beyond --limit",
        s.run, s.candidates, s.opted_out, s.recent, s.beyond_limit
    );
    println!(
        "  looked at {}: {} ok ({} new, {} changed, {} unchanged), {} failed",
        s.looked, s.ok, s.new, s.changed, s.unchanged, failed
    );
    for (reason, n) in &s.failed {
        println!("    {reason}: {n}");
    }
    for src in &s.sources {
        let state = if src.skipped {
            "skipped".to_string()
        } else {
            format!("{} found", src.found)
        };
        println!("  source {}: {state}", src.source.as_str());
        for p in &src.problems {
            println!("    {}", render::safe(p));
        }
    }
    println!(
        "  log: {} entries; started {}, finished {}",
        s.log_size, s.started, s.finished
    );
}

/// A progress bar on a terminal; one `key=value` line per server otherwise.
struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    fn new() -> Progress {
        Progress { bar: None }
    }

    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Observer for Progress {
    fn planned(&mut self, d: &Discovery, planned: usize) {
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(planned as u64);
            bar.set_style(
                ProgressStyle::with_template("{bar:40} {pos}/{len} servers, {eta} left  {msg}")
                    .expect("a fixed template"),
            );
            self.bar = Some(bar);
        } else {
            eprintln!(
                "at={} event=planned candidates={} planned={planned}",
                pinlog_core::clock::now(),
                d.candidates.len()
            );
        }
    }

    fn looked(&mut self, r: &Reported) {
        let detail = value(r.detail.as_deref().unwrap_or(""));
        let line = format!(
            "at={} event=looked server={} outcome={} version={} labels={} install={} took_ms={} detail={detail}",
            pinlog_core::clock::now(),
            value(r.server.as_str()),
            r.verdict.token(),
            r.version.as_deref().map_or("-".to_string(), value),
            if r.labels.is_empty() { "-".to_string() } else { r.labels.join(",") },
            r.install.as_ref().map_or("-".to_string(), |i| value(&i.to_string())),
            r.took.as_millis(),
        );
        match &self.bar {
            Some(bar) => {
                bar.set_message(render::quoted(r.server.as_str(), 40));
                bar.inc(1);
            }
            None => eprintln!("{line}"),
        }
    }

    fn note(&mut self, line: &str) {
        let line = format!(
            "at={} event=note detail={}",
            pinlog_core::clock::now(),
            value(line)
        );
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }
}

/// A value of a log line: rendered safe, then written as a JSON string, so that quotes and
/// backslashes inside it cannot be mistaken for the line's own.
fn value(s: &str) -> String {
    let mut out = Vec::new();
    pinlog_core::json::write_string(&mut out, &render::safe(s));
    String::from_utf8(out).expect("JSON strings are UTF-8")
}

/// `sandbox-exec`: joins the look's cgroups, sets its rlimits and execs the command; returns
/// only when that failed, with exit 126 as a shell does for a command it could not run.
pub fn sandbox_exec(args: SandboxExecArgs) -> u8 {
    let confinement = pinlog_crawler::confine::Confinement {
        join: args.join,
        cpu_seconds: args.cpu_seconds,
        file_bytes: args.file_bytes,
        data_bytes: args.data_bytes,
        processes: args.processes,
        seccomp: args.seccomp,
    };
    eprintln!("pinlog sandbox-exec: {}", confinement.exec(&args.command));
    126
}
