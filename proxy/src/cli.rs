//! The proxy's commands as the `pinlog` binary offers them: `proxy`, `pins`, `review`,
//! `approve`, `forget`, `audit`. Exit codes (docs/PROXY.md): the proxy exits with the server's
//! status when the session ran, 1 when it blocked on drift, 2 for a wrong command line, 4 when
//! the surface could not be checked or the pin store cannot be read.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use pinlog_core::render::safe;

use crate::commands;
use crate::launch;
use crate::pins::{LockPins, StorePins};
use crate::session::OnDrift;
use crate::stdio::{self, Ended, StdioOptions};
use crate::store::{ServerKey, Store};

const EXIT_USAGE: u8 = 2;
const EXIT_UNREADABLE: u8 = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DriftMode {
    /// Nothing more reaches the server; every request is answered with an error
    Block,
    /// Changed and new tools and prompts are hidden and refused; the rest works
    Hold,
}

#[derive(Args, Debug)]
pub struct ProxyArgs {
    /// What people see the server called [default: the command's file name]
    #[arg(long, value_name = "LABEL")]
    pub name: Option<String>,
    /// A team lockfile: the server it names --name is held to it instead of a first-use pin
    #[arg(long, value_name = "FILE", requires = "name")]
    pub lock: Option<PathBuf>,
    /// With --lock: refuse a server the lockfile does not name, instead of pinning it on first use
    #[arg(long, requires = "lock")]
    pub only_locked: bool,
    /// What to do when the surface departs from what was approved
    #[arg(long, value_enum, default_value = "block")]
    pub on_drift: DriftMode,
    /// Serve Streamable HTTP on this loopback address (127.0.0.1:PORT), in front of --upstream
    #[arg(long, value_name = "ADDR", requires = "upstream")]
    pub listen: Option<std::net::SocketAddr>,
    /// The server's Streamable HTTP endpoint, with --listen (instead of a command)
    #[arg(
        long,
        value_name = "URL",
        requires = "listen",
        conflicts_with = "command"
    )]
    pub upstream: Option<String>,
    /// The server's command and its arguments, after --
    #[arg(
        last = true,
        required_unless_present = "upstream",
        value_name = "COMMAND"
    )]
    pub command: Vec<OsString>,
}

/// What people see a server called when no --name is given: the command's file name, and for an
/// interpreter or a runner the first argument that is not a flag.
fn default_label(argv: &[OsString]) -> String {
    let base = |a: &OsString| {
        Path::new(a).file_name().map_or_else(
            || a.to_string_lossy().into_owned(),
            |f| f.to_string_lossy().into_owned(),
        )
    };
    let Some(program) = argv.first() else {
        return String::new();
    };
    let name = base(program);
    const RUNNERS: [&str; 8] = [
        "node", "python", "python3", "npx", "uvx", "uv", "deno", "bun",
    ];
    if RUNNERS.contains(&name.as_str()) {
        if let Some(arg) = argv[1..]
            .iter()
            .find(|a| !a.to_string_lossy().starts_with('-'))
        {
            return format!("{name} {}", base(arg));
        }
    }
    name
}

fn open_store() -> Result<Store, (u8, String)> {
    let home = Store::home().map_err(|e| (EXIT_UNREADABLE, e.to_string()))?;
    Store::open(&home).map_err(|e| (EXIT_UNREADABLE, e.to_string()))
}

/// `proxy`: runs one session. Returns the exit code.
pub fn proxy(args: ProxyArgs) -> u8 {
    match run_proxy(args) {
        Ok(code) => code,
        Err((code, message)) => {
            eprintln!("pinlog: error: {}", safe(&message));
            code
        }
    }
}

fn run_proxy(args: ProxyArgs) -> Result<u8, (u8, String)> {
    if let Some(upstream) = &args.upstream {
        return crate::http::run_cli(&args, upstream);
    }
    let label = args
        .name
        .clone()
        .unwrap_or_else(|| default_label(&args.command));
    // A store that cannot be read stops the proxy before the server starts: it never re-trusts.
    let store = open_store()?;
    let key = ServerKey::from_argv(&args.command);
    // So does a pin that does not read back.
    if let Err(e) = store.pinned(&key) {
        return Err((
            EXIT_UNREADABLE,
            format!("{e}; the server was not started (`pinlog forget {key}` drops the pin)"),
        ));
    }
    let store_pins = StorePins {
        store,
        key,
        label: label.clone(),
    };
    let on_drift = match args.on_drift {
        DriftMode::Block => OnDrift::Block,
        DriftMode::Hold => OnDrift::Hold,
    };
    let options = StdioOptions {
        argv: args.command.clone(),
        label: label.clone(),
        on_drift,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| (EXIT_UNREADABLE, format!("cannot start the runtime: {e}")))?;
    let ended = match &args.lock {
        Some(path) => {
            let lock = pinlog_core::files::read_bounded(path, 64 << 20).map_err(|e| {
                (
                    EXIT_UNREADABLE,
                    format!("cannot read the lockfile {}: {e}", path.display()),
                )
            })?;
            let read = pinlog_core::lockfile::Lockfile::read(&lock).map_err(|e| {
                (
                    EXIT_UNREADABLE,
                    format!("the lockfile {}: {e}", path.display()),
                )
            })?;
            // The lock pins what runs, too: a runner's package goes to the locked version.
            let package = read.server(&label).and_then(|s| s.package.clone());
            let mut options = options;
            if let Some(package) = package {
                let launch =
                    launch::pinned(&options.argv, &package).map_err(|e| (EXIT_USAGE, e))?;
                if let Some(note) = launch.note {
                    eprintln!("pinlog: {}", safe(&note));
                }
                options.argv = launch.argv;
            }
            // A server the lock does not name is refused before it runs, with --only-locked.
            if args.only_locked && read.server(&label).is_none() {
                return Err((
                    EXIT_UNREADABLE,
                    format!(
                        "the lockfile {} does not name the server {} and --only-locked is set; \
                         the server was not started",
                        path.display(),
                        pinlog_core::render::quoted(&label, 64)
                    ),
                ));
            }
            let pins = LockPins {
                lock,
                lock_path: path.display().to_string(),
                id: label,
                fallback: (!args.only_locked).then_some(store_pins),
            };
            runtime.block_on(stdio::run(options, pins))
        }
        None => runtime.block_on(stdio::run(options, store_pins)),
    }
    .map_err(|e| (EXIT_UNREADABLE, e))?;
    Ok(match ended {
        Ended::Served(status) => u8::try_from(status).unwrap_or(1),
        Ended::Blocked => 1,
        Ended::Unchecked => EXIT_UNREADABLE,
    })
}

#[derive(Args, Debug)]
pub struct PinsArgs {
    /// One server (its key, a unique prefix of 6 or more, or its label): its pending change too
    #[arg(long, value_name = "SERVER")]
    pub server: Option<String>,
    /// Write every non-ASCII character as <U+XXXX>
    #[arg(long)]
    pub ascii: bool,
}

#[derive(Args, Debug)]
pub struct ServerArg {
    /// The server: its key, a unique prefix of 6 or more, or its label
    #[arg(value_name = "SERVER")]
    pub server: String,
    /// Write every non-ASCII character as <U+XXXX>
    #[arg(long)]
    pub ascii: bool,
}

#[derive(Args, Debug)]
pub struct ApproveArgs {
    /// The server: its key, a unique prefix of 6 or more, or its label
    #[arg(value_name = "SERVER")]
    pub server: String,
    /// Approve only these pending tools [default: everything pending]
    #[arg(value_name = "TOOL")]
    pub tools: Vec<String>,
    /// Approve without a terminal (for scripts a person runs); otherwise approve refuses to run
    /// unless standard input is a terminal, so that an agent with a shell cannot approve
    #[arg(long)]
    pub yes: bool,
    /// Write every non-ASCII character as <U+XXXX>
    #[arg(long)]
    pub ascii: bool,
}

fn with_store(f: impl FnOnce(&Store) -> Result<(String, u8), commands::CommandError>) -> u8 {
    let store = match Store::home().and_then(|h| Store::open_existing(&h)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("pinlog: error: {}", safe(&e.to_string()));
            return EXIT_UNREADABLE;
        }
    };
    match f(&store) {
        Ok((text, code)) => {
            print!("{text}");
            code
        }
        Err(e) => {
            eprintln!("pinlog: error: {}", safe(&e.to_string()));
            e.exit_code()
        }
    }
}

pub fn pins(args: PinsArgs) -> u8 {
    with_store(|s| commands::pins(s, args.server.as_deref(), args.ascii).map(|t| (t, 0)))
}

pub fn review(args: ServerArg) -> u8 {
    with_store(|s| commands::review(s, &args.server, args.ascii))
}

pub fn approve(args: ApproveArgs) -> u8 {
    use std::io::IsTerminal;
    if !args.yes && !std::io::stdin().is_terminal() {
        eprintln!(
            "pinlog: error: approve is a person's decision: run it in a terminal after `pinlog \
             review`, or pass --yes"
        );
        return 2;
    }
    with_store(|s| commands::approve(s, &args.server, &args.tools, args.ascii).map(|t| (t, 0)))
}

pub fn forget(args: ServerArg) -> u8 {
    with_store(|s| commands::forget(s, &args.server, args.ascii).map(|t| (t, 0)))
}

pub fn audit() -> u8 {
    with_store(|s| commands::audit(s).map(|t| (t, 0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_names_the_script_a_runner_runs() {
        let argv = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            default_label(&argv(&["node", "/srv/weather.js", "stdio"])),
            "node weather.js"
        );
        assert_eq!(
            default_label(&argv(&["npx", "-y", "@scope/pkg"])),
            "npx pkg"
        );
        assert_eq!(
            default_label(&argv(&["/usr/bin/mcp-server-time"])),
            "mcp-server-time"
        );
    }
}
