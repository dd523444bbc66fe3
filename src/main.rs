//! The `pinlog` command line: parses arguments, calls a crate, renders the result, exits.

mod cli;

mod io;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use pinlog_core::json::Limits;
use pinlog_crawler::limits::Limits as CrawlLimits;
use pinlog_gate::commands as gate;

use crate::io::Render;

/// Pin what MCP servers tell agents, and keep a public, verifiable log of it.
#[derive(Parser)]
#[command(
    name = "pinlog",
    version,
    propagate_version = true,
    max_term_width = 100
)]
#[command(
    after_help = "Exit codes: 0 ok, 1 a departure or an inconsistency was proven, 2 the command \
line is wrong, 3 something could not be compared (an undecidable number; for verify also an \
incomplete capture or a narrower scope), 4 an input could not be read. See docs/CLI.md."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the RFC 8785 canonical bytes of one JSON document
    ///
    /// The document is read strictly (docs/SPEC-digest.md): a repeated member name, an unpaired
    /// surrogate, invalid UTF-8 or trailing data is refused with exit code 4. On a terminal the
    /// bytes are shown with hidden characters written as <U+XXXX>; piped or written with -o they are
    /// exact.
    Canon(CanonArgs),
    /// Print the digest of one JSON document, or of each tool in a listing
    ///
    /// Without --listing: `sha256:<hex>` of the canonical bytes. With --listing the input is a JSON
    /// array of tool (or prompt) objects, as tools/list returns them: one line
    /// `<name>\tsha256:<hex>` per object in set-hash order, then `set\t<hex>`.
    Digest(DigestArgs),
    /// Operate a transparency log: create it, append entries, publish and prove them
    #[command(subcommand)]
    Log(LogCommand),
    /// Verify a downloaded log directory (or one inclusion receipt) offline
    ///
    /// Checks the checkpoint's signature against the key you pin (never one shipped beside the
    /// data), the witness quorum, every entry, tile and the root, and pinlog's entry rules.
    /// Prints `log OK: <origin>, <size> entries, root <base64>`, or `log BAD: <where>: <rule>:
    /// <detail>` and exits 1. See docs/VERIFYING.md.
    VerifyLog(pinlog_verifier::cli::VerifyLogArgs),
    /// Print the surface one server serves, as a one-server manifest (JSON)
    ///
    /// Connects to URL over Streamable HTTP, or runs the command after `--` as an MCP server over
    /// stdio (no shell); reads its tools and prompts (each listing read --passes times) and its
    /// instructions, and prints the manifest on standard output. No tool is ever called. A
    /// summary goes to standard error.
    Probe(ProbeArgs),
    /// Read every server of a client configuration and write one manifest of them all
    ///
    /// Reads the `mcpServers` object MCP clients share (or VS Code's `servers`), expands
    /// ${VAR}, ${VAR:-default} and ${env:VAR}, runs stdio servers and connects to HTTP ones, and
    /// writes the schema 2 manifest whole to -o. A server that cannot be read fails the whole
    /// export (exit 4); nothing is written then. Flags may also be written with one dash
    /// (-config, -server), as other pinning tools spell them.
    Export(ExportArgs),
    /// Approve a manifest as it stands: write the lockfile a team commits
    ///
    /// Keeps every tool, prompt and the instructions whole beside its digest, so that verify can
    /// say what changed. Reports hidden characters, name collisions, invalid and mixed-script
    /// names, and writes anyway. An unchanged surface leaves the file as it is (bytes and
    /// approval_serial); a changed one is written whole or not at all, approval_serial + 1. A
    /// scoped manifest replaces only its servers. A signature beside the lockfile is never
    /// removed; lock says when it no longer matches. See docs/GATE.md. Flags may also be written
    /// with one dash.
    Lock(pinlog_gate::cli::LockArgs),
    /// Check a manifest against the lockfile: the gate for CI and for every start
    ///
    /// Exit 0: every gated policy holds. 1: a departure from the approved surface was proven. 2:
    /// the command line is wrong. 3: something gated could not be compared (a number no double
    /// identifies, a capture that is not complete, a scope narrower than the lockfile). 4: an
    /// input could not be read, including a missing, foreign, stale or bad signature when
    /// -pubkey is given. 1 outranks 3. The text report renders every served string safe; -format
    /// json carries values as served; -format sarif is SARIF 2.1.0 for code scanning. See
    /// docs/GATE.md. Flags may also be written with one dash (-lock, -fail-on, -pubkey, ...).
    Verify(pinlog_gate::cli::VerifyArgs),
    /// Make an Ed25519 key pair for signing lockfiles: FILE (PKCS#8 PEM) and FILE.pub (SPKI PEM)
    Key(pinlog_gate::cli::KeyArgs),
    /// Sign a lockfile: writes LOCK.sig, a detached Ed25519 envelope over its canonical form
    ///
    /// Re-indenting the lockfile keeps the signature valid; changing any value breaks it. Keys
    /// from `pinlog key` or `openssl genpkey -algorithm ed25519` work. See docs/GATE.md.
    Sign(pinlog_gate::cli::SignArgs),
    /// Run an MCP server behind a proxy that holds every client byte until its surface matches
    ///
    /// Starts the server after -- (or, with --listen and --upstream, serves Streamable HTTP on a
    /// loopback address in front of an HTTP server), queues everything the client sends, lists
    /// the server's tools,
    /// prompts and instructions itself, and compares them with the pin (first use pins them) or
    /// with --lock. Only then does traffic flow, and every listing the client receives for the
    /// rest of the session is checked again. On drift, block (default: every request answered
    /// with error -32090, exit 1) or hold (changed tools hidden and refused). Pins live in
    /// PINLOG_HOME (default ~/.local/share/pinlog). See docs/PROXY.md.
    Proxy(cli::proxy::ProxyArgs),
    /// List the servers the proxy pinned, with pending changes
    Pins(cli::pins::PinsArgs),
    /// Show a server's pending change field by field, every served string rendered safe
    Review(cli::pins::ServerArg),
    /// Approve a server's pending change (all of it, or the tools named)
    Approve(cli::pins::ApproveArgs),
    /// Forget a server's pin: the next session pins afresh
    Forget(cli::pins::ServerArg),
    /// Verify the local log of every pin, drift, approval and forget
    Audit,
    /// Put `pinlog proxy` in front of every local MCP server in your clients' configurations
    ///
    /// Finds the configurations of Claude Desktop, Claude Code (and with --project the
    /// project's .mcp.json), Cursor, VS Code, Gemini CLI, Windsurf, Cline and Codex, shows what
    /// changes, backs each file up under the pinlog data directory, and rewrites only the servers'
    /// command and arguments (every other byte kept). Remote servers are left alone and listed;
    /// servers running an unpinned package are flagged. Running it twice changes nothing. See
    /// docs/WRAP.md.
    Wrap(cli::wrap::WrapArgs),
    /// Undo `wrap`: the exact bytes from the backup, or the proxy removed from each server when
    /// the file was edited since
    Unwrap(cli::wrap::UnwrapArgs),
    /// See what the proxy does, in ten seconds: a bundled server changes between two sessions
    ///
    /// The first session pins its one tool; in the second the tool's description asks for the
    /// conversation's notes and its schema gains a field for them, and the proxy blocks the
    /// session with the diff and the labels. Runs in a temporary directory, uses no network,
    /// leaves nothing behind. Exit 0 when the demo went as described, 1 otherwise.
    Demo(cli::demo::DemoArgs),
    /// Run pinlog as an MCP server an agent can ask before it installs or trusts a server
    ///
    /// Read-only tools: a public server's history from a verified local copy of the log
    /// (--log DIR --vkey VKEY), this machine's pins and pending reviews, a pending change's labels
    /// and counts, and how to protect a client. Answers carry no third-party text: names in a
    /// safe character set, dates, counts, hashes and fixed labels only. Stdio by default, or
    /// Streamable HTTP on a loopback address with --http. See docs/LOOKUP.md.
    Lookup(pinlog_proxy::lookup::cli::LookupArgs),
    /// Write managed-policy files that allow only the wrapped, locked servers
    ///
    /// For Claude Code (managed-settings.json, managed-mcp.json), GitHub Copilot
    /// (managed-settings.json) and Codex (requirements.toml), as each product documents them;
    /// Cursor documents no file-based policy, and gets none. Writes under --out; installs
    /// nothing. See docs/POLICY.md.
    Policy(cli::policy::PolicyArgs),
    /// Find public MCP servers, look at each in a sandbox, and append to the log on change
    ///
    /// Discovers servers (the MCP registry, npm search, GitHub topics with GITHUB_TOKEN, a seed
    /// file), drops those in the opt-out list and those looked at within a day, installs each
    /// package with its scripts disabled and runs it in bubblewrap (no network, empty home), or
    /// connects to a remote through the SSRF guard. A server whose surface is new or moved gets
    /// one log entry; every look is recorded in the store. Prints a run summary. With --publish
    /// the log is published and signed afterwards; with --schedule it runs as a daemon. See
    /// docs/OPERATIONS.md.
    Crawl(Box<CrawlArgs>),
    /// Run a command in a look's cgroups with its rlimits (the crawler's own use)
    #[command(hide = true)]
    SandboxExec(SandboxExecArgs),
    /// Build the static site from the store and the published log
    #[command(subcommand)]
    Site(SiteCommand),
    /// Write a report computed from the store and the published log
    #[command(subcommand)]
    Report(ReportCommand),
}

#[derive(Subcommand)]
enum SiteCommand {
    /// Render every page: the index, a page, badge and feed per server, monthly reports, the
    /// log's page with its files and an inclusion proof per entry
    ///
    /// Only entries covered by the published checkpoint are shown; the store's entries must hash
    /// to its root. Pages whose data did not change since the last build are not rendered again,
    /// and files whose bytes did not change are not written. See docs/SITE.md.
    Build(SiteArgs),
}

#[derive(Subcommand)]
enum ReportCommand {
    /// The monthly drift report as JSON: totals of the month's changes, never per named server
    Month(ReportArgs),
}

#[derive(Args)]
struct SiteSource {
    /// The SQLite store
    #[arg(long, value_name = "FILE", default_value = "data/log.db")]
    db: PathBuf,
    /// The published log directory (as `pinlog log publish` or `crawl --publish` wrote it)
    #[arg(long, value_name = "DIR")]
    log: PathBuf,
    /// The log's verifier key: the checkpoint must be signed by it, and the log page shows it
    #[arg(long, value_name = "VKEY", conflicts_with = "vkey_file")]
    vkey: Option<String>,
    /// A file holding the verifier key
    #[arg(long, value_name = "FILE")]
    vkey_file: Option<PathBuf>,
    /// The time to compute badges and reports at (RFC 3339; default: now)
    #[arg(long, value_name = "RFC3339")]
    now: Option<String>,
}

#[derive(Args)]
struct SiteArgs {
    #[command(flatten)]
    source: SiteSource,
    /// Where to write the site
    #[arg(long, value_name = "DIR", default_value = "public")]
    out: PathBuf,
    /// Where the site is served, for the links in feeds and badge snippets
    #[arg(long, value_name = "URL", default_value = "https://pinlog.local", value_parser = parse_base_url)]
    base_url: String,
}

#[derive(Args)]
struct ReportArgs {
    #[command(flatten)]
    source: SiteSource,
    /// The month, YYYY-MM
    #[arg(long, value_name = "YYYY-MM")]
    month: String,
    /// Write to this file instead of standard output
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Args)]
struct ExportArgs {
    /// The client configuration (claude_desktop_config.json, .mcp.json, .vscode/mcp.json, …)
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// Only this server (repeatable); the manifest's scope names them
    #[arg(long, value_name = "ID")]
    server: Vec<String>,
    #[command(flatten)]
    look: LookArgs,
    /// Where to write the manifest (whole or not at all)
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
}

/// How a server is looked at: by `probe` and by `export`.
#[derive(Args)]
struct LookArgs {
    /// The protocol revision to ask for: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25,
    /// 2026-07-28, or auto (try the stateless era, fall back to the handshake as the
    /// specification says)
    #[arg(long, value_name = "REV", default_value = "2025-11-25", value_parser = parse_protocol)]
    protocol: Protocol,
    /// How many times each listing is read; the manifest is complete only if all agree
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=10))]
    passes: u32,
    /// The longest wait for one answer, in milliseconds (a server's whole look gets four times
    /// this)
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    timeout_ms: u64,
    /// The longest single message a server may send, in bytes
    #[arg(long, value_name = "BYTES", default_value_t = 16 << 20)]
    max_message_bytes: usize,
    /// All bytes one server may send in one look
    #[arg(long, value_name = "BYTES", default_value_t = 256 << 20)]
    max_total_bytes: u64,
    /// The most items one listing may hold
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    max_items: usize,
}

impl LookArgs {
    fn options(&self) -> pinlog_mcp::surface::ProbeOptions {
        pinlog_mcp::surface::ProbeOptions {
            revision: self.protocol.0,
            passes: self.passes,
            ..pinlog_mcp::surface::ProbeOptions::default()
        }
    }

    fn caps(&self) -> pinlog_mcp::Caps {
        pinlog_mcp::Caps {
            call_ms: self.timeout_ms,
            session_ms: self.timeout_ms.saturating_mul(4),
            message_bytes: self.max_message_bytes,
            total_bytes: self.max_total_bytes,
            max_items: self.max_items,
            ..pinlog_mcp::Caps::default()
        }
    }
}

#[derive(Args)]
struct CrawlArgs {
    /// The SQLite store (created on first use)
    #[arg(long, value_name = "FILE", default_value = "data/log.db")]
    db: PathBuf,
    /// The log's name, for a store or key created by this run
    #[arg(long, default_value = "pinlog.local/log")]
    origin: String,
    /// A discovery source to ask (repeat for several; default: all of them)
    #[arg(long = "source", value_name = "SOURCE", value_parser = ["registry", "npm", "github", "seeds"])]
    sources: Vec<String>,
    /// The seed file: `npm:<pkg>[@ver]`, `pypi:<pkg>[==ver]`, `oci:<image>@sha256:…`, `remote:<url>`
    #[arg(long, value_name = "FILE", default_value = "data/seeds.txt")]
    seeds: PathBuf,
    /// The opt-out list, applied before any probe (a missing or unreadable list stops the run)
    #[arg(long, value_name = "FILE", default_value = "OPTOUT.txt")]
    optout: PathBuf,
    /// Look at no more than N servers in this run (never-seen and longest-unseen servers in turn)
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// How many servers are looked at at once
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=64))]
    concurrency: u16,
    /// After the run, publish the log to DIR (tiles, bundles, blobs, signed checkpoint)
    #[arg(long, value_name = "DIR", requires = "key")]
    publish: Option<PathBuf>,
    /// The signing key for --publish: created on first use (mode 0600, never in CI); its
    /// verifier key is written beside it as KEYFILE.vkey
    #[arg(long, value_name = "KEYFILE", requires = "publish")]
    key: Option<PathBuf>,
    /// Run as a daemon on this cron schedule (UTC; 5 fields: minute hour day month weekday, with
    /// weekdays 1-7 from Sunday or by name)
    #[arg(long, value_name = "CRON")]
    schedule: Option<String>,
    /// Run stdio servers WITHOUT a sandbox when bubblewrap is missing (they can then reach the
    /// network and your files as you)
    #[arg(long)]
    unsandboxed: bool,
    /// Let the SSRF guard connect to private, loopback and link-local addresses (for tests only)
    #[arg(long)]
    allow_private: bool,
    /// The MCP registry's base URL
    #[arg(
        long,
        value_name = "URL",
        default_value = "https://registry.modelcontextprotocol.io"
    )]
    registry_url: String,
    /// The npm registry (search and installs)
    #[arg(long, value_name = "URL", default_value = "https://registry.npmjs.org")]
    npm_registry: String,
    /// The PyPI simple index pip installs from
    #[arg(long, value_name = "URL", default_value = "https://pypi.org/simple")]
    pypi_index: String,
    /// The GitHub API (topic search runs only when GITHUB_TOKEN is set)
    #[arg(long, value_name = "URL", default_value = "https://api.github.com")]
    github_api: String,
    /// Where to make the private scratch directory for installs (default: the system's temp
    /// dir); it is removed when the crawl ends
    #[arg(long, value_name = "DIR")]
    work: Option<PathBuf>,
    /// The longest an install may take, in seconds
    #[arg(long, value_name = "S", default_value_t = 300)]
    install_timeout: u64,
    /// The Python that makes venvs and runs pip
    #[arg(long, value_name = "PATH", default_value = "python3")]
    python: PathBuf,
    /// The node that runs npm packages
    #[arg(long, value_name = "PATH", default_value = "node")]
    node: PathBuf,
    /// The npm that installs them
    #[arg(long, value_name = "PATH", default_value = "npm")]
    npm: PathBuf,
    /// The memory of one sandboxed server, all its processes together (cgroup; per process
    /// without one)
    #[arg(long, value_name = "BYTES", default_value_t = CrawlLimits::default().memory_bytes)]
    max_memory_bytes: u64,
    /// The processes and threads one sandboxed server may have at once
    #[arg(long, value_name = "N", default_value_t = CrawlLimits::default().processes)]
    max_processes: u64,
    /// The CPU time of each process of a sandboxed server, in seconds
    #[arg(long, value_name = "S", default_value_t = CrawlLimits::default().cpu_seconds)]
    max_cpu_seconds: u64,
    /// The size of each of a sandboxed server's tmpfs (/tmp and its home)
    #[arg(long, value_name = "BYTES", default_value_t = CrawlLimits::default().tmpfs_bytes)]
    max_tmpfs_bytes: u64,
    /// The largest file a sandboxed server may write
    #[arg(long, value_name = "BYTES", default_value_t = CrawlLimits::default().file_bytes)]
    max_file_bytes: u64,
    /// What one package may unpack when installed, all files together
    #[arg(long, value_name = "BYTES", default_value_t = CrawlLimits::default().unpacked_bytes)]
    max_unpacked_bytes: u64,
    #[command(flatten)]
    look: LookArgs,
}

impl CrawlArgs {
    fn limits(&self) -> CrawlLimits {
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
struct SandboxExecArgs {
    /// A cgroup.procs file to join (repeatable)
    #[arg(long, value_name = "FILE")]
    join: Vec<PathBuf>,
    #[arg(long, value_name = "S")]
    cpu_seconds: u64,
    #[arg(long, value_name = "BYTES")]
    file_bytes: u64,
    #[arg(long, value_name = "BYTES")]
    data_bytes: Option<u64>,
    #[arg(long, value_name = "N")]
    processes: Option<u64>,
    /// The command is bubblewrap: hand it the seccomp filters
    #[arg(long)]
    seccomp: bool,
    /// The command, after --
    #[arg(last = true, required = true)]
    command: Vec<std::ffi::OsString>,
}

#[derive(Args)]
struct ProbeArgs {
    #[command(flatten)]
    look: LookArgs,
    /// The server's id in the manifest
    #[arg(long)]
    id: Option<String>,
    /// Write the manifest to this file (whole or not at all) instead of standard output
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// A header sent with every HTTP request, `Name: value` (repeatable)
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url")]
    headers: Vec<String>,
    /// The server's Streamable HTTP endpoint (http:// or https://)
    #[arg(
        value_name = "URL",
        required_unless_present = "command",
        conflicts_with = "command"
    )]
    url: Option<String>,
    /// The server's command and its arguments, run over stdio
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

#[derive(Subcommand)]
enum LogCommand {
    /// Create the log store and its signing key (if absent), and print the public key
    ///
    /// The key file is created with mode 0600 and never when the CI environment variable is set.
    Init(InitArgs),
    /// Append one entry (canonical JSON, docs/SPEC-log.md) and its surface blob
    Append(AppendArgs),
    /// Write the log as C2SP tlog-tiles to a directory and sign a checkpoint for it
    ///
    /// Tiles, bundles and blobs are written first and the checkpoint last, each whole or not at
    /// all. Refuses (exit 1) to sign a tree that does not extend the last checkpoint signed.
    Publish(PublishArgs),
    /// Print the c2sp.org/tlog-proof@v1 inclusion receipt of one entry of a published log
    Prove(ProveArgs),
}

#[derive(Args)]
struct InitArgs {
    /// The SQLite store to create (or open)
    #[arg(long, value_name = "FILE", default_value = "data/log.db")]
    db: PathBuf,
    /// The log's name, as checkpoints carry it: a URL without scheme, e.g. example.com/pinlog
    #[arg(long)]
    origin: String,
    /// The signing key file: read if present, else created
    #[arg(long, value_name = "KEYFILE")]
    key: PathBuf,
}

#[derive(Args)]
struct AppendArgs {
    /// The SQLite store
    #[arg(long, value_name = "FILE", default_value = "data/log.db")]
    db: PathBuf,
    /// The entry: canonical JSON, at most 65535 bytes
    #[arg(value_name = "ENTRY.json")]
    entry: PathBuf,
    /// The surface the entry's `blob` names, if the store does not hold it yet
    #[arg(long, value_name = "SURFACE.json")]
    blob: Option<PathBuf>,
}

#[derive(Args)]
struct PublishArgs {
    /// The SQLite store
    #[arg(long, value_name = "FILE", default_value = "data/log.db")]
    db: PathBuf,
    /// The signing key file
    #[arg(long, value_name = "KEYFILE")]
    key: PathBuf,
    /// The directory to publish to
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

#[derive(Args)]
struct ProveArgs {
    /// The published log directory
    #[arg(long, value_name = "DIR")]
    dir: PathBuf,
    /// The entry's index
    #[arg(long, value_name = "N")]
    index: u64,
    /// Write the receipt to this file instead of standard output
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Args)]
struct InputArgs {
    /// The JSON file to read; `-` or nothing reads standard input
    #[arg(value_name = "FILE|-")]
    file: Option<PathBuf>,
    /// Refuse a document larger than this many bytes
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 30)]
    max_bytes: usize,
    /// Write every non-ASCII character of names and messages as <U+XXXX>
    #[arg(long)]
    ascii: bool,
}

#[derive(Args)]
struct CanonArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Write the canonical bytes to this file (whole or not at all) instead of standard output
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Args)]
struct DigestArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Read a JSON array of tools or prompts and print each digest and the set hash
    #[arg(long)]
    listing: bool,
}

/// `export` and the gate's commands also take their long flags with one dash, as other pinning
/// tools spell them (`-config`, `-lock`, `-fail-on`, …).
fn one_dash_flags(args: impl Iterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    const EXPORT: &[(&str, bool)] = &[
        ("-config", true),
        ("-server", true),
        ("-protocol", true),
        ("-passes", true),
    ];
    let args: Vec<_> = args.collect();
    match args.get(1).and_then(|a| a.to_str()) {
        Some("export") => pinlog_gate::cli::one_dash(args, EXPORT),
        Some(command) => match pinlog_gate::cli::flags_of(command) {
            Some(flags) => pinlog_gate::cli::one_dash(args, flags),
            None => args,
        },
        None => args,
    }
}

/// A revision to ask for, or none for auto.
#[derive(Clone, Copy)]
struct Protocol(Option<pinlog_mcp::revision::Revision>);

/// An absolute http(s) URL: feeds need absolute ids and links.
fn parse_base_url(s: &str) -> Result<String, String> {
    let rest = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"));
    match rest {
        Some(r)
            if !r.is_empty() && !r.starts_with('/') && s.bytes().all(|b| b.is_ascii_graphic()) =>
        {
            Ok(s.to_string())
        }
        _ => Err("the base URL must be absolute, http:// or https://, without spaces".into()),
    }
}

fn parse_protocol(s: &str) -> Result<Protocol, String> {
    match s {
        "auto" => Ok(Protocol(None)),
        rev => rev
            .parse()
            .map(|r| Protocol(Some(r)))
            .map_err(|e| format!("{e}, or auto")),
    }
}

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

impl InputArgs {
    fn limits(&self) -> Limits {
        Limits::with_max_bytes(self.max_bytes)
    }

    fn render(&self) -> Render {
        Render { ascii: self.ascii }
    }
}

/// The proxy runs for as long as a client keeps a server, one per server, so its allocator should
/// commit memory as it is used rather than an arena at a time: about half the resident memory
/// (docs/BENCHMARKS.md). mimalloc reads that option at its first allocation, before `main`, so
/// the proxy starts itself once more with the option in its environment (an exec: same process,
/// same pid). The server it runs gets the environment the client gave (see
/// `pinlog_proxy::stdio::LEAN_MARKER`).
#[cfg(unix)]
fn lean_allocator_for_the_proxy() {
    use std::os::unix::process::CommandExt;
    const OPTION: &str = "MIMALLOC_ARENA_EAGER_COMMIT";
    let is_proxy = std::env::args_os().nth(1).is_some_and(|a| a == "proxy");
    if !is_proxy || std::env::var_os(OPTION).is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_default();
    // Returns only if the exec failed; the proxy then runs as it is.
    let _ = std::process::Command::new(exe)
        .arg0(argv0)
        .args(args)
        .env(OPTION, "0")
        .env(pinlog_proxy::stdio::LEAN_MARKER, "1")
        .exec();
}

#[cfg(not(unix))]
fn lean_allocator_for_the_proxy() {}

fn main() -> ExitCode {
    lean_allocator_for_the_proxy();
    let cli = Cli::parse_from(one_dash_flags(std::env::args_os()));
    let (render, outcome) = match cli.command {
        Command::Canon(args) => {
            let render = args.input.render();
            (render, cli::canon::run(args, render))
        }
        Command::Digest(args) => {
            let render = args.input.render();
            (render, cli::digest::run(args, render))
        }
        Command::Log(command) => {
            let outcome = match command {
                LogCommand::Init(args) => cli::log::init(args),
                LogCommand::Append(args) => cli::log::append(args),
                LogCommand::Publish(args) => cli::log::publish(args),
                LogCommand::Prove(args) => cli::log::prove(args),
            };
            (Render { ascii: false }, outcome)
        }
        Command::VerifyLog(args) => (
            Render { ascii: false },
            pinlog_verifier::command::verify_log_command(&args.options()),
        ),
        Command::Proxy(args) => return ExitCode::from(cli::proxy::proxy(args)),
        Command::Pins(args) => (Render { ascii: false }, cli::pins::pins(args)),
        Command::Review(args) => (Render { ascii: false }, cli::pins::review(args)),
        Command::Approve(args) => (Render { ascii: false }, cli::pins::approve(args)),
        Command::Forget(args) => (Render { ascii: false }, cli::pins::forget(args)),
        Command::Audit => (Render { ascii: false }, cli::pins::audit()),
        Command::Wrap(args) => (Render { ascii: false }, cli::wrap::wrap(args)),
        Command::Unwrap(args) => (Render { ascii: false }, cli::wrap::unwrap(args)),
        Command::Demo(args) => (Render { ascii: false }, cli::demo::demo(args)),
        Command::Lookup(args) => return ExitCode::from(pinlog_proxy::lookup::cli::lookup(args)),
        Command::Policy(args) => (Render { ascii: false }, cli::policy::policy(args)),
        Command::Lock(args) => match args.options() {
            Some(options) => (Render { ascii: false }, gate::lock(&options)),
            None => (Render { ascii: false }, cli::lock_check::run(args)),
        },
        Command::Verify(args) => (Render { ascii: false }, gate::verify(&args.options())),
        Command::Key(args) => (Render { ascii: false }, gate::key(&args.output)),
        Command::Sign(args) => (Render { ascii: false }, gate::sign(&args.lock, &args.key)),
        Command::Probe(args) => (Render { ascii: false }, cli::probe::run(args)),
        Command::Export(args) => (Render { ascii: false }, cli::export::run(args)),
        Command::Crawl(args) => (Render { ascii: false }, cli::crawl::run(*args)),
        Command::SandboxExec(args) => {
            let confinement = pinlog_crawler::confine::Confinement {
                join: args.join,
                cpu_seconds: args.cpu_seconds,
                file_bytes: args.file_bytes,
                data_bytes: args.data_bytes,
                processes: args.processes,
                seccomp: args.seccomp,
            };
            eprintln!("pinlog sandbox-exec: {}", confinement.exec(&args.command));
            return ExitCode::from(126);
        }
        Command::Site(SiteCommand::Build(args)) => {
            (Render { ascii: false }, cli::site::build(args))
        }
        Command::Report(ReportCommand::Month(args)) => {
            (Render { ascii: false }, cli::site::report(args))
        }
    };
    match outcome {
        Ok(exit) => exit.into(),
        Err(failure) => {
            render.error(&failure.message);
            failure.exit.into()
        }
    }
}
