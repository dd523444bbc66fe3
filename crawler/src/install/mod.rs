//! Installing the exact package a candidate names into a scratch prefix, with nothing of the
//! package run: npm with `--ignore-scripts`, pip with wheels only (`--only-binary :all:`, so no
//! `setup.py` runs).
//!
//! The installers run in a sandbox of their own ([`Jail`]: the network, the scratch directory
//! and nothing else of the operator's) with an environment of their own (a private home and
//! caches, no configuration files, git allowed no protocol), so a hostile dependency finds none
//! of the operator's files or credentials; and a package any part of which came from somewhere
//! other than the registry (a git, file or URL dependency) is refused before anything of it runs.

mod env;
mod jail;
mod npm;
mod process;
mod provenance;
pub mod published;
mod pypi;
pub mod python;
#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use pinlog_core::json::{self, Limits, Value};

use crate::sandbox::Bind;

pub use jail::Jail;
pub use npm::{npm, npm_tree};
pub use pypi::{pypi, pypi_tree};

/// Where packages come from and with what tools.
#[derive(Debug, Clone)]
pub struct Installers {
    pub npm_registry: String,
    pub pypi_index: String,
    /// The `npm` to install with and the `node` to run with.
    pub npm: PathBuf,
    pub node: PathBuf,
    /// The Python whose `venv` and `pip` install PyPI packages.
    pub python: PathBuf,
    /// The other interpreters a package whose `Requires-Python` excludes `python` may be
    /// installed with: the newest that fits is taken.
    pub pythons: Vec<PathBuf>,
    pub timeout: Duration,
    /// The installers' home: their caches live here, and nothing of the operator's.
    pub home: PathBuf,
}

/// A package installed and ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub version: String,
    /// The registry's digest of what was installed: npm's `integrity`, or `sha256:<hex>` of
    /// the PyPI file.
    pub registry_digest: Option<String>,
    /// The registry's digest of every package installed, the package itself and its
    /// dependencies, in the installer's order.
    pub packages: Vec<String>,
    /// The Python the package runs on (its version and interpreter), for a PyPI package.
    pub python: Option<String>,
    /// The installed tree (the installer's prefix), shown to the server at its own place.
    pub tree: PathBuf,
    /// The command, by absolute paths.
    pub argv: Vec<OsString>,
    /// How the command was chosen, when not as usual (a module run with `python -m`).
    pub note: Option<String>,
    /// What of the host the command must be able to read.
    pub binds: Vec<Bind>,
}

/// Why an install failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallError {
    pub message: String,
    /// The package unpacks past `--max-unpacked-bytes` (or one file of it past
    /// `--max-file-bytes`).
    pub too_large: bool,
    /// Another file system than the install's scratch ran out of room (its disk, the installer's
    /// home or `/tmp`), in words: nothing is known of the package's size.
    pub filled: Option<String>,
}

impl From<String> for InstallError {
    fn from(message: String) -> InstallError {
        InstallError {
            message,
            too_large: false,
            filled: None,
        }
    }
}

impl From<&str> for InstallError {
    fn from(message: &str) -> InstallError {
        InstallError::from(message.to_string())
    }
}

/// `path` with `.` and `..` taken out by their text alone, so that `/usr/local/bin/../../../opt`
/// is seen as `/opt` before it is compared with the system directories.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Binds for `program` and every link on the way to the file it names, each path showing the
/// real file; nothing when it lies in the system directories the sandbox shows anyway, or in
/// `inside` (the scratch directory, shown whole).
fn program_binds(program: &Path, inside: &Path) -> Result<Vec<Bind>, String> {
    let real = program
        .canonicalize()
        .map_err(|e| format!("{}: {e}", program.display()))?;
    let mut binds = Vec::new();
    let mut at = program.to_path_buf();
    for _ in 0..16 {
        if !at.starts_with(inside) && !crate::sandbox::is_system(&at) {
            binds.push(Bind {
                source: real.clone(),
                dest: at.clone(),
                copy: None,
            });
        }
        match std::fs::read_link(&at) {
            Ok(next) => at = lexical(&at.parent().map_or(next.clone(), |d| d.join(&next))),
            Err(_) => return Ok(binds),
        }
    }
    Err(format!(
        "{} is a chain of too many links",
        program.display()
    ))
}

fn read_json(path: &Path) -> Result<Value<'static>, String> {
    let bytes = pinlog_core::files::read_bounded(path, 64 << 20)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    json::parse(&bytes, Limits::default())
        .map(Value::into_owned)
        .map_err(|e| format!("{}: {e}", path.display()))
}
