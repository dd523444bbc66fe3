//! Whole documents against the python `rfc8785` package: random nested documents with unicode
//! member names (astral, combining, right-to-left), escapes, whitespace and numbers in many
//! notations. pinlog's canonical bytes must equal the package's, byte for byte.

use std::collections::HashSet;

use pinlog_core::json::{self, Limits};
use pinlog_testkit::differential::{python, run_peer, Rng};
use unicode_normalization::UnicodeNormalization;

const DOCUMENTS: usize = 10_000;

/// Pieces member names and strings are made of.
const PIECES: &[&str] = &[
    "a",
    "b",
    "name",
    "description",
    "Z",
    "_meta",
    "1",
    "",
    " ",
    "e\u{301}",
    "\u{e9}",
    "\u{5d0}\u{5d1}",
    "\u{627}\u{644}",
    "\u{202e}",
    "\u{200b}",
    "\u{1f600}",
    "\u{1d400}",
    "\u{10ffff}",
    "\u{fb33}",
    "\u{20ac}",
    "\u{e000}",
    "\u{ffff}",
    "\u{7f}",
    "\u{80}",
    "\u{2028}",
    "\u{65e5}\u{672c}",
    "\u{e0041}",
    "\u{fe0f}",
];

/// Characters that the JSON text must escape, and escapes it may use for anything.
fn write_string(rng: &mut Rng, out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match (c, rng.below(5)) {
            ('"', _) => out.push_str("\\\""),
            ('\\', _) => out.push_str("\\\\"),
            (c, _) if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            ('/', 0) => out.push_str("\\/"),
            // Any character may be written as \u escapes (a surrogate pair above the BMP).
            (c, 0) => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{:04x}", u));
                }
            }
            (c, _) => out.push(c),
        }
    }
    out.push('"');
}

fn random_text(rng: &mut Rng) -> String {
    let mut s = String::new();
    for _ in 0..rng.below(5) {
        match rng.below(4) {
            0 => s.push(char::from_u32(rng.below(0x20) as u32).unwrap()),
            1 => s.push(rng.pick(&['"', '\\', '/', '<', '\u{fffd}'])),
            _ => s.push_str(rng.pick(PIECES)),
        }
    }
    s
}

/// A number literal whose value is decidable, in one of several notations.
fn write_number(rng: &mut Rng, out: &mut String) {
    let v: f64 = match rng.below(4) {
        0 => (rng.below(1 << 53) as f64) * if rng.below(2) == 0 { 1.0 } else { -1.0 },
        1 => (rng.below(20_000) as f64 - 10_000.0) / 10f64.powi(rng.below(8) as i32),
        2 => f64::from_bits(rng.next_u64()),
        _ => rng.below(100) as f64,
    };
    if !v.is_finite() || (v.fract() == 0.0 && v.abs() > 9007199254740992.0) {
        out.push_str("0.5");
        return;
    }
    let text = match rng.below(4) {
        0 => format!("{v:e}"),
        1 => format!("{v:E}").replace('E', "E+").replace("E+-", "E-"),
        // A trailing zero after the point, where `{v:?}` writes a point and no exponent.
        2 => {
            let t = format!("{v:?}");
            if t.contains('.') && !t.contains('e') {
                t + "0"
            } else {
                t
            }
        }
        _ => format!("{v}"),
    };
    // `{v}` writes "0", `{v:?}` writes "0.0" and "-0.0"; JSON allows all of these.
    out.push_str(&text);
}

fn ws(rng: &mut Rng, out: &mut String) {
    out.push_str(rng.pick(&["", "", " ", "\t", "\r", "  "]));
}

fn write_value(rng: &mut Rng, out: &mut String, depth: u32) {
    let kind = if depth >= 5 {
        rng.below(4)
    } else {
        rng.below(7)
    };
    match kind {
        0 => write_number(rng, out),
        1 => {
            let s = random_text(rng);
            write_string(rng, out, &s);
        }
        2 => out.push_str(rng.pick(&["true", "false", "null"])),
        3 => write_number(rng, out),
        4 => {
            out.push('[');
            for i in 0..rng.below(5) {
                if i > 0 {
                    out.push(',');
                }
                ws(rng, out);
                write_value(rng, out, depth + 1);
                ws(rng, out);
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            let mut seen = HashSet::new();
            let mut first = true;
            for _ in 0..rng.below(8) {
                let name = random_text(rng);
                // Names equal after NFC are refused by design; the comparison is about the rest.
                if !seen.insert(name.nfc().collect::<String>()) {
                    continue;
                }
                if !first {
                    out.push(',');
                }
                first = false;
                ws(rng, out);
                write_string(rng, out, &name);
                ws(rng, out);
                out.push(':');
                ws(rng, out);
                write_value(rng, out, depth + 1);
            }
            out.push('}');
        }
    }
}

#[test]
fn random_documents_canonicalise_as_the_python_rfc8785_package_does() {
    let mut rng = Rng(0x5eed_0002);
    let docs: Vec<String> = (0..DOCUMENTS)
        .map(|_| {
            let mut s = String::new();
            write_value(&mut rng, &mut s, 0);
            s
        })
        .collect();
    let script = r#"
import sys, json, rfc8785
out = []
for line in sys.stdin.buffer.read().split(b"\n"):
    if line:
        out.append(rfc8785.dumps(json.loads(line)).hex())
sys.stdout.write("\n".join(out) + "\n")
"#;
    let input = docs.join("\n");
    let stdout = run_peer(
        &python(),
        &["-c", script],
        input.as_bytes(),
        "the python package rfc8785 is needed: `bash .ci/run` installs it, or set PINLOG_PYTHON",
    );
    let theirs: Vec<&str> = std::str::from_utf8(&stdout).unwrap().lines().collect();
    assert_eq!(theirs.len(), docs.len());
    let mut nested = 0;
    for (doc, hex) in docs.iter().zip(theirs) {
        let value =
            json::parse(doc.as_bytes(), Limits::default()).unwrap_or_else(|e| panic!("{doc}: {e}"));
        let ours = json::to_canonical(&value).unwrap_or_else(|e| panic!("{doc}: {e}"));
        // The streaming writer, which builds no tree, must write the same bytes.
        let streamed = json::canonicalize(doc.as_bytes(), Limits::default())
            .unwrap()
            .unwrap();
        assert_eq!(streamed, ours, "streamed canonical form of {doc}");
        let ours_hex: String = ours.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            ours_hex,
            hex,
            "document {doc}\nours: {}",
            String::from_utf8_lossy(&ours)
        );
        nested += usize::from(doc.contains("{\"") && doc.matches('{').count() > 1);
    }
    assert!(
        nested > DOCUMENTS / 10,
        "the generator makes nested objects ({nested})"
    );
}

#[test]
fn real_tool_listings_digest_as_the_python_rfc8785_package_does() {
    let path =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../bench/data/real-tools.json");
    let script = r#"
import sys, json, hashlib, rfc8785
out = []
for server in json.load(open(sys.argv[1]))["servers"]:
    for kind in ("tools", "prompts"):
        items = server.get(kind, [])
        lines = sorted((i["name"], hashlib.sha256(rfc8785.dumps(i)).hexdigest()) for i in items)
        text = "\n".join(f"{n}:{h}" for n, h in lines)
        out.append(json.dumps([[f"{n}:{h}" for n, h in lines], hashlib.sha256(text.encode()).hexdigest()]))
print("\n".join(out))
"#;
    let stdout = run_peer(
        &python(),
        &["-c", script, path.to_str().unwrap()],
        b"",
        "the python package rfc8785 is needed: `bash .ci/run` installs it, or set PINLOG_PYTHON",
    );
    let expected: Vec<serde_json::Value> = std::str::from_utf8(&stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let doc = std::fs::read(&path).unwrap();
    let doc = json::parse(&doc, Limits::default()).unwrap();
    let servers = doc
        .as_object()
        .unwrap()
        .get("servers")
        .unwrap()
        .as_array()
        .unwrap();
    let mut compared = 0;
    let mut expected = expected.iter();
    for server in servers {
        for kind in ["tools", "prompts"] {
            let items = server
                .as_object()
                .unwrap()
                .get(kind)
                .and_then(|v| v.as_array())
                .unwrap_or(&[]);
            let listing = pinlog_core::Listing::from_items(
                items.iter().cloned().map(Ok::<_, json::ReadError>),
            )
            .unwrap();
            let lines: Vec<String> = listing
                .items()
                .map(|l| format!("{}:{}", l.name, l.digest.as_ref().unwrap().hex()))
                .collect();
            let want = expected.next().unwrap();
            assert_eq!(serde_json::json!(lines), want[0], "{kind}");
            assert_eq!(
                listing.set_hash().unwrap().hex(),
                want[1].as_str().unwrap(),
                "{kind}"
            );
            compared += lines.len();
        }
    }
    assert!(compared >= 40, "compared {compared} real definitions");
}
