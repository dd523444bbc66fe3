//! The `pinlog` command line: parses arguments, calls a crate, renders the result, exits.

mod cli;

mod io;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use pinlog_gate::commands as gate;

use crate::cli::canon::CanonArgs;
use crate::cli::crawl::{CrawlArgs, CrawlWorkerArgs, SandboxExecArgs};
use crate::cli::digest::DigestArgs;
use crate::cli::export::ExportArgs;
use crate::cli::log::LogCommand;
use crate::cli::probe::ProbeArgs;
use crate::cli::site::{ReportCommand, SiteCommand};

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
    /// Verify a public log where it is served (a URL) or a copy of it (a directory), or one
    /// inclusion receipt
    ///
    /// Checks the checkpoint's signature against the key you pin (never one shipped beside the
    /// data), the witness quorum, every entry, tile and the root, and pinlog's entry rules. A URL
    /// is read over HTTP(S), checkpoint first; a directory is read offline. With --state FILE,
    /// the next run proves the log only grew (a rollback or a fork fails) and reads what was
    /// added.
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
    /// With --log, each server whose package the manifest records is also looked up in the
    /// public log (verified first) and said to match it, differ from it, or not be in it, after
    /// the report; that never changes the exit code.
    Verify(cli::verify::PinlogVerifyArgs),
    /// Make an Ed25519 key pair for signing lockfiles: FILE (PKCS#8 PEM) and FILE.pub (SPKI PEM)
    Key(pinlog_gate::cli::KeyArgs),
    /// Sign a lockfile: writes LOCK.sig, a detached Ed25519 envelope over its canonical form
    ///
    /// Re-indenting the lockfile keeps the signature valid; changing any value breaks it. Keys
    /// from `pinlog key` or `openssl genpkey -algorithm ed25519` work. See docs/GATE.md.
    Sign(pinlog_gate::cli::SignArgs),
    /// Run an MCP server behind a proxy that holds every client byte until its surface matches
    ///
    /// Starts the server's command, given after -- or from the first argument that is not an
    /// option (or, with --listen and --upstream, serves Streamable HTTP on a loopback address in
    /// front of an HTTP server), queues everything the client sends, lists
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
    /// Approve a server's pending change (all of it, or the tools named), once a person confirms
    ///
    /// On a terminal, shows the change (its labels and the review, field by field) and a code of
    /// 6 characters derived from exactly that change; only typing the code approves. An empty
    /// answer, the end of input, "y" or anything else approves nothing (exit 1), and so does a
    /// change replaced while the question was open. Without a terminal, approve refuses (exit 2)
    /// unless given --yes, which approves unseen, for scripts a person runs.
    ///
    /// What this stops: an approval nobody looked at (a blind "y", a newline, `yes |`). What it
    /// cannot stop: a process that can read the terminal and type into it, which to pinlog is the
    /// person, or one that passes --yes. Where agents run a shell as the same user, turn on the
    /// signed-lockfile mode: put the approvers' public keys in the file `approvers` in the pinlog
    /// home. Then approve refuses, --yes too, and the proxy runs a server only under a lockfile
    /// one of those keys signed (docs/PROXY.md, "Approving a change").
    ///
    /// Exit: 0 approved; 1 not confirmed, nothing approved; 2 the server named matches none or
    /// several, no terminal and no --yes, or approvals come only from a signed lockfile; 4 the
    /// store or the approvers file cannot be read.
    Approve(cli::pins::ApproveArgs),
    /// Forget a server's pin: the next session pins afresh (on a terminal, after the code shown)
    Forget(cli::pins::ForgetArgs),
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
    Lookup(cli::lookup::LookupArgs),
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
    /// Take looks from a crawl coordinator's queue (`crawl --queue`) and report what each found
    ///
    /// Connects to the NATS JetStream server at --queue, takes one job per look, installs and
    /// runs each server exactly as `crawl` does (bubblewrap, caps, the SSRF guard), and puts the
    /// result on the results stream, for the coordinator to apply. Holds no store and no key.
    /// Runs until stopped; any number may run, on any machines. See docs/OPERATIONS.md.
    CrawlWorker(Box<CrawlWorkerArgs>),
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

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The proxy runs for as long as a client keeps a server, one per server, so its allocator should
/// commit memory as it is used rather than an arena at a time (about half the resident memory,
/// docs/BENCHMARKS.md), and give freed memory back at once (a flood's peak halves, docs/PROXY.md).
/// mimalloc reads its options at its first allocation, before `main`, so the proxy starts itself
/// once more with them in its environment (an exec: same process, same pid). A user who set any
/// of them keeps their own. The server it runs gets the environment the client gave (see
/// `pinlog_proxy::stdio::LEAN_MARKER`).
#[cfg(unix)]
fn lean_allocator_for_the_proxy() {
    use pinlog_proxy::stdio::{LEAN_MARKER, LEAN_OPTIONS};
    use std::os::unix::process::CommandExt;
    let is_proxy = std::env::args_os().nth(1).is_some_and(|a| a == "proxy");
    let chosen = LEAN_OPTIONS
        .iter()
        .any(|(name, _)| std::env::var_os(name).is_some());
    if !is_proxy || chosen || std::env::var_os(LEAN_MARKER).is_some() {
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
        .envs(LEAN_OPTIONS)
        .env(LEAN_MARKER, "1")
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
                LogCommand::Mirror(args) => cli::log::mirror(args),
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
        Command::Lookup(args) => (Render { ascii: false }, cli::lookup::lookup(args)),
        Command::Policy(args) => (Render { ascii: false }, cli::policy::policy(args)),
        Command::Lock(args) => match args.options() {
            Some(options) => (Render { ascii: false }, gate::lock(&options)),
            None => (Render { ascii: false }, cli::lock_check::run(args)),
        },
        Command::Verify(args) => (Render { ascii: false }, cli::verify::run(args)),
        Command::Key(args) => (Render { ascii: false }, gate::key(&args.output)),
        Command::Sign(args) => (Render { ascii: false }, gate::sign(&args.lock, &args.key)),
        Command::Probe(args) => (Render { ascii: false }, cli::probe::run(args)),
        Command::Export(args) => (Render { ascii: false }, cli::export::run(args)),
        Command::Crawl(args) => (Render { ascii: false }, cli::crawl::run(*args)),
        Command::CrawlWorker(args) => (Render { ascii: false }, cli::crawl::worker(*args)),
        Command::SandboxExec(args) => return ExitCode::from(cli::crawl::sandbox_exec(args)),
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
