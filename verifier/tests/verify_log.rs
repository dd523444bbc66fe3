//! Publishing logs from a real SQLite store and verifying the directories: sizes up to three tile
//! levels, tampering with each kind of file, rollbacks and forks caught with a state file,
//! witnesses, receipts.

use std::path::{Path, PathBuf};

use pinlog_log::cosignature::WitnessKey;
use pinlog_log::note::{Note, VerifierKey};
use pinlog_log::publish::{prove, publish, PublishError};
use pinlog_log::store::Store;
use pinlog_log::tiles::TileId;
use pinlog_testkit::fs::files_below;
use pinlog_testkit::log::{append_more, key, store_with, surface, Chain, ORIGIN};
use pinlog_verifier::outcome::Severity;
use pinlog_verifier::verify_log::{verify_log, Options, State, Verified};
use pinlog_verifier::verify_proof::verify_proof;
use pinlog_verifier::{Location, Policy, VerifyError};

fn policy() -> Policy {
    Policy {
        log_keys: vec![key().verifier()],
        witnesses: vec![],
        quorum: 0,
        witness_policy: None,
    }
}

fn options(state: Option<PathBuf>) -> Options {
    Options {
        policy: policy(),
        state: state.as_deref().map(State::at),
        generic: false,
    }
}

fn verify(dir: &Path) -> Result<Verified, VerifyError> {
    verify_log(dir, &options(None), |_, _| {})
}

fn bad(r: Result<Verified, VerifyError>) -> VerifyError {
    let e = r.expect_err("the log must not verify");
    assert_eq!(e.severity, Severity::Bad, "{e}");
    e
}

/// Every file of a published directory, relative paths, sorted.
fn files(dir: &Path) -> Vec<String> {
    files_below(dir, "")
        .iter()
        .map(|p| p.strip_prefix(dir).unwrap().to_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_published_log_verifies_and_has_exactly_its_tiles() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = store_with(&tmp.path().join("log.db"), 1000, 7);
    let out = tmp.path().join("out");
    let p = publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    assert_eq!(p.size, 1000);
    assert!(p.signed);
    let v = verify(&out).unwrap();
    assert_eq!(v.opened.checkpoint.size, 1000);
    assert_eq!(v.opened.checkpoint.root, p.root);
    assert_eq!(v.opened.checkpoint.origin, ORIGIN);

    let mut want: Vec<String> = TileId::all(1000).map(|t| t.path()).collect();
    want.push("checkpoint".into());
    let mut got: Vec<String> = files(&out)
        .into_iter()
        .filter(|f| !f.starts_with("blobs/"))
        .collect();
    want.sort();
    got.sort();
    assert_eq!(got, want);
    // One blob per surface; every entry here has its own.
    assert_eq!(
        files(&out)
            .iter()
            .filter(|f| f.starts_with("blobs/sha256/"))
            .count(),
        1000
    );

    // Publishing again with nothing appended writes nothing and signs nothing.
    let again = publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    assert_eq!(
        (again.signed, again.written, again.root),
        (false, 0, p.root)
    );
}

#[test]
fn three_tile_levels_publish_grow_and_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("log.db");
    let mut store = store_with(&db, 70_000, 500);
    let out = tmp.path().join("out");
    let state = tmp.path().join("state");
    publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    assert!(out.join("tile/2/000.p/1").is_file());
    assert!(out.join("tile/1/001.p/17").is_file());
    assert!(out.join("tile/entries/273.p/112").is_file());
    let v = verify_log(&out, &options(Some(state.clone())), |_, _| {}).unwrap();
    assert_eq!(v.opened.checkpoint.size, 70_000);
    assert_eq!(v.previous_size, None);

    // Grow by a partial tile's worth: the old partial tiles stay, the new ones join them, and
    // both old and new verify; the state proves the growth consistent.
    let mut chain = Chain::from_store(&store);
    append_more(&mut store, &mut chain, 70_000, 70_300, 500);
    let p = publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    assert!(p.signed);
    assert!(
        out.join("tile/0/273.p/112").is_file(),
        "old partial tile kept"
    );
    assert!(out.join("tile/0/274.p/156").is_file());
    let v = verify_log(&out, &options(Some(state.clone())), |_, _| {}).unwrap();
    assert_eq!(v.previous_size, Some(70_000));
    assert_eq!(v.opened.checkpoint.size, 70_300);
}

#[test]
fn one_changed_byte_in_any_file_is_caught() {
    let tmp = tempfile::tempdir().unwrap();
    // 66,000 entries: whole and partial tiles on three levels.
    let mut store = store_with(&tmp.path().join("log.db"), 66_000, 300);
    let out = tmp.path().join("out");
    publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    verify(&out).unwrap();
    let blob = files(&out)
        .into_iter()
        .find(|f| f.starts_with("blobs/"))
        .unwrap();
    let cases: Vec<(String, usize)> = vec![
        ("checkpoint".into(), 3),
        ("checkpoint".into(), 60),
        ("tile/entries/000".into(), 100),
        ("tile/entries/000".into(), 1),
        ("tile/entries/257.p/208".into(), 500),
        ("tile/0/000".into(), 8191),
        ("tile/0/257.p/208".into(), 0),
        ("tile/1/000".into(), 4000),
        ("tile/1/001.p/1".into(), 31),
        ("tile/2/000.p/1".into(), 16),
        (blob.clone(), 40),
    ];
    for (file, at) in cases {
        let path = out.join(&file);
        let original = std::fs::read(&path).unwrap();
        let mut changed = original.clone();
        changed[at] ^= 0x01;
        std::fs::write(&path, &changed).unwrap();
        let e = bad(verify(&out));
        std::fs::write(&path, &original).unwrap();
        match &e.at {
            Location::Checkpoint => assert_eq!(file, "checkpoint", "{e}"),
            Location::File(f) => assert_eq!(*f, file, "{e}"),
            // A changed entry breaks the entry rules first, or a blob's.
            Location::Entry(_) => assert!(file.starts_with("tile/entries/"), "{file}: {e}"),
            other => panic!("{file}: {other:?}"),
        }
    }
    // A deleted tile, and a truncated one.
    let path = out.join("tile/1/000");
    let original = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(bad(verify(&out)).rule, "missing");
    std::fs::write(&path, &original[..8160]).unwrap();
    assert_eq!(bad(verify(&out)).rule, "tile-mismatch");
    std::fs::write(&path, &original).unwrap();
    // A stale partial tile that disagrees with the whole tile that replaced it.
    let stale = out.join("tile/0/000.p/3");
    std::fs::create_dir_all(stale.parent().unwrap()).unwrap();
    std::fs::write(&stale, vec![0u8; 96]).unwrap();
    let e = bad(verify(&out));
    assert_eq!(e.at, Location::File("tile/0/000.p/3".into()));
    std::fs::remove_file(&stale).unwrap();
    verify(&out).unwrap();
}

#[test]
fn a_rollback_and_a_fork_fail_with_state() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    // Log A at 300 entries, verified and remembered.
    let mut a = store_with(&tmp.path().join("a.db"), 300, 5);
    let a_dir = tmp.path().join("a");
    publish(&mut a, &key(), &a_dir, |_, _| {}).unwrap();
    let a_300 = tmp.path().join("a300");
    copy_dir(&a_dir, &a_300);
    verify_log(&a_dir, &options(Some(state.clone())), |_, _| {}).unwrap();
    // A grows to 400 and verifies against the state.
    let mut chain = Chain::from_store(&a);
    append_more(&mut a, &mut chain, 300, 400, 5);
    publish(&mut a, &key(), &a_dir, |_, _| {}).unwrap();
    verify_log(&a_dir, &options(Some(state.clone())), |_, _| {}).unwrap();

    // Serving the old copy now is a rollback.
    let e = bad(verify_log(&a_300, &options(Some(state.clone())), |_, _| {}));
    assert_eq!(e.rule, "rollback");

    // Log B: same key and origin, the same first 300 entries, then 100 other ones; a split view.
    let mut b = store_with(&tmp.path().join("b.db"), 300, 5);
    let mut chain = Chain::from_store(&b);
    append_more(&mut b, &mut chain, 300, 400, 7);
    let b_dir = tmp.path().join("b");
    publish(&mut b, &key(), &b_dir, |_, _| {}).unwrap();
    verify(&b_dir).unwrap();
    let e = bad(verify_log(&b_dir, &options(Some(state.clone())), |_, _| {}));
    assert_eq!(e.rule, "fork");
    // B grown past A: the fork is found on the way, at A's size.
    let mut chain = Chain::from_store(&b);
    append_more(&mut b, &mut chain, 400, 450, 7);
    publish(&mut b, &key(), &b_dir, |_, _| {}).unwrap();
    let e = bad(verify_log(&b_dir, &options(Some(state.clone())), |_, _| {}));
    assert_eq!(e.rule, "fork");
    // The state still holds A's 400, and A still verifies.
    verify_log(&a_dir, &options(Some(state)), |_, _| {}).unwrap();

    // The publisher itself refuses to sign B's tree over A's directory.
    let r = publish(&mut b, &key(), &a_dir, |_, _| {});
    assert!(matches!(r, Err(PublishError::Refused(_))), "{r:?}");
    verify(&a_dir).unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    for f in files(from) {
        let dst = to.join(&f);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(from.join(&f), dst).unwrap();
    }
}

#[test]
fn witnesses_count_toward_a_quorum() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = store_with(&tmp.path().join("log.db"), 50, 3);
    let out = tmp.path().join("out");
    publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    let w1 = WitnessKey::from_seed("w1.example", [1; 32]);
    let w2 = WitnessKey::from_seed("w2.example", [2; 32]);
    let w3 = WitnessKey::from_seed("w3.example", [3; 32]);
    let path = out.join("checkpoint");
    let mut note = Note::parse(&std::fs::read(&path).unwrap()).unwrap();
    let text = note.text.clone();
    note.signatures.push(w1.cosign(&text, 1_800_000_000));
    note.signatures.push(w2.cosign(&text, 1_800_000_001));
    std::fs::write(&path, note.to_text()).unwrap();
    let with = |quorum: usize, ws: &[&WitnessKey]| Options {
        policy: Policy {
            log_keys: vec![key().verifier()],
            witnesses: ws
                .iter()
                .map(|w| VerifierKey::parse(&w.vkey()).unwrap())
                .collect(),
            quorum,
            witness_policy: None,
        },
        state: None,
        generic: false,
    };
    let v = verify_log(&out, &with(2, &[&w1, &w2, &w3]), |_, _| {}).unwrap();
    assert_eq!(v.opened.cosigned.len(), 2);
    // Publishing again with nothing new keeps the cosigned checkpoint as it is.
    let cosigned = std::fs::read(&path).unwrap();
    let again = publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    assert_eq!((again.signed, again.written), (false, 0));
    assert_eq!(std::fs::read(&path).unwrap(), cosigned);
    let e = bad(verify_log(&out, &with(3, &[&w1, &w2, &w3]), |_, _| {}));
    assert_eq!(e.rule, "witness-quorum");
    // A cosignature that does not verify fails, whatever the quorum.
    note.signatures[2].sig[20] ^= 1;
    std::fs::write(&path, note.to_text()).unwrap();
    let e = bad(verify_log(&out, &with(1, &[&w1, &w2]), |_, _| {}));
    assert_eq!(e.rule, "cosignature");
    // The log's own key is still required: witnesses alone are not enough.
    let mut only_witnessed = Note::parse(&std::fs::read(&path).unwrap()).unwrap();
    only_witnessed.signatures.remove(0);
    only_witnessed.signatures.pop();
    std::fs::write(&path, only_witnessed.to_text()).unwrap();
    let e = bad(verify_log(&out, &with(1, &[&w1]), |_, _| {}));
    assert_eq!(e.rule, "checkpoint-signature");
}

#[test]
fn a_key_beside_the_data_is_not_trusted() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = store_with(&tmp.path().join("log.db"), 20, 2);
    let out = tmp.path().join("out");
    publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    // Someone re-signs the checkpoint with their own key of the same name.
    let impostor = pinlog_log::note::SignerKey::from_seed(ORIGIN, [9; 32]);
    let note = Note::parse(&std::fs::read(out.join("checkpoint")).unwrap()).unwrap();
    std::fs::write(out.join("checkpoint"), impostor.sign(&note.text).unwrap()).unwrap();
    std::fs::write(out.join("vkey"), impostor.verifier().to_string()).unwrap();
    let e = bad(verify(&out));
    assert_eq!(e.rule, "checkpoint-signature");
    assert_eq!(e.at, Location::Checkpoint);
}

#[test]
fn receipts_prove_one_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = store_with(&tmp.path().join("log.db"), 600, 4);
    let out = tmp.path().join("out");
    publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    for index in [0, 1, 255, 256, 511, 599] {
        let r = prove(&out, index).unwrap();
        let text = r.to_text();
        let p = verify_proof(text.as_bytes(), &policy(), None, false).unwrap();
        assert_eq!(p.index, index);
        assert!(p.entry.unwrap().server.as_str().starts_with("npm:server-"));
        verify_proof(text.as_bytes(), &policy(), Some(&out), false).unwrap();
        // Another entry's bytes under this index do not prove.
        let mut wrong = r.clone();
        wrong.index = (index + 1) % 600;
        let e = verify_proof(wrong.to_text().as_bytes(), &policy(), None, false).unwrap_err();
        assert_eq!(e.rule, "inclusion");
        // Without the entry, the directory supplies it.
        let mut bare = r.clone();
        bare.extra = None;
        verify_proof(bare.to_text().as_bytes(), &policy(), Some(&out), false).unwrap();
        assert_eq!(
            verify_proof(bare.to_text().as_bytes(), &policy(), None, false)
                .unwrap_err()
                .severity,
            Severity::Unreadable
        );
    }
    assert!(matches!(
        prove(&out, 600),
        Err(PublishError::CannotProve(_))
    ));

    // A receipt naming an index past the end, without its entry, is refused, not a crash.
    let mut past = prove(&out, 5).unwrap();
    past.extra = None;
    for index in [600, 601, 5_000_000] {
        past.index = index;
        let e = verify_proof(past.to_text().as_bytes(), &policy(), Some(&out), false).unwrap_err();
        assert_eq!((e.severity, e.rule), (Severity::Bad, "inclusion"), "{e}");
    }
}

#[test]
fn a_receipt_is_not_in_a_copy_whose_tiles_are_not_what_its_key_signed() {
    let tmp = tempfile::tempdir().unwrap();
    let a_dir = tmp.path().join("a");
    let b_dir = tmp.path().join("b");
    // A: three entries. B: the same first entry, then others: a fork under the same key.
    let mut a = store_with(&tmp.path().join("a.db"), 3, 3);
    publish(&mut a, &key(), &a_dir, |_, _| {}).unwrap();
    let mut b = Store::create(&tmp.path().join("b.db"), ORIGIN).unwrap();
    let mut chain = Chain::default();
    let first = first_entry(&a);
    chain.replay(&first);
    b.append(&first, Some(surface(0).bytes())).unwrap();
    for i in 1..5u64 {
        let s = surface(100 + i);
        b.append(&chain.entry(&format!("other-{i}"), &s, 10), Some(s.bytes()))
            .unwrap();
    }
    publish(&mut b, &key(), &b_dir, |_, _| {}).unwrap();
    let receipt = prove(&a_dir, 1).unwrap().to_text();
    verify_proof(receipt.as_bytes(), &policy(), Some(&a_dir), false).unwrap();
    let e = verify_proof(receipt.as_bytes(), &policy(), Some(&b_dir), false).unwrap_err();
    assert_eq!(e.rule, "not-in-this-log", "{e}");
    // B's level-0 tile doctored so that its first three leaves are A's: B's own checkpoint no
    // longer matches its tiles, and the receipt is not taken as B's.
    let mut leaves = Vec::new();
    a.for_each_entry(0, false, |e| {
        leaves.extend_from_slice(&e.leaf.0);
        Ok::<_, pinlog_log::store::StoreError>(())
    })
    .unwrap();
    let tile = b_dir.join("tile/0/000.p/5");
    let mut doctored = std::fs::read(&tile).unwrap();
    doctored[..96].copy_from_slice(&leaves);
    std::fs::write(&tile, doctored).unwrap();
    let e = verify_proof(receipt.as_bytes(), &policy(), Some(&b_dir), false).unwrap_err();
    assert_eq!(
        (e.severity, e.rule),
        (Severity::Bad, "root-mismatch"),
        "{e}"
    );
}

fn first_entry(store: &Store) -> Vec<u8> {
    let mut first = None;
    store
        .for_each_entry(0, true, |e| {
            first.get_or_insert(e.body);
            Ok::<_, pinlog_log::store::StoreError>(())
        })
        .unwrap();
    first.unwrap()
}

#[test]
fn concurrent_appenders_lose_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("log.db");
    Store::create(&db, ORIGIN).unwrap();
    let workers: Vec<_> = (0..2u64)
        .map(|w| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut store = Store::open(&db).unwrap();
                for i in 0..300u64 {
                    // Distinct servers per worker; one time for all so order never matters.
                    let s = surface(w * 1000 + i);
                    let mut chain = Chain::default();
                    let body = chain.entry(&format!("w{w}-s{i}"), &s, 0);
                    store.append(&body, Some(s.bytes())).unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let mut store = Store::open(&db).unwrap();
    assert_eq!(store.size().unwrap(), 600);
    let out = tmp.path().join("out");
    publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    verify(&out).unwrap();
}

/// Copies a store's database, closed, so that the copy holds everything committed.
fn copy_store(store: Store, from: &Path, to: &Path) {
    drop(store);
    std::fs::copy(from, to).unwrap();
}

#[test]
fn leftovers_of_an_interrupted_publish_of_another_tree_are_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("log.db");
    let backup = tmp.path().join("backup.db");
    let out = tmp.path().join("out");
    let mut store = store_with(&db, 5, 2);
    publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    let served_5 = std::fs::read(out.join("checkpoint")).unwrap();
    copy_store(store, &db, &backup);
    // Two more entries published, then the run is undone as if it had died before serving its
    // checkpoint, and the store is restored from its backup.
    let mut store = Store::open(&db).unwrap();
    let mut chain = Chain::from_store(&store);
    append_more(&mut store, &mut chain, 5, 7, 2);
    publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    assert!(out.join("tile/0/000.p/7").exists());
    std::fs::write(out.join("checkpoint"), &served_5).unwrap();
    drop(store);
    for f in ["log.db-wal", "log.db-shm"] {
        let _ = std::fs::remove_file(tmp.path().join(f));
    }
    std::fs::copy(&backup, &db).unwrap();
    // Two other entries: the leftover size-7 tiles are of another tree and must not stand.
    let mut store = Store::open(&db).unwrap();
    let mut chain = Chain::from_store(&store);
    append_more(&mut store, &mut chain, 5, 7, 3);
    publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    let v = verify(&out).unwrap();
    assert_eq!(v.opened.checkpoint.size, 7);
}

#[test]
fn a_publish_never_serves_over_one_made_meanwhile() {
    let tmp = tempfile::tempdir().unwrap();
    let a_db = tmp.path().join("a.db");
    let b_db = tmp.path().join("b.db");
    let out = tmp.path().join("out");
    let mut a = store_with(&a_db, 5, 2);
    publish(&mut a, &key(), &out, |_, _| {}).unwrap();
    copy_store(a, &a_db, &b_db);
    let mut a = Store::open(&a_db).unwrap();
    let mut b = Store::open(&b_db).unwrap();
    let mut chain = Chain::from_store(&b);
    append_more(&mut b, &mut chain, 5, 6, 2);
    // While A publishes, a replica B publishes one entry more to the same directory.
    let mut done = false;
    let r = publish(&mut a, &key(), &out, |_, _| {
        if !done {
            done = true;
            publish(&mut b, &key(), &out, |_, _| {}).unwrap();
        }
    });
    assert!(
        matches!(r, Err(PublishError::Refused(ref why)) if why.contains("changed while publishing")),
        "{r:?}"
    );
    assert_eq!(verify(&out).unwrap().opened.checkpoint.size, 6);
}
