//! What an installer installed must all have come from the registry: no git, file, directory or
//! URL source.

use pinlog_core::json::Value;

use crate::fetch::{get, text};

/// Every package npm installed must have come from the registry: no link to a directory, no
/// git or URL source.
pub(super) fn npm_provenance(lock: &Value<'_>, registry: &str) -> Result<(), String> {
    let prefix = format!("{}/", registry.trim_end_matches('/'));
    let packages = get(lock, "packages")
        .and_then(Value::as_object)
        .ok_or("npm wrote no package list")?;
    for (path, entry) in packages.iter() {
        if path.is_empty() {
            continue;
        }
        let bundled = matches!(get(entry, "inBundle"), Some(Value::Bool(true)));
        let from = if matches!(get(entry, "link"), Some(Value::Bool(true))) {
            Some("a link to a directory".to_string())
        } else if bundled {
            // A bundled dependency came inside its parent's tarball, which is checked itself.
            let parent = path.rsplit_once("/node_modules/").map(|(p, _)| p);
            match parent.and_then(|p| packages.get(p)) {
                Some(_) => None,
                None => Some("a bundle with no parent package".to_string()),
            }
        } else {
            match text(entry, "resolved") {
                Some(url) if url.starts_with(&prefix) => None,
                Some(url) => Some(pinlog_core::render::quoted(url, 120)),
                None => Some("no recorded source".to_string()),
            }
        };
        if let Some(from) = from {
            return Err(format!(
                "{} comes from {from}, not from the registry",
                pinlog_core::render::quoted(path, 120)
            ));
        }
    }
    Ok(())
}

/// Every distribution pip installed must have come through the index: no direct URL, no VCS
/// checkout, no local directory.
pub(super) fn pip_provenance(report: &Value<'_>) -> Result<(), String> {
    for item in get(report, "install")
        .and_then(Value::as_array)
        .unwrap_or(&[])
    {
        let name = get(item, "metadata")
            .and_then(|m| text(m, "name"))
            .unwrap_or("?");
        let direct = matches!(get(item, "is_direct"), Some(Value::Bool(true)));
        let archive = get(item, "download_info")
            .and_then(|d| get(d, "archive_info"))
            .is_some();
        if direct || !archive {
            return Err(format!(
                "{} does not come from the index",
                pinlog_core::render::quoted(name, 120)
            ));
        }
    }
    Ok(())
}
