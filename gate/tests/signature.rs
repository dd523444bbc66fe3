//! Lockfile signatures: the exact signed bytes, every refusal of the envelope reader and of the
//! check, key files on disk, and agreement with OpenSSL (keys both ways, signatures both ways,
//! fingerprints).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use pinlog_core::json::{self, Limits};
use pinlog_core::Digest;
use pinlog_gate::signature::{
    check, format_utc, generate, parse_utc, public_key_path, read_envelope, read_public_key,
    read_signing_key, sign, write_key_pair, Envelope, KeyError, PublicKey, SignatureError,
    SigningKey, DOMAIN,
};
use sha2::{Digest as _, Sha256};

/// 2026-08-01T09:20:00Z.
const T: i64 = 1_785_576_000;
const HOUR: Duration = Duration::from_secs(3600);

fn key(n: u8) -> SigningKey {
    SigningKey::from_seed(&[n; 32])
}

fn lock() -> Digest {
    Digest::of(b"{\"schema_version\":2}")
}

fn signed(k: &SigningKey) -> String {
    String::from_utf8(sign(k, &lock(), T).unwrap()).unwrap()
}

/// The members of an envelope as written by `sign`, one per line: (name, JSON value text).
fn members(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.trim().trim_end_matches(',').split_once(": "))
        .map(|(n, v)| (n.trim_matches('"').to_string(), v.to_string()))
        .collect()
}

/// Members written back as one-line JSON, in the order given.
fn render(members: &[(String, String)]) -> String {
    let inner: Vec<String> = members
        .iter()
        .map(|(n, v)| format!("\"{n}\":{v}"))
        .collect();
    format!("{{{}}}", inner.join(","))
}

/// The envelope signed by `k` with member `name` set to the JSON text `value`.
fn with(k: &SigningKey, name: &str, value: &str) -> String {
    let mut m = members(&signed(k));
    let slot = m.iter_mut().find(|(n, _)| n == name).unwrap();
    slot.1 = value.to_string();
    render(&m)
}

fn read_rule(text: &str) -> &'static str {
    match read_envelope(text.as_bytes()) {
        Ok(e) => panic!("read {e:?} from {text}"),
        Err(e) => {
            assert!(!e.detail.chars().any(char::is_control), "{e}");
            e.rule
        }
    }
}

fn check_at(
    text: &str,
    trusted: &[PublicKey],
    digest: &Digest,
    now: i64,
    max_age: Option<Duration>,
) -> Result<usize, SignatureError> {
    check(
        &read_envelope(text.as_bytes()).unwrap(),
        trusted,
        digest,
        now,
        max_age,
    )
}

fn check_rule(text: &str, trusted: &[PublicKey]) -> &'static str {
    check_at(text, trusted, &lock(), T, None).unwrap_err().rule
}

#[test]
fn the_signed_message_is_the_domain_line_and_the_canonical_envelope_without_signature() {
    let k = key(7);
    let text = signed(&k);
    let env = read_envelope(text.as_bytes()).unwrap();
    let expected = format!(
        "pinlog-lock-signature v1\n{{\"algorithm\":\"ed25519\",\"lock_digest\":\"{}\",\
         \"public_key_fingerprint\":\"{}\",\"schema\":\"pinlog-lock-signature\",\
         \"schema_version\":1,\"signed_at\":\"2026-08-01T09:20:00Z\"}}",
        lock(),
        k.public().fingerprint()
    );
    assert_eq!(String::from_utf8(env.message()).unwrap(), expected);
    assert_eq!(DOMAIN.len(), 25);

    // The JSON part is what the core canonical writer makes of the envelope minus `signature`.
    let mut m = members(&text);
    m.retain(|(n, _)| n != "signature");
    m.reverse();
    let without = render(&m);
    let value = json::parse(without.as_bytes(), Limits::default()).unwrap();
    let canonical = json::to_canonical(&value).unwrap();
    assert_eq!(&env.message()[DOMAIN.len()..], &canonical[..]);
}

#[test]
fn the_envelope_file_is_the_pretty_canonical_layout_with_a_final_newline() {
    let text = signed(&key(1));
    let value = json::parse(text.as_bytes(), Limits::default()).unwrap();
    let mut pretty = Vec::new();
    json::write_pretty(&value, &mut pretty);
    pretty.push(b'\n');
    assert_eq!(String::from_utf8(pretty).unwrap(), text);
    let names: Vec<String> = members(&text).into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        [
            "algorithm",
            "lock_digest",
            "public_key_fingerprint",
            "schema",
            "schema_version",
            "signature",
            "signed_at"
        ]
    );
    let env = read_envelope(text.as_bytes()).unwrap();
    assert_eq!(env.signed_at, "2026-08-01T09:20:00Z");
    assert_eq!(env.signed_at_unix, T);
    assert_eq!(env.lock_digest, lock());
    assert_eq!(env.public_key_fingerprint, key(1).public().fingerprint());
}

#[test]
fn signing_is_deterministic_and_checks_against_a_pinned_key() {
    let k = key(2);
    assert_eq!(signed(&k), signed(&k));
    let trusted = [key(9).public(), k.public()];
    assert_eq!(check_at(&signed(&k), &trusted, &lock(), T, None), Ok(1));
}

#[test]
fn a_reordered_reindented_escaped_envelope_still_verifies() {
    let k = key(3);
    let mut m = members(&signed(&k));
    m.reverse();
    // Same strings, spelled with escapes a canonical writer would not use.
    for (n, v) in &mut m {
        if n == "algorithm" {
            *v = "\"\\u0065d25519\"".into();
        }
        if n == "schema" {
            *v = "\"pinlog\\u002dlock-signature\"".into();
        }
    }
    let body: Vec<String> = m
        .iter()
        .map(|(n, v)| format!("\r\n\t\"{n}\" :\t{v}"))
        .collect();
    let text = format!("  {{{}\r\n}}\n\n", body.join(" ,"));
    assert_eq!(check_at(&text, &[k.public()], &lock(), T, None), Ok(0));
}

#[test]
fn unknown_members_are_refused_even_well_meant_ones() {
    let k = key(4);
    for extra in ["approver", "expires_at", "Signature", "comment"] {
        let mut m = members(&signed(&k));
        m.push((extra.into(), "\"x\"".into()));
        assert_eq!(
            read_rule(&render(&m)),
            "signature-unknown-member",
            "{extra}"
        );
    }
    // The name is shown, with its control characters made visible.
    let mut m = members(&signed(&k));
    m.insert(0, ("\\u001b[2Jx".into(), "1".into()));
    let e = read_envelope(render(&m).as_bytes()).unwrap_err();
    assert_eq!(e.rule, "signature-unknown-member");
    assert!(e.detail.contains("<U+001B>[2Jx"), "{e}");
}

#[test]
fn a_repeated_member_is_refused_by_the_strict_reader() {
    let k = key(4);
    let mut m = members(&signed(&k));
    m.push((
        "lock_digest".into(),
        format!("\"{}\"", Digest::of(b"other")),
    ));
    assert_eq!(read_rule(&render(&m)), "signature-json");
}

#[test]
fn missing_members_are_refused() {
    let k = key(4);
    for name in [
        "algorithm",
        "lock_digest",
        "public_key_fingerprint",
        "schema",
        "schema_version",
        "signature",
        "signed_at",
    ] {
        let mut m = members(&signed(&k));
        m.retain(|(n, _)| n != name);
        assert_eq!(read_rule(&render(&m)), "signature-field", "{name}");
    }
}

#[test]
fn another_schema_version_or_algorithm_is_refused() {
    let k = key(5);
    assert_eq!(
        read_rule(&with(&k, "schema", "\"mcppin-lock-signature\"")),
        "signature-schema"
    );
    assert_eq!(
        read_rule(&with(&k, "schema_version", "2")),
        "signature-schema"
    );
    assert_eq!(
        read_rule(&with(&k, "schema_version", "1.0")),
        "signature-schema"
    );
    assert_eq!(
        read_rule(&with(&k, "schema_version", "\"1\"")),
        "signature-field"
    );
    assert_eq!(
        read_rule(&with(&k, "algorithm", "\"Ed25519\"")),
        "signature-schema"
    );
    assert_eq!(read_rule(&with(&k, "algorithm", "null")), "signature-field");
}

#[test]
fn malformed_fields_are_refused() {
    let k = key(5);
    let sig = members(&signed(&k))
        .into_iter()
        .find(|(n, _)| n == "signature")
        .unwrap()
        .1;
    let b64 = sig.trim_matches('"');
    assert_eq!(b64.len(), 88);
    let bytes = BASE64.decode(b64).unwrap();
    let url_safe = base64::engine::general_purpose::URL_SAFE.encode(&bytes);
    let bad_signatures = [
        format!("\"{}\"", b64.trim_end_matches('=')), // unpadded
        format!("\"{}\\n{}\"", &b64[..40], &b64[40..]), // a line break inside
        format!("\"{}\"", &b64[..84]),                // 63 bytes
        format!("\"{}\"", BASE64.encode([&bytes[..], &[0]].concat())), // 65 bytes
        // Stray bits in the last character: decodes to the same bytes, but is not their spelling.
        format!("\"{}\"", {
            let mut s = b64.to_string();
            let last = s.remove(85);
            let twin = BASE64_ALPHABET[BASE64_ALPHABET.find(last).unwrap() + 1..]
                .chars()
                .next()
                .unwrap();
            s.insert(85, twin);
            s
        }),
        "\"\"".to_string(),
        "null".to_string(),
    ];
    for bad in &bad_signatures {
        assert_eq!(
            read_rule(&with(&k, "signature", bad)),
            "signature-field",
            "{bad}"
        );
    }
    if url_safe != b64 {
        let text = with(&k, "signature", &format!("\"{url_safe}\""));
        assert_eq!(read_rule(&text), "signature-field");
    }
    let upper = format!(
        "\"{}\"",
        lock()
            .to_string()
            .to_uppercase()
            .replace("SHA256", "sha256")
    );
    for (name, value) in [
        ("lock_digest", upper.as_str()),
        ("lock_digest", "\"sha256:abc\""),
        ("public_key_fingerprint", "\"sha512:00\""),
        ("signed_at", "\"2026-08-01T09:20:00+00:00\""),
        ("signed_at", "\"2026-08-01T09:20:00.5Z\""),
        ("signed_at", "\"2026-02-29T09:20:00Z\""),
        ("signed_at", "\"2026-08-01 09:20:00Z\""),
        ("signed_at", "1785576000"),
    ] {
        assert_eq!(
            read_rule(&with(&k, name, value)),
            "signature-field",
            "{name} {value}"
        );
    }
    let e = read_envelope(with(&k, "signed_at", "\"\\u001b]0;x\\u0007\"").as_bytes()).unwrap_err();
    assert!(e.detail.contains("<U+001B>]0;x<U+0007>"), "{e}");
}

const BASE64_ALPHABET: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

#[test]
fn what_is_not_a_json_object_is_refused() {
    for text in [
        "",
        "[]",
        "\"x\"",
        "{",
        "{} {}",
        "\u{feff}{}",
        "{\"schema\":\"\\ud800\"}",
    ] {
        assert_eq!(read_rule(text), "signature-json", "{text:?}");
    }
    let big = format!("{{\"schema\":\"{}\"}}", "x".repeat(70_000));
    assert_eq!(read_rule(&big), "signature-json");
}

#[test]
fn a_signature_by_a_key_not_pinned_is_foreign_however_valid() {
    let (a, b) = (key(10), key(11));
    let e = check_at(&signed(&b), &[a.public()], &lock(), T, None).unwrap_err();
    assert_eq!(e.rule, "signature-foreign-key");
    assert!(e.detail.contains(&b.public().fingerprint().to_string()));
    assert!(e.detail.contains(&a.public().fingerprint().to_string()));
    assert_eq!(check_rule(&signed(&b), &[]), "signature-foreign-key");
}

#[test]
fn a_changed_envelope_does_not_verify() {
    let (a, b) = (key(12), key(13));
    let pinned = [a.public()];
    // Claiming the pinned key's fingerprint for another key's signature.
    let lifted = with(
        &b,
        "public_key_fingerprint",
        &format!("\"{}\"", a.public().fingerprint()),
    );
    assert_eq!(check_rule(&lifted, &pinned), "signature-invalid");
    // The time and the lock digest are under the signature.
    let later = with(&a, "signed_at", "\"2026-08-01T09:20:01Z\"");
    assert_eq!(check_rule(&later, &pinned), "signature-invalid");
    let other = with(&a, "lock_digest", &format!("\"{}\"", Digest::of(b"other")));
    assert_eq!(
        check_at(&other, &pinned, &Digest::of(b"other"), T, None)
            .unwrap_err()
            .rule,
        "signature-invalid"
    );
    // One bit of the signature.
    let env = read_envelope(signed(&a).as_bytes()).unwrap();
    for byte in [0, 31, 32, 63] {
        let mut sig = env.signature();
        sig[byte] ^= 1;
        let text = with(&a, "signature", &format!("\"{}\"", BASE64.encode(sig)));
        assert_eq!(
            check_rule(&text, &pinned),
            "signature-invalid",
            "byte {byte}"
        );
    }
    // The same signature with S + L in place of S: one signature per message and key.
    let mut sig = env.signature();
    add_group_order(&mut sig[32..]);
    let text = with(&a, "signature", &format!("\"{}\"", BASE64.encode(sig)));
    assert_eq!(check_rule(&text, &pinned), "signature-invalid");
}

/// Adds the Ed25519 group order L to a little-endian 32-byte scalar.
fn add_group_order(s: &mut [u8]) {
    const L: [u8; 32] = [
        0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde,
        0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
    ];
    let mut carry = 0u16;
    for (b, l) in s.iter_mut().zip(L) {
        let sum = u16::from(*b) + u16::from(l) + carry;
        *b = sum as u8;
        carry = sum >> 8;
    }
}

#[test]
fn a_valid_signature_over_another_lockfile_says_so() {
    let k = key(14);
    let e = check_at(&signed(&k), &[k.public()], &Digest::of(b"now"), T, None).unwrap_err();
    assert_eq!(e.rule, "signature-other-lockfile");
    assert!(e.detail.contains(&lock().to_string()), "{e}");
}

#[test]
fn max_age_refuses_stale_and_future_signatures() {
    let k = key(15);
    let text = signed(&k);
    let pinned = [k.public()];
    let at = |now: i64, max: Option<Duration>| check_at(&text, &pinned, &lock(), now, max);
    assert_eq!(at(T + 3600, Some(HOUR)), Ok(0));
    assert_eq!(
        at(T + 3601, Some(HOUR)).unwrap_err().rule,
        "signature-stale"
    );
    assert_eq!(at(T + 10 * 365 * 86_400, None), Ok(0));
    // More than five minutes ahead of the checker's clock.
    assert_eq!(at(T - 300, Some(HOUR)), Ok(0));
    assert_eq!(
        at(T - 301, Some(HOUR)).unwrap_err().rule,
        "signature-future"
    );
    assert_eq!(at(T - 86_400, None), Ok(0));
    // Durations beyond any clock do not overflow.
    assert_eq!(at(T, Some(Duration::MAX)), Ok(0));
    assert_eq!(
        at(i64::MAX, Some(HOUR)).unwrap_err().rule,
        "signature-stale"
    );
    // The age is checked only after the signature holds.
    let moved = with(&k, "signed_at", "\"2020-01-01T00:00:00Z\"");
    assert_eq!(
        check_at(&moved, &pinned, &lock(), T, Some(HOUR))
            .unwrap_err()
            .rule,
        "signature-invalid"
    );
}

#[test]
fn times_convert_both_ways() {
    assert_eq!(parse_utc("2026-08-01T09:20:00Z"), Some(T));
    assert_eq!(parse_utc("2000-02-29T23:59:59Z"), Some(951_868_799));
    assert_eq!(parse_utc("1970-01-01T00:00:00Z"), Some(0));
    assert_eq!(format_utc(T).as_deref(), Some("2026-08-01T09:20:00Z"));
    assert_eq!(format_utc(0).as_deref(), Some("1970-01-01T00:00:00Z"));
    assert_eq!(
        format_utc(253_402_300_799).as_deref(),
        Some("9999-12-31T23:59:59Z")
    );
    assert_eq!(format_utc(253_402_300_800), None);
    assert_eq!(format_utc(-1), None);
    for bad in [
        "2026-08-01T09:20:60Z",
        "2026-13-01T09:20:00Z",
        "1969-12-31T23:59:59Z",
        "",
    ] {
        assert_eq!(parse_utc(bad), None, "{bad}");
    }
    assert_eq!(
        sign(&key(1), &lock(), -1).unwrap_err().rule,
        "signature-field"
    );
}

#[test]
fn key_pairs_round_trip_through_files_with_owner_only_private_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signing-key.pem");
    let k = generate().unwrap();
    write_key_pair(&path, &k).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("-----BEGIN PRIVATE KEY-----\n"), "{text}");
    let pub_text = std::fs::read_to_string(public_key_path(&path)).unwrap();
    assert!(
        pub_text.starts_with("-----BEGIN PUBLIC KEY-----\n"),
        "{pub_text}"
    );
    let back = read_signing_key(&path).unwrap();
    assert_eq!(back.public(), k.public());
    assert_eq!(
        read_public_key(&public_key_path(&path)).unwrap(),
        k.public()
    );
    // Nothing but the pair is left in the directory.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&public_key_path(&path)), 0o644);
    }
    // The secret never shows in Debug.
    let debug = format!("{k:?}");
    assert!(debug.contains(&k.public().fingerprint().to_string()));
    assert!(!text.lines().skip(1).any(|l| debug.contains(l)));
}

#[test]
fn a_key_file_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.pem");
    std::fs::write(&path, "precious").unwrap();
    let e = write_key_pair(&path, &key(1)).unwrap_err();
    assert_eq!(e.rule, "key-exists");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "precious");
    assert!(!public_key_path(&path).exists());

    // A public half in the way stops the pair before the private key is written.
    let other = dir.path().join("j.pem");
    std::fs::write(public_key_path(&other), "precious").unwrap();
    assert_eq!(
        write_key_pair(&other, &key(1)).unwrap_err().rule,
        "key-exists"
    );
    assert!(!other.exists());
    assert_eq!(
        std::fs::read_to_string(public_key_path(&other)).unwrap(),
        "precious"
    );

    #[cfg(unix)]
    {
        // A dangling link is in the way too: writing through it would create its target.
        let link = dir.path().join("l.pem");
        std::os::unix::fs::symlink(dir.path().join("target"), &link).unwrap();
        assert_eq!(
            write_key_pair(&link, &key(1)).unwrap_err().rule,
            "key-exists"
        );
        assert!(!dir.path().join("target").exists());
    }
    let missing_dir = dir.path().join("no/such/dir/k.pem");
    assert_eq!(
        write_key_pair(&missing_dir, &key(1)).unwrap_err().rule,
        "key-write"
    );
}

fn key_rule(r: Result<impl std::fmt::Debug, KeyError>) -> (&'static str, String) {
    let e = r.unwrap_err();
    assert!(!e.detail.chars().any(char::is_control), "{e}");
    (e.rule, e.detail)
}

#[test]
fn the_wrong_half_or_a_wrong_file_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.pem");
    write_key_pair(&path, &key(3)).unwrap();
    let (rule, detail) = key_rule(read_public_key(&path));
    assert_eq!(rule, "key-is-private");
    assert!(detail.contains(".pub"), "{detail}");
    let (rule, detail) = key_rule(read_signing_key(&public_key_path(&path)));
    assert_eq!(rule, "key-is-public");
    assert!(detail.contains("without .pub"), "{detail}");

    let (rule, detail) = key_rule(read_signing_key(&dir.path().join("none.pem")));
    assert_eq!(rule, "key-read");
    assert!(detail.contains("pinlog key -o FILE"), "{detail}");
    let (rule, _) = key_rule(read_public_key(&dir.path().join("none.pem.pub")));
    assert_eq!(rule, "key-read");

    let write = |name: &str, text: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let garbage = write("garbage\u{1b}[2J.pem", b"not a key\n");
    let (rule, detail) = key_rule(read_signing_key(&garbage));
    assert_eq!(rule, "key-format");
    assert!(detail.contains("<U+001B>[2J"), "{detail}");
    assert_eq!(
        key_rule(read_signing_key(&write("bin", &[0xff, 0xfe]))).0,
        "key-format"
    );
    let big = write("big", &vec![b'A'; 70 << 10]);
    assert_eq!(key_rule(read_signing_key(&big)).0, "key-read");
    let encrypted = write(
        "enc.pem",
        b"-----BEGIN ENCRYPTED PRIVATE KEY-----\nMAA=\n-----END ENCRYPTED PRIVATE KEY-----\n",
    );
    let (rule, detail) = key_rule(read_signing_key(&encrypted));
    assert_eq!(rule, "key-format");
    assert!(
        detail.contains("openssl pkey -in FILE -out NEW"),
        "{detail}"
    );
    let ssh = write(
        "id.pem",
        b"-----BEGIN OPENSSH PRIVATE KEY-----\nMAA=\n-----END OPENSSH PRIVATE KEY-----\n",
    );
    let (rule, detail) = key_rule(read_public_key(&ssh));
    assert_eq!(rule, "key-format");
    assert!(detail.contains("\"OPENSSH PRIVATE KEY\""), "{detail}");
    let truncated = std::fs::read_to_string(&path)
        .unwrap()
        .replace("-----END", "--END");
    assert_eq!(key_rule(SigningKey::from_pem(&truncated)).0, "key-format");
}

#[test]
fn a_weak_public_key_is_refused() {
    // The SPKI of the identity point (small order): anything can be made to verify against it.
    let mut der = vec![
        0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
    ];
    der.push(1);
    der.extend([0u8; 31]);
    let pem = format!(
        "-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----\n",
        BASE64.encode(&der)
    );
    let (rule, detail) = key_rule(PublicKey::from_pem(&pem));
    assert_eq!(rule, "key-format");
    assert!(detail.contains("weak"), "{detail}");
}

#[test]
fn pkcs8_version_2_is_read_and_checked_against_its_seed() {
    use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
    use ed25519_dalek::pkcs8::EncodePrivateKey;
    let inner = ed25519_dalek::SigningKey::from_bytes(&[5; 32]);
    let v2 = inner.to_pkcs8_pem(LineEnding::LF).unwrap();
    assert_eq!(SigningKey::from_pem(&v2).unwrap().public(), key(5).public());
    // Our own writing is version 1, which is shorter.
    assert!(key(5).to_pkcs8_pem().len() < v2.len());
}

// ---- Against OpenSSL ----

/// OpenSSL 3's command line, the second implementation these tests compare with; `.ci/setup`
/// installs it.
fn require_openssl() {
    let ok = Command::new("openssl")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success() && o.stdout.starts_with(b"OpenSSL 3"));
    assert!(
        ok,
        "these tests need OpenSSL 3's command line: run `bash .ci/setup`"
    );
}

fn openssl(dir: &Path, args: &[&str]) -> std::process::Output {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn envelope_of(bytes: &[u8]) -> Envelope {
    read_envelope(bytes).unwrap()
}

#[test]
fn keys_made_by_openssl_sign_and_verify_and_openssl_agrees() {
    require_openssl();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    openssl(d, &["genpkey", "-algorithm", "ed25519", "-out", "k.pem"]);
    openssl(d, &["pkey", "-in", "k.pem", "-pubout", "-out", "k.pem.pub"]);
    let k = read_signing_key(&d.join("k.pem")).unwrap();
    let public = read_public_key(&d.join("k.pem.pub")).unwrap();
    assert_eq!(k.public(), public);

    // The fingerprint is the SHA-256 of the DER SubjectPublicKeyInfo as OpenSSL writes it.
    let der = openssl(
        d,
        &["pkey", "-pubin", "-in", "k.pem.pub", "-outform", "DER"],
    )
    .stdout;
    let hex: String = Sha256::digest(&der)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(public.fingerprint().hex(), hex);

    let bytes = sign(&k, &lock(), T).unwrap();
    let env = envelope_of(&bytes);
    assert_eq!(check(&env, &[public], &lock(), T, Some(HOUR)), Ok(0));

    // OpenSSL verifies our signature over the documented message ...
    std::fs::write(d.join("msg"), env.message()).unwrap();
    std::fs::write(d.join("sig"), env.signature()).unwrap();
    let verify = [
        "pkeyutl",
        "-verify",
        "-pubin",
        "-inkey",
        "k.pem.pub",
        "-rawin",
        "-in",
        "msg",
        "-sigfile",
        "sig",
    ];
    let out = openssl(d, &verify);
    assert!(String::from_utf8_lossy(&out.stdout).contains("Signature Verified Successfully"));
    // ... and not over anything else, so its yes above means something.
    let mut other = env.message();
    *other.last_mut().unwrap() = b' ';
    std::fs::write(d.join("msg"), &other).unwrap();
    let refused = Command::new("openssl")
        .current_dir(d)
        .args(verify)
        .output()
        .unwrap();
    assert!(!refused.status.success());

    // Ed25519 is deterministic: OpenSSL signing the same message makes the same signature.
    std::fs::write(d.join("msg"), env.message()).unwrap();
    openssl(
        d,
        &[
            "pkeyutl", "-sign", "-inkey", "k.pem", "-rawin", "-in", "msg", "-out", "sig2",
        ],
    );
    assert_eq!(std::fs::read(d.join("sig2")).unwrap(), env.signature());
}

#[test]
fn keys_we_write_are_read_by_openssl_byte_for_byte() {
    require_openssl();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let k = generate().unwrap();
    write_key_pair(&d.join("ours.pem"), &k).unwrap();
    openssl(d, &["pkey", "-in", "ours.pem", "-noout"]);
    openssl(d, &["pkey", "-pubin", "-in", "ours.pem.pub", "-noout"]);
    // OpenSSL writes both halves exactly as we did.
    let private = openssl(d, &["pkey", "-in", "ours.pem"]).stdout;
    assert_eq!(private, std::fs::read(d.join("ours.pem")).unwrap());
    let public = openssl(d, &["pkey", "-in", "ours.pem", "-pubout"]).stdout;
    assert_eq!(public, std::fs::read(d.join("ours.pem.pub")).unwrap());
}

#[test]
fn keys_of_other_algorithms_from_openssl_are_refused() {
    require_openssl();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    openssl(d, &["genpkey", "-algorithm", "x25519", "-out", "x.pem"]);
    openssl(d, &["pkey", "-in", "x.pem", "-pubout", "-out", "x.pem.pub"]);
    assert_eq!(key_rule(read_signing_key(&d.join("x.pem"))).0, "key-format");
    assert_eq!(
        key_rule(read_public_key(&d.join("x.pem.pub"))).0,
        "key-format"
    );
    let args = [
        "genpkey",
        "-algorithm",
        "ed25519",
        "-aes-256-cbc",
        "-pass",
        "pass:x",
    ];
    let enc = openssl(d, &args).stdout;
    std::fs::write(d.join("enc.pem"), enc).unwrap();
    let (rule, detail) = key_rule(read_signing_key(&d.join("enc.pem")));
    assert_eq!(rule, "key-format");
    assert!(detail.contains("encrypted"), "{detail}");
}
