//! `pinlog proxy`. Its errors are written `pinlog: error:` because the proxy shares standard
//! error with the server it runs. Exit codes (docs/PROXY.md): the server's status when the
//! session ran, 1 when it blocked on drift, 2 for a wrong command line, 4 when the surface could
//! not be checked or the pin store cannot be read.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use pinlog_core::render::safe;
use pinlog_proxy::options::ProxyOptions;
use pinlog_proxy::run::run;
use pinlog_proxy::session::OnDrift;

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

impl ProxyArgs {
    fn options(self) -> ProxyOptions {
        ProxyOptions {
            name: self.name,
            lock: self.lock,
            only_locked: self.only_locked,
            on_drift: match self.on_drift {
                DriftMode::Block => OnDrift::Block,
                DriftMode::Hold => OnDrift::Hold,
            },
            listen: self.listen,
            upstream: self.upstream,
            command: self.command,
        }
    }
}

/// `proxy`: runs one session; the process exit code.
pub fn proxy(args: ProxyArgs) -> u8 {
    match run(&args.options()) {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("pinlog: error: {}", safe(&failure.message));
            failure.exit.code()
        }
    }
}
