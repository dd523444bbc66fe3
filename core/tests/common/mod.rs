//! Helpers shared by the integration tests; each test binary uses a part of them.
#![allow(dead_code)]

use std::path::PathBuf;

/// The `shared/` folder that sits beside the checkout (or `PINLOG_SHARED`).
pub fn shared_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("PINLOG_SHARED") {
        return PathBuf::from(dir);
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared");
    assert!(
        dir.join("vectors").is_dir(),
        "the shared vectors are not at {}; set PINLOG_SHARED to the shared/ folder",
        dir.display()
    );
    dir
}

/// Reads a JSON file with serde_json, an implementation independent of the one under test.
pub fn load_json(path: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// SplitMix64: a small, seeded generator so every run draws the same cases.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// Runs a program with `input` on its standard input and returns its standard output; panics,
/// with what to install, when the program is missing or fails.
pub fn run_peer(program: &str, args: &[&str], input: &[u8], install_hint: &str) -> Vec<u8> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}; {install_hint}"));
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "{program} failed: {}; {install_hint}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The Python interpreter to compare against: `PINLOG_PYTHON`, or `python3`.
pub fn python() -> String {
    std::env::var("PINLOG_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// The strings of a JSON array of strings.
pub fn strings(v: &serde_json::Value) -> Vec<&str> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap_or_else(|| panic!("not a string: {s}")))
        .collect()
}
