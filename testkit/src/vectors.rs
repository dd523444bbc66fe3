//! Test vectors read with serde_json, an implementation independent of the one under test.

use std::path::{Path, PathBuf};

use crate::repo;

/// The `shared/` folder that sits beside the checkout (or `PINLOG_SHARED`).
pub fn shared_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("PINLOG_SHARED") {
        return PathBuf::from(dir);
    }
    let dir = repo::root().join("../shared");
    assert!(
        dir.join("vectors").is_dir(),
        "the shared vectors are not at {}; set PINLOG_SHARED to the shared/ folder",
        dir.display()
    );
    dir
}

/// Reads a JSON file.
pub fn load_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The strings of a JSON array of strings.
pub fn strings(v: &serde_json::Value) -> Vec<&str> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap_or_else(|| panic!("not a string: {s}")))
        .collect()
}
