//! pinlog-verify: the checks alone, for auditors, of a log where it is served or a copy of it. No
//! async runtime, no child processes.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use pinlog_core::exit::{Exit, Failure};
use pinlog_core::render;
use pinlog_gate::cli as gate;
use pinlog_gate::commands;
use pinlog_verifier::cli::VerifyLogArgs;
use pinlog_verifier::command::verify_log_command;

/// Verify a pinlog (or any C2SP tlog-tiles) log where it is served or from a copy.
#[derive(Parser)]
#[command(name = "pinlog-verify", version, max_term_width = 100)]
#[command(
    after_help = "Exit codes: 0 verified (or the surface holds), 1 the log is proven bad (or the \
surface departed), 2 the command line is wrong, 3 something could not be compared, 4 an input \
could not be read. See docs/VERIFYING.md and docs/GATE.md."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Verify a log at its URL or in a downloaded directory, or one inclusion receipt
    VerifyLog(VerifyLogArgs),
    /// Approve a manifest as it stands: write the lockfile (docs/GATE.md)
    Lock(gate::LockArgs),
    /// Check a manifest against the lockfile; exit 0 holds, 1 departed, 3 not comparable, 4
    /// unreadable (docs/GATE.md)
    Verify(gate::VerifyArgs),
    /// Make an Ed25519 key pair for signing lockfiles
    Key(gate::KeyArgs),
    /// Sign a lockfile: writes LOCK.sig
    Sign(gate::SignArgs),
}

fn run(command: Command) -> Result<Exit, Failure> {
    match command {
        Command::VerifyLog(args) => verify_log_command(&args.options()),
        Command::Lock(args) => match args.options() {
            Some(options) => commands::lock(&options),
            None => Err(Failure::usage(
                "lock --check reads registries over the network: run it with `pinlog`, which has \
                 network code (pinlog-verify has none)",
            )),
        },
        Command::Verify(args) => commands::verify(&args.options()),
        Command::Key(args) => commands::key(&args.output),
        Command::Sign(args) => commands::sign(&args.lock, &args.key),
    }
}

fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().collect();
    let args = match args
        .get(1)
        .and_then(|a| a.to_str())
        .and_then(gate::flags_of)
    {
        Some(flags) => gate::one_dash(args, flags),
        None => args,
    };
    match run(Cli::parse_from(args).command) {
        Ok(exit) => exit.into(),
        Err(failure) => {
            eprintln!("error: {}", render::safe(&failure.message));
            failure.exit.into()
        }
    }
}
