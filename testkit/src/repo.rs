//! Paths into the checkout, and to what `.ci/setup` installs there.

use std::path::{Path, PathBuf};

/// The root of the checkout.
pub fn root() -> PathBuf {
    let testkit = Path::new(env!("CARGO_MANIFEST_DIR"));
    testkit.parent().unwrap().to_path_buf()
}

/// A file `.ci/setup` installs (or one of the repository's), as a path string; a missing one
/// fails the test with what to run.
pub fn installed(rel: &str) -> String {
    let p = root().join(rel);
    assert!(
        p.exists(),
        "{} is missing: run `bash .ci/setup`",
        p.display()
    );
    p.to_str().unwrap().to_string()
}
