//! The log's signing key on disk: one line, `PRIVATE+KEY+<origin>+<hex8>+<base64>`, mode 0600.

use pinlog_core::exit::Failure;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::note::{SignerKey, VerifierKey};
use pinlog_core::files::read_bounded;

/// Why the key could not be had.
#[derive(Debug)]
pub enum KeyFileError {
    Io(String),
    /// The file exists and is not a key for this log.
    Invalid(String),
    /// A key would have to be created where keys must not be made.
    Refused(String),
}

impl fmt::Display for KeyFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyFileError::Io(m) | KeyFileError::Invalid(m) | KeyFileError::Refused(m) => {
                f.write_str(m)
            }
        }
    }
}

impl std::error::Error for KeyFileError {}

impl From<KeyFileError> for Failure {
    fn from(e: KeyFileError) -> Self {
        Failure::unreadable(e.to_string())
    }
}

/// Reads the signing key in `path`.
pub fn load(path: &Path) -> Result<SignerKey, KeyFileError> {
    let bytes = read_bounded(path, 4096)
        .map_err(|e| KeyFileError::Io(format!("cannot read the key {}: {e}", path.display())))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| KeyFileError::Invalid(format!("{} is not a key file", path.display())))?;
    SignerKey::parse(text.trim_end())
        .map_err(|e| KeyFileError::Invalid(format!("{}: {e}", path.display())))
}

/// Reads the key in `path`, or creates one named `origin` there if there is none. Returns the key
/// and whether it was created.
///
/// A key is never created when the `CI` environment variable is set: a key minted by a CI run
/// would sit in a build log or cache, and the log's key must be made once, on the operator's
/// machine.
pub fn load_or_create(path: &Path, origin: &str) -> Result<(SignerKey, bool), KeyFileError> {
    if path.exists() {
        let key = load(path)?;
        if key.name() != origin {
            return Err(KeyFileError::Invalid(format!(
                "{} holds the key of the log {:?}, not {origin:?}",
                path.display(),
                key.name()
            )));
        }
        return Ok((key, false));
    }
    if std::env::var_os("CI").is_some() {
        return Err(KeyFileError::Refused(format!(
            "no key at {} and CI is set: a signing key is never created in CI; create it on the \
             operator's machine with `pinlog log init` and give CI only the vkey",
            path.display()
        )));
    }
    let key = SignerKey::generate(origin).map_err(|e| KeyFileError::Invalid(e.to_string()))?;
    write_new_private(path, format!("{}\n", key.to_private_text()).as_bytes())
        .map_err(|e| KeyFileError::Io(format!("cannot create {}: {e}", path.display())))?;
    Ok((key, true))
}

/// A verifier key a user pinned, and where it was given (`--vkey`, or the file it was read from),
/// for messages.
pub struct PinnedKey {
    pub key: VerifierKey,
    pub from: String,
}

/// The verifier keys a user pins: each of `texts` (given as `flag`), then each line of each of
/// `files` (`#` starts a comment; blank lines are skipped). A key that does not parse is a wrong
/// command line (exit 2); a file that cannot be read, an input that could not be (exit 4).
pub fn pinned_keys(
    flag: &str,
    texts: &[String],
    files: &[PathBuf],
) -> Result<Vec<PinnedKey>, Failure> {
    let parse = |text: &str, from: String| {
        VerifierKey::parse(text.trim())
            .map(|key| PinnedKey {
                key,
                from: from.clone(),
            })
            .map_err(|e| Failure::usage(format!("{from}: {e}")))
    };
    let mut keys = Vec::new();
    for text in texts {
        keys.push(parse(text, flag.to_string())?);
    }
    for f in files {
        let bytes = read_bounded(f, 64 << 10)
            .map_err(|e| Failure::unreadable(format!("cannot read {}: {e}", f.display())))?;
        for line in String::from_utf8_lossy(&bytes).lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            if !line.is_empty() {
                keys.push(parse(line, f.display().to_string())?);
            }
        }
    }
    Ok(keys)
}

/// Creates `path` readable by its owner only, failing if it exists.
fn write_new_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut f = options.open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}
