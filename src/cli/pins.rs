//! `pinlog pins`, `review`, `approve`, `forget` and `audit`: the proxy's pin store, shown and
//! changed by a person. Exit codes (docs/PROXY.md): 0 done, 1 the local log does not verify (or,
//! for review, the pending change departs; for approve and forget, the person did not confirm), 2
//! a server that cannot be found from what was given (or approve or forget without a terminal or
//! --yes, or approve where approvals come only from a signed lockfile), 4 the store cannot be read
//! or written.

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
    /// Approve what is pending without showing it or asking (for scripts a person runs; an
    /// agent that may run this can approve anything)
    #[arg(long)]
    pub yes: bool,
    /// Write every non-ASCII character as <U+XXXX>
    #[arg(long)]
    pub ascii: bool,
}

#[derive(Args, Debug)]
pub struct ForgetArgs {
    /// The server: its key, a unique prefix of 6 or more, or its label
    #[arg(value_name = "SERVER")]
    pub server: String,
    /// Forget without showing the pin or asking (for scripts a person runs; the next session pins
    /// whatever it is served, so an agent that may run this can approve anything)
    #[arg(long)]
    pub yes: bool,
    /// Write every non-ASCII character as <U+XXXX>
    #[arg(long)]
    pub ascii: bool,
}

/// The longest line read as the answer; anything longer is refused.
const MAX_LINE: u64 = pinlog_proxy::confirm::MAX_ANSWER as u64 + 1;

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
    if args.yes {
        return with_store(|s| {
            commands::approve(s, &args.server, &args.tools, args.ascii).map(|t| (t, Exit::Ok))
        });
    }
    on_terminal("approve")?;
    with_store(|s| {
        let proposal = commands::propose(s, &args.server, &args.tools, args.ascii)?;
        let answer = ask(&proposal.shown, &proposal.prompt)?;
        let confirmed = proposal.confirm(&answer)?;
        commands::approve_confirmed(s, confirmed).map(|t| (t, Exit::Ok))
    })
}

pub fn forget(args: ForgetArgs) -> Result<Exit, Failure> {
    if args.yes {
        return with_store(|s| {
            commands::forget(s, &args.server, args.ascii).map(|t| (t, Exit::Ok))
        });
    }
    on_terminal("forget")?;
    with_store(|s| {
        let proposal = commands::propose_forget(s, &args.server, args.ascii)?;
        let answer = ask(&proposal.shown, &proposal.prompt)?;
        let confirmed = proposal.confirm(&answer)?;
        commands::forget_confirmed(s, confirmed, args.ascii).map(|t| (t, Exit::Ok))
    })
}

/// Refuses `command` unless standard input is a terminal: without one, only `--yes` does it.
fn on_terminal(command: &str) -> Result<(), Failure> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        return Ok(());
    }
    Err(Failure::usage(format!(
        "{command} is a person's decision: run it in a terminal, where it shows what it does and \
         asks for its code, or pass --yes in a script"
    )))
}

/// Shows `shown` and `prompt` on the terminal, and reads one line back, bounded; the end of input
/// reads as no answer.
fn ask(shown: &str, prompt: &str) -> Result<Vec<u8>, CommandError> {
    use std::io::{BufRead, Read, Write};
    let mut out = std::io::stdout().lock();
    let written = write!(out, "{shown}\n{prompt}").and_then(|_| out.flush());
    written.map_err(|e| CommandError::Io(format!("cannot write to the terminal: {e}")))?;
    drop(out);
    let mut answer = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(MAX_LINE)
        .read_until(b'\n', &mut answer);
    if read.is_err() {
        answer.clear();
    }
    if answer.is_empty() {
        println!();
    }
    Ok(answer)
}

pub fn audit() -> Result<Exit, Failure> {
    with_store(|s| commands::audit(s).map(|t| (t, Exit::Ok)))
}
