//! pinlog's data directory on this machine: where the proxy's pins and wrap's backups live.

use std::path::PathBuf;

/// `PINLOG_HOME`, else `$XDG_DATA_HOME/pinlog`, else `$HOME/.local/share/pinlog` (else
/// `%LOCALAPPDATA%\pinlog`); `None` when the environment names none of them.
pub fn data_dir() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(home) = var("PINLOG_HOME") {
        return Some(home);
    }
    // The XDG spec says to ignore a relative path.
    if let Some(data) = var("XDG_DATA_HOME").filter(|p| p.is_absolute()) {
        return Some(data.join("pinlog"));
    }
    if let Some(home) = var("HOME") {
        return Some(home.join(".local").join("share").join("pinlog"));
    }
    var("LOCALAPPDATA").map(|data| data.join("pinlog"))
}
