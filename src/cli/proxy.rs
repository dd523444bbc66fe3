//! `pinlog proxy`. Its errors are written `pinlog: error:` because the proxy shares standard
//! error with the server it runs. Exit codes (docs/PROXY.md): the server's status when the
//! session ran, 1 when it blocked on drift, 2 for a wrong command line, 4 when the surface could
//! not be checked or the pin store cannot be read.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use pinlog_core::exit::Failure;
use pinlog_core::render::safe;
use pinlog_proxy::options::ProxyOptions;
use pinlog_proxy::run::run;
use pinlog_proxy::session::{OnDrift, OnPublicMismatch};
use pinlog_proxy::store::Store;
use pinlog_verifier::cli::{PublicLogArgs, UnavailableMode};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DriftMode {
    /// Nothing more reaches the server; every request is answered with an error
    Block,
    /// Changed and new tools and prompts are hidden and refused; the rest works
    Hold,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PublicMode {
    /// Say so, and go on as without the public log
    Warn,
    /// Hide what differs from the public surface; on first use, pin nothing
    Hold,
    /// Block the session; on first use, pin nothing
    Block,
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
    /// The public log to compare with (without --log, the one the pinlog home's `public-log`
    /// setting names): verified before use, then compared with what is served on first use and
    /// on a change (docs/PROXY.md)
    #[command(flatten)]
    pub public: PublicLogArgs,
    /// What to do when the surface differs from the public record
    #[arg(long, value_enum, default_value = "warn")]
    pub on_public_mismatch: PublicMode,
    /// The server's command and its arguments: after --, or from the first argument that is
    /// not an option (everything from there on is the server's, its own flags included)
    // Without `--` as well, because some launchers (the MCP Inspector's command line) swallow it.
    #[arg(
        trailing_var_arg = true,
        required_unless_present = "upstream",
        value_name = "COMMAND"
    )]
    pub command: Vec<OsString>,
}

impl ProxyArgs {
    fn options(self) -> Result<ProxyOptions, Failure> {
        let home = Store::home().ok();
        let public_log = match self.public.public_log_or_home(home.as_deref()) {
            Ok(log) => log,
            // A setting that breaks its rules is a log that cannot be used.
            Err(f) if self.public.on_public_unavailable == Some(UnavailableMode::Block) => {
                return Err(f)
            }
            Err(f) => {
                eprintln!(
                    "pinlog: {}; pinning as without the public log",
                    safe(&f.message)
                );
                None
            }
        };
        Ok(ProxyOptions {
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
            public_log,
            on_public_mismatch: match self.on_public_mismatch {
                PublicMode::Warn => OnPublicMismatch::Warn,
                PublicMode::Hold => OnPublicMismatch::Hold,
                PublicMode::Block => OnPublicMismatch::Block,
            },
        })
    }
}

/// `proxy`: runs one session; the process exit code.
pub fn proxy(args: ProxyArgs) -> u8 {
    match args.options().and_then(|o| run(&o)) {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("pinlog: error: {}", safe(&failure.message));
            failure.exit.code()
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::{Args, Parser};
    use pinlog_clients::wrapped::{is_pinlog_name, WrappedCommand, VALUED};

    use super::ProxyArgs;

    #[derive(Parser)]
    struct Proxy {
        #[command(flatten)]
        args: ProxyArgs,
    }

    fn parse(args: &[&str]) -> Result<ProxyArgs, clap::Error> {
        Proxy::try_parse_from(std::iter::once("proxy").chain(args.iter().copied())).map(|p| p.args)
    }

    /// The reader of wrapped command lines in client configurations skips the values of exactly
    /// the options that take one here.
    #[test]
    fn the_wrapped_command_reader_knows_every_option_that_takes_a_value() {
        let command = ProxyArgs::augment_args(clap::Command::new("proxy"));
        let mut valued: Vec<String> = command
            .get_arguments()
            .filter(|a| a.get_action().takes_values())
            .flat_map(|a| {
                let aliases = a.get_all_aliases().unwrap_or_default();
                a.get_long().into_iter().chain(aliases)
            })
            .map(|l| format!("--{l}"))
            .collect();
        valued.sort();
        let mut known = VALUED.map(String::from).to_vec();
        known.sort();
        assert_eq!(valued, known);
    }

    /// With `--` or without, the server's command line is the same, here and as the wrapped
    /// command reader reads it.
    #[test]
    fn the_servers_command_starts_after_dash_dash_or_at_the_first_argument_not_an_option() {
        for (args, server) in [
            (
                &["--name", "x", "--", "srv", "--its-flag"][..],
                &["srv", "--its-flag"][..],
            ),
            (
                &["--name", "x", "srv", "--its-flag"],
                &["srv", "--its-flag"],
            ),
            // An option's value is the option's, even one that could be a command.
            (
                &["--on-drift", "hold", "--lock", "node", "--name", "x", "srv"],
                &["srv"],
            ),
            (&["--name=x", "--only-locked", "--lock=l", "srv"], &["srv"]),
            // After the command everything is the server's: the proxy's options and `--` too.
            (
                &[
                    "--name",
                    "x",
                    "npx",
                    "-y",
                    "pkg",
                    "--name",
                    "y",
                    "--",
                    "--on-drift",
                ],
                &["npx", "-y", "pkg", "--name", "y", "--", "--on-drift"],
            ),
            (&["--name", "x", "--", "--", "srv"], &["--", "srv"]),
            (&["srv"], &["srv"]),
        ] {
            let parsed = parse(args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
            assert_eq!(parsed.command, server.to_vec(), "{args:?}");
            let mut entry = vec!["proxy".to_string()];
            entry.extend(args.iter().map(|a| a.to_string()));
            let Some(Ok(read)) = WrappedCommand::parse("pinlog", &entry, is_pinlog_name) else {
                panic!("{args:?}")
            };
            assert_eq!(read.server, server.to_vec(), "{args:?}");
        }
        // A mistyped option is refused, never taken for the server's command; and a command is
        // still required.
        for args in [
            &["--nmae", "x", "srv"][..],
            &["--name", "x"],
            &["--name", "x", "--"],
        ] {
            let e = parse(args)
                .err()
                .unwrap_or_else(|| panic!("{args:?} parsed"));
            assert_eq!(e.exit_code(), 2, "{args:?}");
        }
    }
}
