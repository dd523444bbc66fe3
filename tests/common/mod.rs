//! Helpers shared by the end-to-end tests of the binary; each test file uses a part of them.
#![allow(dead_code)]

use std::path::PathBuf;

/// A file `.ci/setup` installs (or one of the repository's), as a path string; a missing one
/// fails the test with what to run.
pub fn installed(rel: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel);
    assert!(
        p.exists(),
        "{} is missing: run `bash .ci/setup`",
        p.display()
    );
    p.to_str().unwrap().to_string()
}

/// Standard output or error as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}
