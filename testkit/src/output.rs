//! What a program a test ran printed.

use std::process::Output;

/// Standard output or error as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

/// The standard output of a run that must have exited 0; otherwise fails with both streams.
pub fn ok(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    text(&o.stdout)
}
