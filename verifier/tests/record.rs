//! The public record: a published log, verified, then asked about one server's surface.

use std::time::{Duration, UNIX_EPOCH};

use pinlog_core::json::{parse, Limits};
use pinlog_core::manifest::{Manifest, ManifestServer};
use pinlog_core::package::{Package, Registry};
use pinlog_core::{Digest, ServerId};
use pinlog_log::publish::publish;
use pinlog_log::source::Dir;
use pinlog_testkit::log::{key, store_with, surface};
use pinlog_verifier::record::{Compared, Outcome, PublicRecord};
use pinlog_verifier::verify_log::{Options, State};
use pinlog_verifier::Policy;

fn options(state: Option<State>) -> Options {
    Options {
        policy: Policy {
            log_keys: vec![key().verifier()],
            witnesses: vec![],
            quorum: 0,
            witness_policy: None,
        },
        state,
        generic: false,
    }
}

fn id(s: &str) -> ServerId {
    s.parse().unwrap()
}

#[test]
fn each_server_is_compared_with_its_last_entry() {
    let tmp = tempfile::tempdir().unwrap();
    // 30 entries over 4 servers: server-k's last entry is the largest i < 30 with i % 4 == k.
    let mut store = store_with(&tmp.path().join("log.db"), 30, 4);
    let out = tmp.path().join("pub");
    publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    let record = PublicRecord::open(Dir(&out), &options(None)).unwrap();
    assert_eq!(record.checkpoint().size, 30);

    let latest = surface(29).surface();
    match record
        .compare(&id("npm:server-1"), Some("1.0.0"), &latest)
        .unwrap()
    {
        Compared::Matches(o) => {
            assert_eq!(o.index, 29);
            assert_eq!(o.version.as_deref(), Some("1.0.0"));
            assert_eq!(o.since.as_str(), "2026-01-01T00:00:07Z");
        }
        other => panic!("{other:?}"),
    }
    // server-1 served surface 25 before: the record holds 29, and gives its blob.
    let older = surface(25).surface();
    match record.compare(&id("npm:server-1"), None, &older).unwrap() {
        Compared::Differs(o, blob) => {
            assert_eq!(o.index, 29);
            assert_eq!(blob.surface(), latest);
            assert_eq!(blob.bytes(), surface(29).bytes());
        }
        other => panic!("{other:?}"),
    }
    let any = Digest::of(b"anything");
    assert!(matches!(
        record.compare(&id("npm:server-9"), None, &any).unwrap(),
        Compared::Absent
    ));
    assert!(matches!(
        record
            .compare(&id("remote:https://server-1.example/mcp"), None, &any)
            .unwrap(),
        Compared::Absent
    ));
}

#[test]
fn a_record_opened_from_a_state_reads_only_what_was_added() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = store_with(&tmp.path().join("log.db"), 300, 3);
    let out = tmp.path().join("pub");
    publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    let state = State::at(&tmp.path().join("state"));
    PublicRecord::open(Dir(&out), &options(Some(state.clone()))).unwrap();
    // Opened again from the state, the index comes from the rules file: the first bundle is not
    // read (it is gone), and the answers are the same.
    std::fs::remove_file(out.join("tile/entries/000")).unwrap();
    let record = PublicRecord::open(Dir(&out), &options(Some(state))).unwrap();
    let last = surface(299).surface();
    match record.compare(&id("npm:server-2"), None, &last).unwrap() {
        Compared::Matches(o) => assert_eq!(o.index, 299),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_log_that_does_not_verify_is_never_used() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = store_with(&tmp.path().join("log.db"), 30, 4);
    let out = tmp.path().join("pub");
    publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    let tile = out.join("tile/0/000.p/30");
    let mut bytes = std::fs::read(&tile).unwrap();
    bytes[5] ^= 1;
    std::fs::write(&tile, bytes).unwrap();
    let e = PublicRecord::open(Dir(&out), &options(None)).err().unwrap();
    assert_eq!(e.rule, "tile-mismatch");
}

#[test]
fn each_server_of_a_manifest_stands_where_its_package_does() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = store_with(&tmp.path().join("log.db"), 30, 4);
    let out = tmp.path().join("pub");
    publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    let record = PublicRecord::open(Dir(&out), &options(None)).unwrap();
    // Surface 29, server-1's last, as a manifest holds it.
    let blob = surface(29);
    let tree = parse(blob.bytes(), Limits::default()).unwrap();
    let member = |name: &str| tree.as_object().unwrap().get(name).unwrap().clone();
    let server = |id: &str, package: Option<&str>| ManifestServer {
        id: id.into(),
        reported_name: None,
        protocol_version: "2025-11-25".into(),
        passes: 2,
        instructions: member("instructions").as_str().map(str::to_string),
        package: package.map(|name| Package {
            registry: Registry::Npm,
            name: name.into(),
            version: Some("1.0.0".into()),
            digest: None,
        }),
        tools: member("tools").as_array().unwrap().to_vec(),
        prompts: member("prompts").as_array().unwrap().to_vec(),
    };
    let manifest = Manifest {
        protocol_version: "2025-11-25".into(),
        complete: true,
        captured_at: "2026-12-01T00:00:00Z".into(),
        captured_by: "test".into(),
        scope: None,
        servers: vec![
            server("one", Some("server-1")),
            server("two", Some("server-2")),
            server("nine", Some("server-9")),
            server("local", None),
        ],
    };
    // Entry 29 was observed at 2026-01-01T00:00:07Z (1767225607); three days and an hour on.
    let now = UNIX_EPOCH + Duration::from_secs(1_767_225_607 + 3 * 86_400 + 3_600);
    let standings = record.standings(&manifest, now).unwrap();
    let ids: Vec<_> = standings.iter().map(|s| s.server.as_str()).collect();
    assert_eq!(ids, ["one", "two", "nine", "local"]);
    match &standings[0].outcome {
        Outcome::Matches { observed, days } => {
            assert_eq!((observed.index, *days), (29, 3));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        standings[0].identity.as_ref().unwrap().id.as_str(),
        "npm:server-1"
    );
    // server-2's last entry is 26 (the largest i < 30 with i % 4 == 2), with surface 26.
    match &standings[1].outcome {
        Outcome::Differs { observed, public } => {
            assert_eq!(observed.index, 26);
            assert_eq!(public.bytes(), surface(26).bytes());
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(standings[2].outcome, Outcome::Absent));
    assert!(matches!(standings[3].outcome, Outcome::NoIdentity(_)));
    assert!(standings[3].identity.is_none());
    assert_eq!(
        standings[1].outcome.words(),
        "differs from the public record"
    );
}
