//! Publishing refuses to sign over what it signed before, whatever happened to the store.

use pinlog_log::publish::{publish, PublishError};
use pinlog_testkit::log::{append_more, key, store_with, Chain};

fn refused(r: Result<pinlog_log::publish::Published, PublishError>) -> String {
    match r {
        Err(PublishError::Refused(why)) => why,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_damaged_or_shrunk_store_is_never_signed() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("log.db");
    let mut store = store_with(&db, 600, 6);
    let out = tmp.path().join("out");
    publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    let mut chain = Chain::from_store(&store);
    append_more(&mut store, &mut chain, 600, 650, 6);
    let sql = rusqlite::Connection::open(&db).unwrap();

    // An entry not yet published whose body no longer hashes to its leaf: the store is damaged.
    let good_leaf: Vec<u8> = sql
        .query_row("SELECT leaf FROM entries WHERE idx = 620", [], |r| r.get(0))
        .unwrap();
    sql.execute("UPDATE entries SET leaf = zeroblob(32) WHERE idx = 620", [])
        .unwrap();
    let why = refused(publish(&mut store, &key(), &out, |_, _| {}));
    assert!(
        why.contains("entry 620 in the store does not hash"),
        "{why}"
    );
    sql.execute("UPDATE entries SET leaf = ?1 WHERE idx = 620", [&good_leaf])
        .unwrap();

    // A leaf hash changed under a signed checkpoint: the tree no longer extends it.
    sql.execute("UPDATE entries SET leaf = zeroblob(32) WHERE idx = 5", [])
        .unwrap();
    let fresh = tmp.path().join("fresh");
    let why = refused(publish(&mut store, &key(), &fresh, |_, _| {}));
    assert!(why.contains("last checkpoint this store signed"), "{why}");
    assert!(!fresh.join("checkpoint").exists());
    let why = refused(publish(&mut store, &key(), &out, |_, _| {}));
    assert!(why.contains("refusing to sign a fork"), "{why}");

    // Entries lost below a signed size.
    sql.execute("DELETE FROM entries WHERE idx >= 590", [])
        .unwrap();
    let why = refused(publish(&mut store, &key(), &out, |_, _| {}));
    assert!(why.contains("has lost entries"), "{why}");

    // The served directory is left as the first publish made it.
    let served = std::fs::read_to_string(out.join("checkpoint")).unwrap();
    assert!(served.contains("\n600\n"), "{served}");
}

#[test]
fn a_key_for_another_log_or_a_foreign_directory_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = store_with(&tmp.path().join("log.db"), 10, 2);
    let other = pinlog_log::note::SignerKey::from_seed("example.org/other", [8; 32]);
    let out = tmp.path().join("out");
    let why = refused(publish(&mut store, &other, &out, |_, _| {}));
    assert!(why.contains("sign with the log's own key"), "{why}");
    // A directory whose checkpoint this key did not sign.
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(
        out.join("checkpoint"),
        other
            .sign("example.org/other\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n")
            .unwrap(),
    )
    .unwrap();
    let why = refused(publish(&mut store, &key(), &out, |_, _| {}));
    assert!(why.contains("is not signed by this log's key"), "{why}");
}
