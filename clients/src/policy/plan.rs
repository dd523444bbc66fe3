//! What `pinlog policy` decides before it writes anything: the configuration read and checked,
//! and every file rendered. Nothing is written unless every server passes.

use std::path::{Path, PathBuf};

use pinlog_core::exit::Failure;
use pinlog_core::render::{quoted, safe};

use super::config::{read_allowed, variable, MAX_CONFIG_BYTES};
use super::{out, render, PolicyFile, Product, CURSOR_NOTE};

/// `policy PRODUCT --config FILE --lock PATH --out DIR`.
#[derive(Debug, Clone)]
pub struct PolicyOptions {
    pub product: Product,
    /// The MCP client configuration of the servers to allow, each already wrapped.
    pub config: PathBuf,
    /// The lockfile every allowed server must run under, as the wrapped servers carry it.
    pub lock: String,
    /// Where the files are written.
    pub out: PathBuf,
}

/// What a run decided: the files to write and the notes to print, or why not (exit code, text).
#[derive(Debug)]
pub struct Plan {
    pub files: Vec<PolicyFile>,
    /// For standard error.
    pub notes: Vec<String>,
}

/// Everything `policy` decides before it writes: reads and checks the configuration and renders
/// every file. Writes nothing.
pub fn plan(args: &PolicyOptions) -> Result<Plan, Failure> {
    if args.product == Product::Cursor {
        return Err(Failure::usage(CURSOR_NOTE));
    }
    if args.lock.is_empty() {
        return Err(Failure::usage("--lock is empty: give the lockfile path"));
    }
    if let Some(var) = variable(&args.lock) {
        return Err(Failure::usage(format!(
            "--lock {} refers to the environment variable {}: give the path as the wrapped \
                 servers carry it, literally",
            quoted(&args.lock, 120),
            quoted(var, 40)
        )));
    }
    if let Some(dir) = out::system_dir(&args.out) {
        return Err(Failure::usage(format!(
            "--out {} is in {dir}, where products read their policy: pinlog policy never \
                 installs; write the files elsewhere and deploy them with your device management",
            quoted(&args.out.display().to_string(), 120)
        )));
    }
    let bytes =
        pinlog_core::files::read_bounded(&args.config, MAX_CONFIG_BYTES as u64).map_err(|e| {
            Failure::unreadable(format!(
                "cannot read the configuration {}: {e}",
                args.config.display()
            ))
        })?;
    let servers = read_allowed(&bytes, &args.lock)
        .map_err(|r| Failure::unreadable(format!("{}: {r}", args.config.display())))?;
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

/// Writes the files `plan` rendered under `out`, each whole or not at all; their paths.
pub fn write(out: &Path, plan: &Plan) -> Result<Vec<PathBuf>, Failure> {
    out::write(out, &plan.files).map_err(|e| {
        Failure::unreadable(format!(
            "cannot write under {}: {}",
            safe(&out.display().to_string()),
            safe(&e.to_string())
        ))
    })
}
