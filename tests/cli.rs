//! The `pinlog` binary end to end: output formats, exit codes, and that nothing a document carries
//! reaches the terminal raw.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn pinlog(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pinlog"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the pinlog binary runs");
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // The binary may stop reading early (size limit); a broken pipe is expected then.
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn shared() -> PathBuf {
    std::env::var_os("PINLOG_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

#[test]
fn canon_prints_exact_canonical_bytes_without_a_newline() {
    let o = pinlog(
        &["canon"],
        b"{ \"b\" : [1.0, 2e1, \"\\u00e9\"], \"a\": null }\n",
    );
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "{\"a\":null,\"b\":[1,20,\"\u{e9}\"]}");
    assert_eq!(stderr(&o), "");
}

#[test]
fn digest_of_a_document_matches_the_shared_vector() {
    // The first definition vector of tool-definition-hash-v1.json.
    let tool = r#"{"inputSchema": { "type": "object", "properties": { "city": { "type": "string" } }, "required": ["city"] }, "name": "weather", "description": "Get the current weather for a city."}"#;
    let o = pinlog(&["digest", "-"], tool.as_bytes());
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        "sha256:f6d1913a45f2a5ea95ceb161b4e08eed245a1808044f3a358705d2641b6fb37d\n"
    );
}

#[test]
fn digest_listing_prints_lines_in_set_order_and_the_set_hash() {
    // The first set vector: two tools, sent out of order.
    let page = r#"[{"name":"weather","description":"Get the current weather for a city.","inputSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},{"name":"alerts","description":"Weather alerts for a state.","inputSchema":{"type":"object","properties":{"state":{"type":"string"}}}}]"#;
    let o = pinlog(&["digest", "--listing"], page.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "alerts\tsha256:d5c24fc1d6b0b6f4364bb161840a535e38c8c1d90aaff5f7e3e99c993d7fc5c0\n\
         weather\tsha256:f6d1913a45f2a5ea95ceb161b4e08eed245a1808044f3a358705d2641b6fb37d\n\
         set\tdbc6a9bbec4bcc2a77ce357dc0d96d15a053da10ddefc0b4bdc1a48507df7521\n"
    );
    let empty = pinlog(&["digest", "--listing"], b"[]");
    assert_eq!(
        stdout(&empty),
        "set\te3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
    );
}

#[test]
fn a_file_argument_is_read() {
    let path = shared().join("vectors/tool-definition-hash-v1.json");
    let o = pinlog(&["digest", path.to_str().unwrap()], b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("sha256:") && stdout(&o).len() == 72);
}

#[test]
fn refused_input_exits_4_with_one_line_naming_rule_and_byte() {
    for (input, line) in [
        (&b"{\"a\":1,\"a\":2}"[..], "error: duplicate-member: member name \"a\" is repeated in one object at byte 7\n"),
        (b"[\"\\ud800\"]", "error: unpaired-surrogate: \\uD800 is a high surrogate with no low surrogate after it at byte 2\n"),
        (b"{} x", "error: trailing-data: more data after the end of the document at byte 3\n"),
        (b"\"\xff\"", "error: invalid-utf8: bytes that are not UTF-8 at byte 1\n"),
    ] {
        for cmd in [&["canon"][..], &["digest"], &["digest", "--listing"]] {
            let o = pinlog(cmd, input);
            assert_eq!(o.status.code(), Some(4), "{cmd:?} {}", String::from_utf8_lossy(input));
            assert_eq!(stdout(&o), "", "nothing is printed for a refused input");
            if cmd.len() == 1 || input.starts_with(b"[") {
                assert_eq!(stderr(&o), line, "{cmd:?}");
            }
        }
    }
}

#[test]
fn a_million_brackets_exit_4_cleanly() {
    let o = pinlog(&["digest"], "[".repeat(1_000_000).as_bytes());
    assert_eq!(o.status.code(), Some(4));
    assert_eq!(
        stderr(&o),
        "error: too-deep: nesting deeper than 256 levels at byte 256\n"
    );
}

#[test]
fn max_bytes_is_enforced_without_reading_everything() {
    let big = format!("[{}1]", "1,".repeat(100_000));
    let o = pinlog(&["digest", "--max-bytes", "1000"], big.as_bytes());
    assert_eq!(o.status.code(), Some(4));
    assert!(
        stderr(&o).starts_with("error: too-large: "),
        "{}",
        stderr(&o)
    );
}

#[test]
fn undecidable_exits_3_and_names_each_literal() {
    let o = pinlog(&["digest"], br#"{"a":9007199254740993,"b":[1e400]}"#);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(stdout(&o), "");
    let err = stderr(&o);
    assert!(
        err.contains("9007199254740993 at /a is beyond 2^53 in magnitude"),
        "{err}"
    );
    assert!(
        err.contains("1e400 at /b/0 is outside the range of a double"),
        "{err}"
    );

    let o = pinlog(&["canon"], b"[1e30]");
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(stdout(&o), "");

    // A listing still digests what it can, and names the tool it cannot.
    let o = pinlog(
        &["digest", "--listing"],
        br#"[{"name":"ok"},{"name":"big","inputSchema":{"maximum":12345678901234567890}}]"#,
    );
    assert_eq!(o.status.code(), Some(3));
    let out = stdout(&o);
    assert!(out.contains("big\tundecidable\n"), "{out}");
    assert!(out.contains("ok\tsha256:"), "{out}");
    assert!(
        !out.contains("set\t"),
        "no set hash when a tool has no digest: {out}"
    );
    assert!(
        stderr(&o).contains("12345678901234567890 at /inputSchema/maximum"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn listing_items_need_a_string_name() {
    let o = pinlog(&["digest", "--listing"], br#"[{"name":7}]"#);
    assert_eq!(o.status.code(), Some(4));
    assert_eq!(
        stderr(&o),
        "error: no-string-name: item 0 of the listing has no string \"name\" member (number) at byte 1\n"
    );
    let o = pinlog(&["digest", "--listing"], br#"{"name":"x"}"#);
    assert_eq!(o.status.code(), Some(4));
    assert!(
        stderr(&o).starts_with("error: syntax: expected a JSON array"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn names_and_messages_never_carry_raw_controls() {
    let o = pinlog(
        &["digest", "--listing"],
        br#"[{"name":"evil\u001b[2J\u202e\t\nname"},{"name":"x","n":1e999}]"#,
    );
    let out = stdout(&o);
    assert!(
        out.contains("evil<U+001B>[2J<U+202E><U+0009><U+000A>name\tsha256:"),
        "{out}"
    );
    let all = [o.stdout.as_slice(), o.stderr.as_slice()].concat();
    let text = String::from_utf8(all).unwrap();
    assert!(
        !text
            .chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t')
                || ('\u{202a}'..='\u{202e}').contains(&c)),
        "{text:?}"
    );
    // Names in stdout keep exactly one tab, between name and digest.
    assert!(out.lines().all(|l| l.matches('\t').count() == 1), "{out}");

    let o = pinlog(
        &["digest", "--ascii", "--listing"],
        "[{\"name\":\"caf\u{e9}\",\"x\":1e999}]".as_bytes(),
    );
    assert!(
        stdout(&o).starts_with("caf<U+00E9>\tundecidable"),
        "{}",
        stdout(&o)
    );
    assert!(stderr(&o).contains("caf<U+00E9>"), "{}", stderr(&o));
}

#[test]
fn usage_errors_exit_2_and_unreadable_files_exit_4() {
    assert_eq!(
        pinlog(&["digest", "--no-such-flag"], b"").status.code(),
        Some(2)
    );
    assert_eq!(pinlog(&["no-such-command"], b"").status.code(), Some(2));
    assert_eq!(pinlog(&[], b"").status.code(), Some(2));
    let o = pinlog(&["digest", "/nonexistent/file.json"], b"");
    assert_eq!(o.status.code(), Some(4));
    assert!(
        stderr(&o).starts_with("error: cannot open /nonexistent/file.json"),
        "{}",
        stderr(&o)
    );
    assert_eq!(pinlog(&["--help"], b"").status.code(), Some(0));
}

#[test]
fn canon_to_a_file_is_written_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("canonical.json");
    std::fs::write(&out, b"previous").unwrap();
    // A refused input leaves the existing file as it was.
    let o = pinlog(
        &["canon", "-o", out.to_str().unwrap()],
        b"{\"a\":1,\"a\":1}",
    );
    assert_eq!(o.status.code(), Some(4));
    assert_eq!(std::fs::read(&out).unwrap(), b"previous");
    let o = pinlog(
        &["canon", "-o", out.to_str().unwrap()],
        b"{\"b\":1,\"a\":2}",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap(), b"{\"a\":2,\"b\":1}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary file is left"
    );
    // An output that cannot be written is an error, not a success.
    let o = pinlog(&["canon", "-o", "/nonexistent/dir/out.json"], b"{}");
    assert_eq!(o.status.code(), Some(4));
    assert!(
        stderr(&o).starts_with("error: cannot write /nonexistent/dir/out.json"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn docs_vectors_hold_through_the_command_line() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/digest-vectors.json");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let bytes = |case: &serde_json::Value| -> Vec<u8> {
        match case["input_hex"].as_str() {
            Some(hex) => (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect(),
            None => case["input"].as_str().unwrap().as_bytes().to_vec(),
        }
    };
    for case in v["canonical"].as_array().unwrap() {
        let o = pinlog(&["digest"], &bytes(case));
        assert_eq!(o.status.code(), Some(0), "{}", case["about"]);
        assert_eq!(
            stdout(&o),
            format!("{}\n", case["digest"].as_str().unwrap())
        );
        let o = pinlog(&["canon"], &bytes(case));
        assert_eq!(
            stdout(&o),
            case["canonical"].as_str().unwrap(),
            "{}",
            case["about"]
        );
    }
    for case in v["undecidable"].as_array().unwrap() {
        let o = pinlog(&["digest"], &bytes(case));
        assert_eq!(o.status.code(), Some(3), "{}", case["about"]);
        for literal in case["literals"].as_array().unwrap() {
            let named = format!(
                "{} at {}",
                literal["literal"].as_str().unwrap(),
                literal["pointer"].as_str().unwrap()
            );
            assert!(
                stderr(&o).contains(&named),
                "{}: {}",
                case["about"],
                stderr(&o)
            );
        }
    }
    for case in v["refused"].as_array().unwrap() {
        let o = pinlog(&["digest"], &bytes(case));
        assert_eq!(o.status.code(), Some(4), "{}", case["about"]);
        let err = stderr(&o);
        let prefix = format!("error: {}: ", case["rule"].as_str().unwrap());
        let suffix = format!(" at byte {}\n", case["offset"]);
        assert!(
            err.starts_with(&prefix) && err.ends_with(&suffix),
            "{}: {err}",
            case["about"]
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
