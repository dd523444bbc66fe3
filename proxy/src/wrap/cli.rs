//! `pinlog wrap` and `pinlog unwrap` as the binary offers them. Exit codes (docs/WRAP.md): 0 done
//! (or nothing to do), 2 the command line is wrong, 4 a configuration file could not be read,
//! parsed or written (the others are still processed), or no backup could be made.

use std::path::{Path, PathBuf};

use clap::Args;
use pinlog_core::render::safe;

use super::clients::{Client, Env};
use super::command::Proxy;
use super::{Op, Options, EXIT_UNREADABLE, EXIT_USAGE};
use crate::store::Store;

#[derive(Args, Debug, Clone)]
pub struct WrapArgs {
    /// Only this client's configuration (repeatable) [default: every client's, unless --config
    /// is given]
    #[arg(long = "client", value_enum, value_name = "NAME")]
    pub clients: Vec<Client>,
    /// A configuration file to wrap (repeatable): JSON with `mcpServers`, `servers` or
    /// `projects.*.mcpServers`, or TOML with `[mcp_servers.*]`
    #[arg(long = "config", value_name = "FILE")]
    pub configs: Vec<PathBuf>,
    /// Also the project's .mcp.json in the current directory
    #[arg(long)]
    pub project: bool,
    /// A team lockfile every wrapped server is held to (written as an absolute path)
    #[arg(long, value_name = "FILE")]
    pub lock: Option<PathBuf>,
    /// Show each server that would change, its command line before and after (secrets masked),
    /// and write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// The pinlog command to write in front of each server [default: this pinlog's absolute
    /// path, as found on PATH when it is there]
    #[arg(long, value_name = "PATH")]
    pub pinlog: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct UnwrapArgs {
    /// Only this client's configuration (repeatable) [default: every client's, unless --config
    /// is given]
    #[arg(long = "client", value_enum, value_name = "NAME")]
    pub clients: Vec<Client>,
    /// A configuration file to unwrap (repeatable)
    #[arg(long = "config", value_name = "FILE")]
    pub configs: Vec<PathBuf>,
    /// Also the project's .mcp.json in the current directory
    #[arg(long)]
    pub project: bool,
    /// Show each server that would change, its command line before and after (secrets masked),
    /// and write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// A pinlog command a `wrap --pinlog PATH` wrote, when the backups do not record it (they
    /// were made with another data directory)
    #[arg(long, value_name = "PATH")]
    pub pinlog: Option<String>,
}

/// Whether `a` and `b` are the same file.
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The pinlog program to write: the `pinlog` found on PATH when it is this very binary (its
/// PATH location survives upgrades that move the binary behind a link), else this binary's
/// absolute path, else plain `pinlog`. Clients started from a desktop often do not have the
/// shell's PATH, so a bare name is the last resort.
pub fn default_program() -> String {
    let Ok(exe) = std::env::current_exe() else {
        return "pinlog".into();
    };
    let name = if cfg!(windows) {
        "pinlog.exe"
    } else {
        "pinlog"
    };
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path).filter(|d| d.is_absolute()) {
            let candidate = dir.join(name);
            if candidate.is_file() && same_file(&candidate, &exe) {
                return candidate.to_string_lossy().into_owned();
            }
        }
    }
    exe.to_string_lossy().into_owned()
}

fn options(
    clients: Vec<Client>,
    configs: Vec<PathBuf>,
    project: bool,
    dry_run: bool,
    proxy: Proxy,
) -> Result<Options, (u8, String)> {
    let data_dir = Store::home().map_err(|e| (EXIT_UNREADABLE, e.to_string()))?;
    Ok(Options {
        clients,
        configs,
        project,
        proxy,
        dry_run,
        data_dir,
    })
}

fn finish(op: Op, opts: Result<Options, (u8, String)>) -> u8 {
    let run = || -> Result<u8, (u8, String)> {
        let opts = opts?;
        let env = Env::from_process().map_err(|e| (EXIT_UNREADABLE, e))?;
        let report = super::run(op, &opts, &env);
        print!("{}", report.render());
        let code = report.exit_code();
        if code != 0 {
            eprintln!(
                "pinlog: error: a configuration file was left untouched (see above); the others \
                 were processed"
            );
        }
        Ok(code)
    };
    match run() {
        Ok(code) => code,
        Err((code, message)) => {
            eprintln!("pinlog: error: {}", safe(&message));
            code
        }
    }
}

/// `wrap`. Returns the exit code.
pub fn wrap(args: WrapArgs) -> u8 {
    let lock = match &args.lock {
        None => None,
        Some(l) => {
            if !l.is_file() {
                eprintln!(
                    "pinlog: error: the lockfile {} is not a file: every wrapped server would \
                     fail to start",
                    safe(&l.display().to_string())
                );
                return EXIT_USAGE;
            }
            // The client starts the server from a directory of its own: the path must not
            // depend on where wrap ran.
            let abs = std::path::absolute(l).unwrap_or_else(|_| l.clone());
            Some(abs.to_string_lossy().into_owned())
        }
    };
    let proxy = Proxy {
        program: args.pinlog.clone().unwrap_or_else(default_program),
        lock,
        others: Vec::new(),
    };
    finish(
        Op::Wrap,
        options(
            args.clients,
            args.configs,
            args.project,
            args.dry_run,
            proxy,
        ),
    )
}

/// `unwrap`. Returns the exit code.
pub fn unwrap(args: UnwrapArgs) -> u8 {
    let proxy = Proxy {
        program: default_program(),
        lock: None,
        others: args.pinlog.into_iter().collect(),
    };
    finish(
        Op::Unwrap,
        options(
            args.clients,
            args.configs,
            args.project,
            args.dry_run,
            proxy,
        ),
    )
}
