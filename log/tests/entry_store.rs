//! The entry format's rules, and the store's: each refusal names its rule, and a refused append
//! writes nothing.

use pinlog_log::entry::{Entry, Timestamp};
use pinlog_log::store::{Store, StoreError};
use pinlog_testkit::log::{surface, Chain, ORIGIN};
use serde_json::{json, Value};

/// A valid first entry, as a JSON value to edit.
fn good() -> Value {
    let body = Chain::default().entry("pkg", &surface(1), 0);
    serde_json::from_slice(&body).unwrap()
}

/// Compact with sorted keys: RFC 8785 for the ASCII-only, integer-only values used here.
fn bytes(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap()
}

/// A change to a good entry.
type Edit = Box<dyn Fn(&mut Value)>;

fn rule(v: &Value) -> &'static str {
    Entry::read(&bytes(v)).unwrap_err().rule
}

#[test]
fn a_written_entry_reads_back_as_itself() {
    let body = Chain::default().entry("pkg", &surface(4), 0);
    let e = Entry::read(&body).unwrap();
    assert_eq!(e.to_bytes().unwrap(), body);
    assert_eq!(e.server.as_str(), "npm:pkg");
    assert!(e.previous.is_none());
    // serde_json agrees the bytes are compact, sorted JSON.
    assert_eq!(bytes(&serde_json::from_slice(&body).unwrap()), body);
}

#[test]
fn each_broken_rule_is_named() {
    let mut spaced = bytes(&good());
    spaced.insert(1, b' ');
    assert_eq!(
        Entry::read(&spaced).unwrap_err().rule,
        "entry-not-canonical"
    );
    assert_eq!(Entry::read(b"{\"v\":1,").unwrap_err().rule, "entry-json");

    let edits: Vec<(&str, Edit)> = vec![
        ("entry-field", Box::new(|v| v["extra"] = json!(1))),
        (
            "entry-field",
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("labels");
            }),
        ),
        ("entry-version", Box::new(|v| v["v"] = json!(2))),
        // Another version may add members; it is named as the version it is.
        (
            "entry-version",
            Box::new(|v| {
                v["v"] = json!(2);
                v["new_member"] = json!(true);
            }),
        ),
        ("entry-field", Box::new(|v| v["server"] = json!("cargo:x"))),
        ("entry-field", Box::new(|v| v["server"] = json!("npm:a b"))),
        (
            "entry-field",
            Box::new(|v| v["observed_at"] = json!("2026-02-29T00:00:00Z")),
        ),
        (
            "entry-field",
            Box::new(|v| v["observed_at"] = json!("2026-01-01T24:00:00Z")),
        ),
        (
            "entry-field",
            Box::new(|v| v["observed_at"] = json!("2026-01-01t00:00:00z")),
        ),
        ("entry-field", Box::new(|v| v["labels"] = json!(["b", "a"]))),
        ("entry-field", Box::new(|v| v["labels"] = json!(["a", "a"]))),
        ("entry-field", Box::new(|v| v["labels"] = json!(["Upper"]))),
        (
            "entry-field",
            Box::new(|v| v["probe"]["env_supplied"] = json!(["1BAD"])),
        ),
        (
            "entry-field",
            Box::new(|v| v["probe"]["env_supplied"] = json!(["API_KEY"])),
        ),
        (
            "entry-field",
            Box::new(|v| v["probe"]["transport"] = json!("carrier-pigeon")),
        ),
        (
            "entry-field",
            Box::new(|v| v["probe"]["crawler"] = json!("has space")),
        ),
        (
            "entry-field",
            Box::new(|v| v["probe"]["sandbox"] = json!("")),
        ),
        (
            "entry-field",
            Box::new(|v| v["tools"] = json!("sha256:ABC")),
        ),
        ("entry-field", Box::new(|v| v["blob"] = json!(7))),
        (
            "entry-surface",
            Box::new(|v| v["prompts"] = v["tools"].clone()),
        ),
        (
            "entry-unchanged",
            Box::new(|v| {
                v["previous"] = json!({"index": 0, "surface": v["surface"].clone()});
            }),
        ),
        (
            "entry-field",
            Box::new(|v| v["previous"] = json!({"index": -1, "surface": v["surface"].clone()})),
        ),
        (
            "entry-json",
            Box::new(|v| {
                v["previous"] =
                    json!({"index": 18014398509481984u64, "surface": v["tools"].clone()});
            }),
        ),
    ];
    for (i, (want, edit)) in edits.iter().enumerate() {
        let mut v = good();
        edit(&mut v);
        assert_eq!(rule(&v), *want, "edit {i}: {v}");
    }
    // A leap day is a day.
    let mut v = good();
    v["observed_at"] = json!("2028-02-29T23:59:59Z");
    Entry::read(&bytes(&v)).unwrap();

    // Each list is within its bounds; together they pass the bundle's 65,535-byte limit.
    let names = |p: char| {
        (0..256)
            .map(|i| format!("{p}{i:03}{}", "X".repeat(124)))
            .collect::<Vec<_>>()
    };
    let mut huge = good();
    huge["probe"]["env_supplied"] = json!(names('A'));
    huge["probe"]["env_placeholders"] = json!(names('B'));
    assert!(bytes(&huge).len() > 65_535);
    assert_eq!(rule(&huge), "entry-too-large");
}

#[test]
fn timestamps_order_as_text() {
    let a = Timestamp::parse("2026-01-01T00:00:09Z").unwrap();
    let b = Timestamp::parse("2026-01-01T00:00:10Z").unwrap();
    assert!(a < b);
    for bad in [
        "2026-1-01T00:00:00Z",
        "2026-01-01 00:00:00Z",
        "1969-12-31T23:59:59Z",
        "2026-01-01T00:00:60Z",
        "2026-04-31T00:00:00Z",
        "2026-01-01T00:00:00+00:00",
        "２026-01-01T00:00:00Z",
    ] {
        assert!(Timestamp::parse(bad).is_none(), "{bad}");
    }
}

fn refused(r: Result<u64, StoreError>) -> &'static str {
    match r {
        Err(StoreError::Entry(e)) => e.rule,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn the_store_holds_entries_to_the_log_tail() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = Store::create(&tmp.path().join("log.db"), ORIGIN).unwrap();
    let mut chain = Chain::default();
    let (s0, s1, s2) = (surface(0), surface(1), surface(2));
    let e0 = chain.entry("a", &s0, 10);
    // Without its blob, a new surface is refused.
    assert_eq!(refused(store.append(&e0, None)), "blob-missing");
    // With the wrong blob, too.
    assert_eq!(refused(store.append(&e0, Some(s1.bytes()))), "blob-digest");
    assert_eq!(store.append(&e0, Some(s0.bytes())).unwrap(), 0);
    // The same entry again: "a" has an entry now, so previous may not be null.
    assert_eq!(
        refused(store.append(&e0, Some(s0.bytes()))),
        "entry-previous"
    );
    // An entry whose previous points elsewhere.
    let mut other = Chain::default();
    other.replay(&chain.entry("b", &s1, 10));
    let wrong = other.entry("a", &s2, 11);
    assert_eq!(
        refused(store.append(&wrong, Some(s2.bytes()))),
        "entry-previous"
    );
    // Time may not go back.
    let early = chain.entry("c", &s2, 9);
    assert_eq!(
        refused(store.append(&early, Some(s2.bytes()))),
        "entry-time"
    );
    // A blob that is not the surface the entry describes.
    let mut lying: Value = serde_json::from_slice(&Chain::default().entry("d", &s1, 20)).unwrap();
    lying["blob"] = json!(pinlog_core::Digest::of(s2.bytes()).to_string());
    assert_eq!(
        refused(store.append(&bytes(&lying), Some(s2.bytes()))),
        "blob-mismatch"
    );
    assert_eq!(store.size().unwrap(), 1);

    // A batch is all or nothing.
    let mut batch_chain = Chain::default();
    batch_chain.replay(&e0);
    let ok = batch_chain.entry("e", &s1, 30);
    let bad = batch_chain.entry("f", &s2, 5);
    let r = store.append_all([(&ok[..], Some(s1.bytes())), (&bad[..], Some(s2.bytes()))]);
    assert!(
        matches!(r, Err(StoreError::Entry(ref e)) if e.rule == "entry-time"),
        "{r:?}"
    );
    assert_eq!(store.size().unwrap(), 1);
    assert_eq!(store.append(&ok, Some(s1.bytes())).unwrap(), 1);
}

#[test]
fn liveness_remembers_the_look_before_a_change() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = Store::create(&tmp.path().join("log.db"), ORIGIN).unwrap();
    let mut chain = Chain::default();
    let id = "npm:pkg".parse().unwrap();
    let t = |s: &str| Timestamp::parse(s).unwrap();
    store
        .append(
            &chain.entry("pkg", &surface(0), 0),
            Some(surface(0).bytes()),
        )
        .unwrap();
    let l = store.liveness(&id).unwrap().unwrap();
    assert_eq!(l.first_seen.as_deref(), Some("2026-01-01T00:00:00Z"));
    assert_eq!(l.last_change.as_deref(), Some("2026-01-01T00:00:00Z"));
    assert_eq!(l.look_before_change, None);
    store
        .record_probe(&id, &t("2026-01-01T01:00:00Z"), Ok(()))
        .unwrap();
    store
        .record_probe(&id, &t("2026-01-01T02:00:00Z"), Err("timeout after 30 s"))
        .unwrap();
    let l = store.liveness(&id).unwrap().unwrap();
    assert_eq!(l.last_ok.as_deref(), Some("2026-01-01T01:00:00Z"));
    assert_eq!(l.last_probe.as_deref(), Some("2026-01-01T02:00:00Z"));
    assert_eq!(l.last_error.as_deref(), Some("timeout after 30 s"));
    // The change seen at 03:00 happened after the good look at 01:00.
    store
        .append(
            &chain.entry("pkg", &surface(1), 3 * 3600),
            Some(surface(1).bytes()),
        )
        .unwrap();
    let l = store.liveness(&id).unwrap().unwrap();
    assert_eq!(
        l.look_before_change.as_deref(),
        Some("2026-01-01T01:00:00Z")
    );
    assert_eq!(l.last_change.as_deref(), Some("2026-01-01T03:00:00Z"));
    assert_eq!(l.last_ok.as_deref(), Some("2026-01-01T03:00:00Z"));
    assert_eq!(l.last_index, Some(1));
    assert!(store
        .liveness(&"npm:other".parse().unwrap())
        .unwrap()
        .is_none());
}

#[test]
fn only_a_pinlog_store_for_this_log_opens() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("log.db");
    assert!(matches!(Store::open(&db), Err(StoreError::Schema(_))));
    Store::create(&db, ORIGIN).unwrap();
    assert!(matches!(
        Store::create(&db, "example.org/other"),
        Err(StoreError::Schema(_))
    ));
    Store::open(&db).unwrap();
    let foreign = tmp.path().join("foreign.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE t (x INTEGER);")
        .unwrap();
    let e = Store::open(&foreign).err().unwrap();
    assert!(e.to_string().contains("not a pinlog store"), "{e}");
    std::fs::write(tmp.path().join("junk.db"), b"not sqlite at all").unwrap();
    assert!(Store::open(&tmp.path().join("junk.db")).is_err());
}

/// Entry 1 of docs/SPEC-log.md section 4.5, as written before arguments were recorded.
const SPEC_EXAMPLE: &str = r#"{"blob":"sha256:8096ead5547b6717aab369438d4b3e2243164e6f87eeaf328430433b582551e7","instructions":null,"labels":["new-server"],"observed_at":"2026-01-01T00:00:00Z","previous":null,"probe":{"crawler":"pinlog/0.1.0","env_placeholders":[],"env_supplied":[],"package_version":"1.0.0","protocol_asked":"2025-06-18","protocol_negotiated":"2025-06-18","sandbox":"bubblewrap","transport":"stdio"},"prompts":"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","server":"npm:@bench/server-1","surface":"sha256:2f6d7a0ee62b6d68330340eedbeb9a129ee51cef669639e2cd8eaa6d37a8d4e8","tools":"sha256:2b7869f47eaec7c044ac4df3fe10c57432dfaab330d5fc1d092a0ca4aa73919d","v":1}"#;

#[test]
fn an_entry_without_argument_placeholders_reads_and_writes_as_before() {
    let e = Entry::read(SPEC_EXAMPLE.as_bytes()).unwrap();
    assert!(e.probe.arg_placeholders.is_empty());
    assert_eq!(e.to_bytes().unwrap(), SPEC_EXAMPLE.as_bytes());
}

#[test]
fn argument_placeholders_are_recorded_only_when_there_are_some() {
    let mut v: Value = serde_json::from_str(SPEC_EXAMPLE).unwrap();
    v["probe"]["arg_placeholders"] = json!(["$2", "--access-token"]);
    let written = bytes(&v);
    let e = Entry::read(&written).unwrap();
    assert_eq!(e.probe.arg_placeholders, ["$2", "--access-token"]);
    assert_eq!(e.to_bytes().unwrap(), written, "one spelling");
    assert!(std::str::from_utf8(&written)
        .unwrap()
        .contains(r#""probe":{"arg_placeholders":["$2","--access-token"],"crawler":"#));

    for (bad, why) in [
        (json!([]), "empty: the member is left out instead"),
        (json!(["--b", "--a"]), "unsorted"),
        (json!(["--a", "--a"]), "repeated"),
        (json!(["token"]), "no dashes"),
        (json!(["--a b"]), "a space"),
        (json!(["--a=pinlog-placeholder"]), "a value"),
        (json!(["$0"]), "position 0"),
        (json!(["$01"]), "a leading zero"),
        (json!(["$1000"]), "past 999"),
        (json!("--a"), "not an array"),
        (json!([7]), "not a string"),
    ] {
        let mut v: Value = serde_json::from_str(SPEC_EXAMPLE).unwrap();
        v["probe"]["arg_placeholders"] = bad;
        assert_eq!(rule(&v), "entry-field", "{why}");
    }
    let mut v: Value = serde_json::from_str(SPEC_EXAMPLE).unwrap();
    v["probe"]["arg_placeholders"] = json!([]);
    let err = Entry::read(&bytes(&v)).unwrap_err();
    assert!(err.detail.contains("never empty"), "{err}");
}
