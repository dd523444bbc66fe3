//! `verify-log`'s peak memory with a surface blob at the size it reads at most (64 MiB): the
//! real process's peak resident set, as the kernel counts it for the child, stays within four
//! times the blob and a constant.

use std::process::Command;

use pinlog_log::store::Store;
use pinlog_log::surface_blob::SurfaceBlob;
use pinlog_testkit::log::{key, Chain, ORIGIN};

/// The largest blob `verify-log` reads (docs/SPEC-log.md, rule `too-large`).
const BLOB_CAP: usize = 64 << 20;
/// What `verify-log` holds whatever its blobs: the program, its reader threads' bundles.
const CONSTANT: u64 = 64 << 20;

/// A canonical surface of `tools` (each as `item(n)` makes it) filling the blob cap.
fn blob_at_cap(item: impl Fn(usize) -> String) -> Vec<u8> {
    let head = br#"{"instructions":null,"prompts":[],"tools":["#;
    let mut blob = head.to_vec();
    for n in 0.. {
        let item = item(n);
        if blob.len() + item.len() + 3 > BLOB_CAP {
            break;
        }
        if n > 0 {
            blob.push(b',');
        }
        blob.extend_from_slice(item.as_bytes());
    }
    blob.extend_from_slice(b"]}");
    blob
}

/// Runs `pinlog verify-log` on a log of one entry naming `blob`: its exit code, its standard
/// output, and its peak resident set in bytes.
///
/// A Python process starts it and asks the kernel for its children's peak: a child of this test
/// would count the test's own memory, which it shares until it execs.
fn verify_peak(blob: Vec<u8>) -> (Option<i32>, String, u64) {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = Store::create(&tmp.path().join("log.db"), ORIGIN).unwrap();
    let surface = SurfaceBlob::read(blob).unwrap();
    let entry = Chain::default().entry("big", &surface, 0);
    store.append(&entry, Some(surface.bytes())).unwrap();
    drop(surface);
    let out = tmp.path().join("pub");
    pinlog_log::publish::publish(&mut store, &key(), &out, |_, _| {}).unwrap();

    let python = std::env::var("PINLOG_PYTHON")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/venv/bin/python").into());
    let o = Command::new(python)
        .args([
            "-c",
            "import resource, subprocess, sys\n\
             r = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)\n\
             peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n\
             print(r.returncode, peak)\n\
             sys.stdout.write(r.stdout.decode())",
            env!("CARGO_BIN_EXE_pinlog"),
            "verify-log",
            out.to_str().unwrap(),
            "-q",
            "--vkey",
        ])
        .arg(key().verifier().to_string())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let (first, stdout) = text.split_once('\n').unwrap();
    let (code, peak) = first.split_once(' ').unwrap();
    // Linux counts ru_maxrss in KiB.
    let peak: u64 = peak.parse::<u64>().unwrap() * 1024;
    (code.parse().ok(), stdout.to_string(), peak)
}

fn within_bound(what: &str, item: impl Fn(usize) -> String) {
    let blob = blob_at_cap(item);
    let size = blob.len() as u64;
    let (code, stdout, peak) = verify_peak(blob);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.starts_with("log OK: "), "{stdout}");
    let bound = 4 * size + CONSTANT;
    eprintln!(
        "{what}: a blob of {} MiB, verify-log peaked at {} MiB (bound {} MiB)",
        size >> 20,
        peak >> 20,
        bound >> 20
    );
    assert!(peak <= bound, "{what}: {peak} bytes at peak, over {bound}");
}

#[test]
fn a_blob_of_tools_at_the_cap() {
    within_bound("tools as servers write them", |n| {
        format!(
            r#"{{"description":"Reads record {n} of the store and returns it as text, with its metadata.","inputSchema":{{"properties":{{"id":{{"description":"The record's id.","type":"integer"}},"verbose":{{"type":"boolean"}}}},"required":["id"],"type":"object"}},"name":"read_record_{n}"}}"#
        )
    });
}

#[test]
fn a_blob_of_one_tool_with_a_long_array_at_the_cap() {
    let blob = blob_at_cap(|_| String::from("0"));
    // One tool whose schema lists the numbers: the same bytes as many tiny values.
    let inner = &blob[br#"{"instructions":null,"prompts":[],"tools":["#.len()..blob.len() - 2];
    let mut one = br#"{"instructions":null,"prompts":[],"tools":[{"enum":["#.to_vec();
    one.extend_from_slice(&inner[..inner.len() - 40]);
    one.extend_from_slice(br#"],"name":"t"}]}"#);
    let size = one.len() as u64;
    let (code, stdout, peak) = verify_peak(one);
    assert_eq!(code, Some(0), "{stdout}");
    let bound = 4 * size + CONSTANT;
    eprintln!(
        "one tool of many small values: a blob of {} MiB, verify-log peaked at {} MiB (bound {} MiB)",
        size >> 20,
        peak >> 20,
        bound >> 20
    );
    assert!(peak <= bound, "{peak} bytes at peak, over {bound}");
}

/// `n` written in base 62, shortest first: the names of millions of distinct tools, each a few
/// bytes.
fn base62(mut n: usize) -> String {
    const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut name = String::new();
    loop {
        name.push(char::from(DIGITS[n % 62]));
        n /= 62;
        if n == 0 {
            return name;
        }
    }
}

#[test]
fn a_blob_of_millions_of_tiny_tools_at_the_cap() {
    // Every 500,000th name is escaped in the blob, or beyond ASCII (in canonical JSON, only
    // quotes, backslashes and controls are escaped), so both halves hold some.
    const ODD: [&str; 6] = [r#"q\""#, r"b\\", r"t\t", r"c\u001f", "é", "😀"];
    within_bound("tiny tools", |n| {
        let name = base62(n);
        let name = match n % 500_000 {
            7 => format!("{}{name}", ODD[n / 500_000 % ODD.len()]),
            _ => name,
        };
        format!(r#"{{"name":"{name}"}}"#)
    });
}
