//! A tlog-tiles directory built from first principles for sunlight's 300-entry test tree (entry i
//! is `record i`): its tiles hash as published, its root is the one in sunlight's mirror
//! checkpoint, that checkpoint's real witness cosignature verifies, and `--generic` accepts it
//! while pinlog's entry rules refuse it.

use std::path::Path;
use std::process::Command;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use pinlog_log::note::{Note, SignerKey, VerifierKey};
use pinlog_log::publish::prove;
use pinlog_log::tiles::push_entry;
use pinlog_log::Hash;
use pinlog_testkit::differential::python;
use pinlog_testkit::server::{free_port, listening};
use pinlog_verifier::verify_log::{verify_log, Options};
use pinlog_verifier::verify_proof::verify_proof;
use pinlog_verifier::Policy;
use sha2::{Digest, Sha256};

const ORIGIN: &str = "rome2026h1.example.org";
const ROOT: &str = "gw31yQrqZZCcEOPrzX+bpy3nJ6QgngTKn8G1m0i62uU=";
const MIRROR_VKEY: &str =
    "mirror.example.org+3fb148ef+BAAjjch9GyYz0sJsJx7ALhbdAtz2ov0unbzSl1vMp94O";
const MIRROR_COSIG: &str = "\u{2014} mirror.example.org P7FI7wAAAABpVGeAjA1S4pJm6MbcXjX7UUImu4azZtrfcVW2uyr/LXIYlwEJzXC0N0EiZkbqfLdXt/4gVEEuGmxJjAfXKMCISpsJAg==\n";

fn sha_hex(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// The root of a power-of-two run of hashes, pairwise.
fn reduce(mut row: Vec<Hash>) -> Hash {
    while row.len() > 1 {
        row = row.chunks(2).map(|p| Hash::node(&p[0], &p[1])).collect();
    }
    row[0]
}

fn write(dir: &Path, rel: &str, bytes: &[u8]) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

fn log_key() -> SignerKey {
    SignerKey::from_seed(ORIGIN, [5; 32])
}

/// Builds the directory, signed by our key for the origin, with the mirror's cosignature added.
fn build(dir: &Path) {
    let entries: Vec<Vec<u8>> = (0..300)
        .map(|i| format!("record {i}").into_bytes())
        .collect();
    let leaves: Vec<Hash> = entries.iter().map(|e| Hash::leaf(e)).collect();
    let mut b0 = Vec::new();
    entries[..256].iter().for_each(|e| push_entry(&mut b0, e));
    let mut b1 = Vec::new();
    entries[256..].iter().for_each(|e| push_entry(&mut b1, e));
    let cat = |h: &[Hash]| h.iter().flat_map(|h| h.0).collect::<Vec<u8>>();
    let t00 = cat(&leaves[..256]);
    let t01 = cat(&leaves[256..]);
    let left = reduce(leaves[..256].to_vec());
    let t10 = cat(&[left]);
    // Published by sunlight's test data generator (tile/0 and tile/1) and derived with the
    // spec's bundle encoding (entries).
    assert_eq!(
        sha_hex(&t00),
        "66a1d43136a854a5776d5bce14bf101c925fc7d4b32f1be23b658f636ebfcddb"
    );
    assert_eq!(
        sha_hex(&t01),
        "699f078d937f13343d71ad39321757de3ecf391e8d7a1b2015ad38bd36f5d60a"
    );
    assert_eq!(
        sha_hex(&t10),
        "dcef9e571841bfe2defd16306f8a7d69f5054092fb8b7f983970c646f7f5fd85"
    );
    assert_eq!(
        sha_hex(&b0),
        "985287e65b66e7b12f16d01217b32858b6a0f9dae6d00c0431d0db350087f638"
    );
    assert_eq!(
        sha_hex(&b1),
        "9be4acd928d562c359a25b51bfa0d650869670d05861cd7f0da4af5cc5ae0689"
    );
    // 256 + 44 leaves: the root joins the whole left subtree and the 44 on the right.
    let right = {
        let r = &leaves[256..];
        let a = reduce(r[..32].to_vec());
        let b = reduce(r[32..40].to_vec());
        let c = reduce(r[40..44].to_vec());
        Hash::node(&a, &Hash::node(&b, &c))
    };
    assert_eq!(Hash::node(&left, &right).to_base64(), ROOT);

    write(dir, "tile/entries/000", &b0);
    write(dir, "tile/entries/001.p/44", &b1);
    write(dir, "tile/0/000", &t00);
    write(dir, "tile/0/001.p/44", &t01);
    write(dir, "tile/1/000.p/1", &t10);
    let body = format!("{ORIGIN}\n300\n{ROOT}\n");
    let signed = log_key().sign(&body).unwrap();
    write(
        dir,
        "checkpoint",
        format!("{signed}{MIRROR_COSIG}").as_bytes(),
    );
}

fn policy(witnesses: &[&str], quorum: usize) -> Policy {
    Policy {
        log_keys: vec![log_key().verifier()],
        witnesses: witnesses
            .iter()
            .map(|w| VerifierKey::parse(w).unwrap())
            .collect(),
        quorum,
        witness_policy: None,
    }
}

#[test]
fn sunlight_tree_verifies_generically_with_its_witness() {
    let tmp = tempfile::tempdir().unwrap();
    build(tmp.path());
    let generic = |policy| Options {
        policy,
        state: None,
        generic: true,
    };
    let v = verify_log(tmp.path(), &generic(policy(&[MIRROR_VKEY], 1)), |_, _| {}).unwrap();
    assert_eq!(v.opened.checkpoint.root.to_base64(), ROOT);
    assert_eq!(v.opened.cosigned[0].timestamp, 1767139200);

    // "record 0" is not a pinlog entry.
    let strict = Options {
        generic: false,
        ..generic(policy(&[], 0))
    };
    let e = verify_log(tmp.path(), &strict, |_, _| {}).unwrap_err();
    assert_eq!(
        (e.rule, e.at.to_string()),
        ("entry-json", "entry 0".to_string())
    );
}

/// The same tree served by a plain static server (Python's `http.server`) and checked by the
/// auditors' binary over HTTP, then copied with a state and checked again without reading it.
#[test]
fn sunlight_tree_verifies_over_http() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("log");
    build(&dir);
    let port = free_port();
    let mut cmd = Command::new(python());
    cmd.args([
        "-m",
        "http.server",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
    ])
    .current_dir(&dir);
    let _server = listening(cmd, port);
    let url = format!("http://127.0.0.1:{port}");
    let log_vkey = log_key().verifier().to_string();
    let state = tmp.path().join("state");
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_pinlog-verify"))
            .args(["verify-log", &url, "--generic", "--vkey", &log_vkey])
            .args(["--witness", MIRROR_VKEY, "--state", state.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let o = run();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        stdout,
        format!("log OK: {ORIGIN}, 300 entries, root {ROOT}\n")
    );
    // Nothing was added: the bundles are not fetched again, so their loss goes unseen.
    std::fs::remove_dir_all(dir.join("tile/entries")).unwrap();
    let o = run();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("no entry was added"));
}

#[test]
fn proofs_match_the_published_audit_paths() {
    let tmp = tempfile::tempdir().unwrap();
    build(tmp.path());
    // Audit paths computed for this tree with RFC 6962's algorithm in the C2SP notes.
    let want_73 = [
        "ayZSWWn9Mdq6Lkd3N0LQaws7yBT59hLVccJrJJ1ANlE=",
        "A7NtyWreucJAVxyFAWnbOrjDg1+v2EGmfM28SYQGS3w=",
        "VS0N12DMnMYxf5gDDJ7UCGSb4IlzmG+3ojgCfTSuhDo=",
        "pKgsFA0gE9JI05pVZl52YPTwxfz6MErhh0VEoQ9l/Dc=",
        "a0Ps8dK7EeeqxYf5E3rRB6tThqy5FxECi0THmJR2Eqo=",
        "wUlEmkTIXFWdm+kXwhsR80Qj2llCkfxT9cpnXcfN+qc=",
        "tNmI7XQ4V8ZkwmxNSmCn7NPkT8xyTNXzL1L3mvqojcg=",
        "yLG1nn/eywY2+aI+2+hYZWFLKkmVE30DZVCTumCqmbY=",
        "uwaa/GEGqF4PM03Df+GfKIyZ5+fHBsK9y3f1tqCMyf8=",
    ];
    let want_299 = [
        "oJeCE4EcZnD3TghM2hxVfAALwF5llUkBn6elkggA9lg=",
        "G4eeV6kFVP/E3WDpTS13Y8MluAOSE4lmh/6gzH+LKXY=",
        "BwAl1lkfH1Fu+RLO5xSCcQc32AVTRaXrDkBtCAGGR9g=",
        "M96OAKgNKtJ00jDbUN3xCuKP3nVQYySodLLmyR3zgK0=",
        "3JNJ+Xh+0Ahtptl/Z5xRpRmPmORW6Vsdh/o6vAEv7DE=",
    ];
    for (index, want) in [(73u64, &want_73[..]), (299, &want_299[..])] {
        let r = prove(tmp.path(), index).unwrap();
        let got: Vec<String> = r.proof.iter().map(|h| h.to_base64()).collect();
        assert_eq!(got, want, "index {index}");
        assert_eq!(
            r.extra.as_deref(),
            Some(format!("record {index}").as_bytes())
        );
        let p = verify_proof(
            r.to_text().as_bytes(),
            &policy(&[MIRROR_VKEY], 1),
            None,
            true,
        )
        .unwrap();
        assert_eq!(p.index, index);
    }
    // The receipt's extra line is the entry itself, base64.
    let text = prove(tmp.path(), 73).unwrap().to_text();
    assert!(text.contains(&format!("\nextra {}\n", STANDARD.encode("record 73"))));
    // Its checkpoint is the directory's, signatures and all.
    let note = Note::parse(text.split_once("\n\n").unwrap().1.as_bytes()).unwrap();
    assert_eq!(note.signatures.len(), 2);
}
