//! verify-log with a witness policy file: its groups' quorum over the checkpoint's cosignatures,
//! with witness keys given as vkeys or in Sigsum's hex form, and its `log` line standing for the
//! log's key.

use std::path::Path;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use pinlog_log::cosignature::WitnessKey;
use pinlog_log::note::Note;
use pinlog_log::publish::publish;
use pinlog_log::witness_policy::WitnessPolicy;
use pinlog_testkit::log::{key, store_with};
use pinlog_verifier::outcome::Severity;
use pinlog_verifier::verify_log::{verify_log, Options};
use pinlog_verifier::Policy;

fn hex(vkey: &str) -> String {
    let raw = STANDARD
        .decode(vkey.splitn(3, '+').nth(2).unwrap())
        .unwrap();
    raw[1..].iter().map(|b| format!("{b:02x}")).collect()
}

fn check(dir: &Path, policy_text: &str) -> Result<usize, String> {
    let wp = WitnessPolicy::parse(policy_text.as_bytes()).unwrap();
    let options = Options {
        policy: Policy {
            log_keys: vec![key().verifier()],
            witnesses: Vec::new(),
            quorum: 0,
            witness_policy: Some(wp),
        },
        state: None,
        generic: false,
    };
    match verify_log(dir, &options, |_, _| {}) {
        Ok(v) => Ok(v.opened.checkpoint.size as usize),
        Err(e) => {
            assert_eq!(e.severity, Severity::Bad, "{e}");
            Err(format!("{}: {e}", e.rule))
        }
    }
}

#[test]
fn the_policy_quorum_is_applied_to_the_cosignatures_served() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = store_with(&tmp.path().join("log.db"), 20, 3);
    let out = tmp.path().join("out");
    publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    let ws: Vec<_> = (1..=3)
        .map(|i| WitnessKey::from_seed(&format!("w{i}.example/witness"), [i; 32]))
        .collect();
    let path = out.join("checkpoint");
    let mut note = Note::parse(&std::fs::read(&path).unwrap()).unwrap();
    let text = note.text.clone();
    note.signatures.push(ws[0].cosign(&text, 1_800_000_000));
    note.signatures.push(ws[2].cosign(&text, 1_800_000_002));
    std::fs::write(&path, note.to_text()).unwrap();

    // w1 as a vkey, w2 and w3 in hex: a hex key counts the line under the name it carries.
    let witnesses = format!(
        "log {}\nwitness one {}\nwitness two {}\nwitness three {}\n",
        key().verifier(),
        ws[0].vkey(),
        hex(&ws[1].vkey()),
        hex(&ws[2].vkey()),
    );
    let with = |quorum: &str| format!("{witnesses}{quorum}");
    assert_eq!(
        check(&out, &with("group g 2 one two three\nquorum g\n")),
        Ok(20)
    );
    assert_eq!(
        check(&out, &with("group g any two three\nquorum g\n")),
        Ok(20)
    );
    let e = check(&out, &with("group g all one two three\nquorum g\n")).unwrap_err();
    assert_eq!(
        e,
        "witness-quorum: checkpoint: witness-quorum: the witness policy's quorum 3 of (one, two, \
         three) is not met; cosigned by one, three"
    );
    let e = check(&out, &with("quorum two\n")).unwrap_err();
    assert!(
        e.contains("cosigned by none of its witnesses") || e.contains("is not met"),
        "{e}"
    );
    // A forged line under a witness's name fails, whatever the quorum.
    note.signatures[2].sig[30] ^= 1;
    std::fs::write(&path, note.to_text()).unwrap();
    let e = check(&out, &with("group g any one two\nquorum g\n")).unwrap_err();
    assert!(e.starts_with("cosignature:"), "{e}");
}
