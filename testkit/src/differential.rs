//! Comparing with another implementation: a seeded generator of cases, and a peer program (python,
//! node) fed the cases on its standard input.

use std::io::Write;
use std::process::{Command, Stdio};

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
