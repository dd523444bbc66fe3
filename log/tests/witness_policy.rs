//! The witness policy file (C2SP tlog-policy, as Sigsum and Tessera read it): what is accepted,
//! each rule a file can break, and the quorum a policy's groups make.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use pinlog_log::cosignature::{cosigned_by, Cosigner, WitnessKey};
use pinlog_log::note::{Note, SignerKey, VerifierKey};
use pinlog_log::witness_policy::{LogKey, WitnessPolicy};

fn witness(name: &str, seed: u8) -> WitnessKey {
    WitnessKey::from_seed(name, [seed; 32])
}

/// The 64 hex digits of a witness key's Ed25519 public key, Sigsum's form.
fn hex_of(vkey: &str) -> String {
    let b64 = vkey.splitn(3, '+').nth(2).unwrap();
    let raw = STANDARD.decode(b64).unwrap();
    raw[1..].iter().map(|b| format!("{b:02x}")).collect()
}

fn log_key() -> SignerKey {
    SignerKey::from_seed("example.test/log", [9; 32])
}

fn rule_of(text: &str) -> (usize, &'static str) {
    let e = WitnessPolicy::parse(text.as_bytes()).unwrap_err();
    (e.line, e.rule)
}

#[test]
fn a_policy_of_vkeys_hex_keys_groups_and_comments_is_read() {
    let (a, b, c) = (
        witness("a.test/w", 1),
        witness("b.test/w", 2),
        witness("c.test/w", 3),
    );
    let text = format!(
        "# the log and its witnesses\n\
         log {log}\n\
         \twitness  a {a} http://127.0.0.1:1/\n\
         witness b {b} https://b.test/witness\n\
         witness c {c}   \n\
         \n\
         group two-of 2 a b c\n\
         quorum two-of\n",
        log = log_key().verifier(),
        a = a.vkey(),
        b = b.vkey(),
        c = hex_of(&c.vkey()).to_uppercase(),
    );
    let p = WitnessPolicy::parse(text.as_bytes()).unwrap();
    assert_eq!(p.logs.len(), 1);
    assert!(p.logs[0].key.is(&log_key().verifier()));
    let names: Vec<_> = p.witnesses.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    // The trailing slash goes: requests go to <url>/add-checkpoint.
    assert_eq!(p.witnesses[0].url.as_deref(), Some("http://127.0.0.1:1"));
    assert_eq!(
        p.witnesses[1].url.as_deref(),
        Some("https://b.test/witness")
    );
    assert_eq!(p.witnesses[2].url, None);
    assert!(matches!(p.witnesses[2].key, Cosigner::Bare(_)));
    assert_eq!(p.describe(), "2 of (a, b, c)");
    assert!(!p.is_met(&[true, false, false]));
    assert!(p.is_met(&[false, true, true]));
}

#[test]
fn a_log_key_may_be_given_in_hex() {
    let log = log_key().verifier().to_string();
    let text = format!("log {}\nquorum none\n", hex_of(&log));
    let p = WitnessPolicy::parse(text.as_bytes()).unwrap();
    assert!(matches!(p.logs[0].key, LogKey::Bare(_)));
    assert!(p.logs[0].key.is(&log_key().verifier()));
    assert!(!p.logs[0]
        .key
        .is(&SignerKey::from_seed("example.test/log", [8; 32]).verifier()));
    assert!(p.needs_none());
    assert!(p.is_met(&[]));
}

#[test]
fn groups_nest_and_any_and_all_mean_one_and_every_member() {
    let ws: Vec<_> = (1..=5).map(|i| witness(&format!("w{i}.test"), i)).collect();
    let mut text = String::new();
    for (i, w) in ws.iter().enumerate() {
        text += &format!("witness w{} {}\n", i + 1, w.vkey());
    }
    text += "group east any w1 w2\ngroup west all w3 w4\ngroup both 2 east west w5\nquorum both\n";
    let p = WitnessPolicy::parse(text.as_bytes()).unwrap();
    assert_eq!(p.describe(), "2 of (1 of (w1, w2), 2 of (w3, w4), w5)");
    let met = |set: &[usize]| {
        let by: Vec<bool> = (1..=5).map(|i| set.contains(&i)).collect();
        p.is_met(&by)
    };
    assert!(met(&[1, 5]));
    assert!(met(&[2, 3, 4]));
    assert!(!met(&[1, 2, 3]), "west needs both of its members");
    assert!(!met(&[5]));
    assert!(met(&[1, 3, 4, 5]));
}

#[test]
fn a_quorum_may_name_one_witness() {
    let a = witness("a.test/w", 1);
    let p = WitnessPolicy::parse(format!("witness a {}\nquorum a\n", a.vkey()).as_bytes()).unwrap();
    assert!(p.is_met(&[true]));
    assert!(!p.is_met(&[false]));
}

#[test]
fn each_rule_a_file_can_break_is_named_with_its_line() {
    let a = witness("a.test/w", 1).vkey();
    let b = witness("b.test/w", 2).vkey();
    let log = log_key().verifier().to_string();
    let cases: Vec<(String, (usize, &str))> = vec![
        (format!("witness a {a}\n"), (0, "policy-no-quorum")),
        (
            format!("witness a {a}\nquorum a\nquorum a\n"),
            (3, "policy-quorum-twice"),
        ),
        ("quorum a\n".into(), (1, "policy-undefined-name")),
        (
            format!("group g any a\nwitness a {a}\nquorum g\n"),
            (1, "policy-undefined-name"),
        ),
        (
            format!("witness a {a}\nwitness a {b}\nquorum a\n"),
            (2, "policy-duplicate-name"),
        ),
        (
            format!("witness a {a}\nwitness b {a}\nquorum a\n"),
            (2, "policy-duplicate-key"),
        ),
        (
            format!("witness a {a}\nwitness b {}\nquorum a\n", hex_of(&a)),
            (2, "policy-duplicate-key"),
        ),
        (
            format!("witness none {a}\nquorum none\n"),
            (1, "policy-reserved-name"),
        ),
        (
            format!("witness a {a}\ngroup g 2 a\nquorum g\n"),
            (2, "policy-group-threshold"),
        ),
        (
            format!("witness a {a}\ngroup g 0 a\nquorum g\n"),
            (2, "policy-group-threshold"),
        ),
        (
            format!("witness a {a}\ngroup g 01 a\nquorum g\n"),
            (2, "policy-group-threshold"),
        ),
        (
            format!("witness a {a}\ngroup g any\nquorum g\n"),
            (2, "policy-group-line"),
        ),
        (
            format!("witness a {a}\ngroup g any a\ngroup h any a\nquorum h\n"),
            (3, "policy-member-twice"),
        ),
        (
            format!("witness a {a}\ngroup g all a a\nquorum g\n"),
            (2, "policy-member-twice"),
        ),
        (
            format!("witness a {log}\nquorum a\n"),
            (1, "policy-bad-key"),
        ),
        (format!("log {a}\nquorum none\n"), (1, "policy-bad-key")),
        ("witness a abcd\nquorum a\n".into(), (1, "policy-bad-key")),
        (
            format!("witness a {a} ftp://w.test\nquorum a\n"),
            (1, "policy-bad-url"),
        ),
        (
            format!("witness a {a} http://x extra\nquorum a\n"),
            (1, "policy-witness-line"),
        ),
        (
            format!("log {log}\nlog {log}\nquorum none\n"),
            (2, "policy-duplicate-key"),
        ),
        (
            "witnesses a\nquorum none\n".into(),
            (1, "policy-unknown-line"),
        ),
        (
            format!("witness a {a}\r\nquorum a\n"),
            (1, "policy-control-character"),
        ),
        ("quorum none extra\n".into(), (1, "policy-quorum-line")),
    ];
    for (text, want) in cases {
        assert_eq!(rule_of(&text), want, "{text:?}");
    }
    let e = WitnessPolicy::parse(&[0xff, b'\n']).unwrap_err();
    assert_eq!(e.rule, "policy-not-utf8");
    let big = "# padding\n".repeat(7000);
    assert_eq!(rule_of(&big), (0, "policy-too-large"));
}

#[test]
fn a_bare_key_counts_a_cosignature_under_the_name_its_line_carries() {
    let w = witness("w.example/anything", 4);
    let text = "example.test/log\n1\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n";
    let mut note = Note::parse(log_key().sign(text).unwrap().as_bytes()).unwrap();
    note.signatures.push(w.cosign(text, 1_700_000_000));
    let bare = Cosigner::Bare({
        let hex = hex_of(&w.vkey());
        let mut k = [0u8; 32];
        for (i, b) in k.iter_mut().enumerate() {
            *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
        }
        k
    });
    let other = Cosigner::Vkey(VerifierKey::parse(&witness("x.test/w", 5).vkey()).unwrap());
    let found = cosigned_by(&note, &[bare.clone(), other]).unwrap();
    assert_eq!(found, vec![Some(1_700_000_000), None]);
    // A line under that name whose signature is not the key's is refused, not ignored.
    let mut forged = note.clone();
    forged.signatures.last_mut().unwrap().sig[20] ^= 1;
    assert!(cosigned_by(&forged, &[bare]).is_err());
}
