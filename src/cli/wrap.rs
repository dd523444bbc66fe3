//! `pinlog wrap` and `pinlog unwrap`. Exit codes (docs/WRAP.md): 0 done (or nothing to do), 2 the
//! command line is wrong, 4 a configuration file could not be read, parsed or written (the others
//! are still processed), or no backup could be made.

use std::path::PathBuf;

use clap::Args;
use pinlog_clients::wrap::clients::{Client, Env};
use pinlog_clients::wrap::command::{default_program, Proxy};
use pinlog_clients::wrap::{self, Op, Options};
use pinlog_core::exit::{Exit, Failure};
use pinlog_core::render::safe;

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

fn options(
    clients: Vec<Client>,
    configs: Vec<PathBuf>,
    project: bool,
    dry_run: bool,
    proxy: Proxy,
) -> Result<Options, Failure> {
    let data_dir = pinlog_core::data_dir::data_dir()
        .ok_or_else(|| Failure::unreadable("no data directory: set PINLOG_HOME"))?;
    Ok(Options {
        clients,
        configs,
        project,
        proxy,
        dry_run,
        data_dir,
    })
}

fn finish(op: Op, opts: Options) -> Result<Exit, Failure> {
    let env = Env::from_process().map_err(Failure::unreadable)?;
    let report = wrap::run(op, &opts, &env);
    print!("{}", report.render());
    match report.exit() {
        Exit::Ok => Ok(Exit::Ok),
        exit => Err(Failure::new(
            exit,
            "a configuration file was left untouched (see above); the others were processed",
        )),
    }
}

/// `wrap`.
pub fn wrap(args: WrapArgs) -> Result<Exit, Failure> {
    let lock = match &args.lock {
        None => None,
        Some(l) => {
            if !l.is_file() {
                return Err(Failure::usage(format!(
                    "the lockfile {} is not a file: every wrapped server would fail to start",
                    safe(&l.display().to_string())
                )));
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
    let opts = options(
        args.clients,
        args.configs,
        args.project,
        args.dry_run,
        proxy,
    )?;
    finish(Op::Wrap, opts)
}

/// `unwrap`.
pub fn unwrap(args: UnwrapArgs) -> Result<Exit, Failure> {
    let proxy = Proxy {
        program: default_program(),
        lock: None,
        others: args.pinlog.into_iter().collect(),
    };
    let opts = options(
        args.clients,
        args.configs,
        args.project,
        args.dry_run,
        proxy,
    )?;
    finish(Op::Unwrap, opts)
}
