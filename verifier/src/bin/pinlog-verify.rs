//! pinlog-verify: the offline checks alone, for auditors. No network, no async runtime.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use pinlog_verifier::cli::{self, VerifyLogArgs};

/// Verify a pinlog (or any C2SP tlog-tiles) log offline.
#[derive(Parser)]
#[command(name = "pinlog-verify", version, max_term_width = 100)]
#[command(
    after_help = "Exit codes: 0 verified, 1 the log is proven bad, 2 the command line is wrong, \
4 an input could not be read. See docs/VERIFYING.md."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Verify a downloaded log directory, or one inclusion receipt
    VerifyLog(VerifyLogArgs),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::VerifyLog(args) => ExitCode::from(cli::run(args)),
    }
}
