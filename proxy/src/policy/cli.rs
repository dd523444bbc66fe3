//! `pinlog policy PRODUCT --config FILE --lock PATH --out DIR`. Exit codes: 0 written; 2 the
//! command line is wrong (an empty or variable `--lock`, an `--out` a product reads policy from,
//! or `cursor`, which documents no policy file); 4 the configuration could not be read or a
//! server in it is not wrapped and locked, or a file could not be written. Nothing is written
//! unless every server passes.

use std::path::PathBuf;

use clap::Args;
use pinlog_core::render::{quoted, safe};

use super::config::{read_allowed, variable, MAX_CONFIG_BYTES};
use super::{out, render, PolicyFile, Product, CURSOR_NOTE};

const EXIT_USAGE: u8 = 2;
const EXIT_UNREADABLE: u8 = 4;

#[derive(Args, Debug, Clone)]
pub struct PolicyArgs {
    /// The product to write managed-policy files for
    #[arg(value_enum, value_name = "PRODUCT")]
    pub product: Product,
    /// The MCP client configuration of the servers to allow (`mcpServers`, or VS Code's
    /// `servers`), each already wrapped by `pinlog wrap`
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// The lockfile every allowed server must run under: its wrapped args must carry exactly
    /// `--lock PATH`
    #[arg(long, value_name = "PATH")]
    pub lock: String,
    /// The directory to write the files to (one subdirectory per product); nothing is installed
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// What a run decided: the files to write and the notes to print, or why not (exit code, text).
#[derive(Debug)]
pub struct Plan {
    pub files: Vec<PolicyFile>,
    /// For standard error.
    pub notes: Vec<String>,
}

/// `policy`: checks everything, then writes. Returns the exit code.
pub fn policy(args: PolicyArgs) -> u8 {
    let plan = match plan(&args) {
        Ok(p) => p,
        Err((code, message)) => {
            eprintln!("pinlog: error: {}", safe(&message));
            return code;
        }
    };
    for n in &plan.notes {
        eprintln!("pinlog: note: {}", safe(n));
    }
    match out::write(&args.out, &plan.files) {
        Ok(paths) => {
            for (f, p) in plan.files.iter().zip(&paths) {
                println!(
                    "wrote {} (deploy to {})",
                    safe(&p.display().to_string()),
                    f.deploy
                );
            }
            0
        }
        Err(e) => {
            eprintln!(
                "pinlog: error: cannot write under {}: {}",
                safe(&args.out.display().to_string()),
                safe(&e.to_string())
            );
            EXIT_UNREADABLE
        }
    }
}

/// Everything `policy` decides before it writes: reads and checks the configuration and renders
/// every file. Writes nothing.
pub fn plan(args: &PolicyArgs) -> Result<Plan, (u8, String)> {
    if args.product == Product::Cursor {
        return Err((EXIT_USAGE, CURSOR_NOTE.to_string()));
    }
    if args.lock.is_empty() {
        return Err((EXIT_USAGE, "--lock is empty: give the lockfile path".into()));
    }
    if let Some(var) = variable(&args.lock) {
        return Err((
            EXIT_USAGE,
            format!(
                "--lock {} refers to the environment variable {}: give the path as the wrapped \
                 servers carry it, literally",
                quoted(&args.lock, 120),
                quoted(var, 40)
            ),
        ));
    }
    if let Some(dir) = out::system_dir(&args.out) {
        return Err((
            EXIT_USAGE,
            format!(
                "--out {} is in {dir}, where products read their policy: pinlog policy never \
                 installs; write the files elsewhere and deploy them with your device management",
                quoted(&args.out.display().to_string(), 120)
            ),
        ));
    }
    let bytes =
        pinlog_core::files::read_bounded(&args.config, MAX_CONFIG_BYTES as u64).map_err(|e| {
            (
                EXIT_UNREADABLE,
                format!(
                    "cannot read the configuration {}: {e}",
                    args.config.display()
                ),
            )
        })?;
    let servers = read_allowed(&bytes, &args.lock)
        .map_err(|r| (EXIT_UNREADABLE, format!("{}: {r}", args.config.display())))?;
    let files = render(args.product, &servers);
    let mut notes = Vec::new();
    if servers.is_empty() {
        notes.push(
            "the configuration has no servers: the policy allows no MCP server at all".to_string(),
        );
    }
    notes.extend(files.iter().flat_map(|f| f.notes.iter().cloned()));
    if args.product == Product::All {
        notes.push(CURSOR_NOTE.to_string());
    }
    Ok(Plan { files, notes })
}
