//! `pinlog pins`, `review`, `approve`, `forget` and `audit`: the proxy's pin store, shown and
//! changed by a person. Exit codes (docs/PROXY.md): 0 done, 1 the local log does not verify (or,
//! for review, the pending change departs), 2 a server that cannot be found from what was given,
//! 4 the store cannot be read or written.

use clap::Args;
use pinlog_core::exit::{Exit, Failure};
use pinlog_proxy::commands::{self, CommandError};
use pinlog_proxy::store::Store;

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

fn with_store(
    f: impl FnOnce(&Store) -> Result<(String, Exit), CommandError>,
) -> Result<Exit, Failure> {
    let store = Store::home()
        .and_then(|h| Store::open_existing(&h))
        .map_err(|e| Failure::unreadable(e.to_string()))?;
    let (text, exit) = f(&store)?;
    print!("{text}");
    Ok(exit)
}

pub fn pins(args: PinsArgs) -> Result<Exit, Failure> {
    with_store(|s| commands::pins(s, args.server.as_deref(), args.ascii).map(|t| (t, Exit::Ok)))
}

pub fn review(args: ServerArg) -> Result<Exit, Failure> {
    with_store(|s| commands::review(s, &args.server, args.ascii))
}

pub fn approve(args: ApproveArgs) -> Result<Exit, Failure> {
    use std::io::IsTerminal;
    if !args.yes && !std::io::stdin().is_terminal() {
        return Err(Failure::usage(
            "approve is a person's decision: run it in a terminal after `pinlog review`, or pass \
             --yes",
        ));
    }
    with_store(|s| {
        commands::approve(s, &args.server, &args.tools, args.ascii).map(|t| (t, Exit::Ok))
    })
}

pub fn forget(args: ServerArg) -> Result<Exit, Failure> {
    with_store(|s| commands::forget(s, &args.server, args.ascii).map(|t| (t, Exit::Ok)))
}

pub fn audit() -> Result<Exit, Failure> {
    with_store(|s| commands::audit(s).map(|t| (t, Exit::Ok)))
}
