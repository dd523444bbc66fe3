//! Probing over stdio: real servers from npm and PyPI (installed by `.ci/setup`), and scripted
//! ones for what real servers do not do on demand.

use std::path::PathBuf;

use pinlog_core::json::Value;
use pinlog_core::Listing;
use pinlog_mcp::jsonrpc::UNSUPPORTED_VERSION;
use pinlog_mcp::probe::{probe_stdio, ProbeReport};
use pinlog_mcp::revision::Revision;
use pinlog_mcp::stdio::Launch;
use pinlog_mcp::surface::ProbeOptions;
use pinlog_mcp::{Caps, WireError};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A program installed by `.ci/setup`; a missing one fails the test with what to run.
fn installed(rel: &str) -> PathBuf {
    let p = repo().join(rel);
    assert!(
        p.exists(),
        "{} is missing: run `bash .ci/setup` to install the test servers",
        p.display()
    );
    p
}

fn node_server(package: &str, args: &[&str]) -> Launch {
    let script = installed(&format!(
        ".ci/npm/node_modules/@modelcontextprotocol/{package}/dist/index.js"
    ));
    let mut argv = vec!["node".into(), script.into_os_string()];
    argv.extend(args.iter().map(Into::into));
    Launch {
        argv,
        ..Launch::default()
    }
}

fn venv_server(name: &str) -> Launch {
    Launch {
        argv: vec![installed(&format!(".ci/venv/bin/{name}")).into_os_string()],
        ..Launch::default()
    }
}

fn scripted(behaviour: &str) -> Launch {
    Launch {
        argv: vec![
            installed(".ci/venv/bin/python").into_os_string(),
            repo()
                .join("mcp/tests/fixtures/scripted_server.py")
                .into_os_string(),
            behaviour.into(),
        ],
        ..Launch::default()
    }
}

fn look(launch: &Launch, caps: Caps) -> ProbeReport {
    probe_stdio(launch, &ProbeOptions::default(), caps)
}

fn names(items: &[Value<'_>]) -> Vec<String> {
    items
        .iter()
        .map(|t| {
            t.as_object()
                .and_then(|o| o.get("name"))
                .and_then(Value::as_str)
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn server_everything_over_stdio() {
    let l = look(
        &node_server("server-everything", &["stdio"]),
        Caps::default(),
    );
    let s = l.outcome.unwrap();
    assert_eq!(s.revision, Revision::R2025_11_25);
    assert_eq!(s.reported_name(), Some("mcp-servers/everything"));
    assert!(s.complete);
    assert_eq!(s.passes, 2);
    assert!(s
        .instructions
        .as_deref()
        .unwrap()
        .starts_with("# Everything Server"));
    let tools = names(&s.tools);
    assert!(tools.contains(&"echo".to_string()), "{tools:?}");
    assert!(tools.len() >= 10, "{tools:?}");
    assert!(!s.prompts.is_empty());
    // Every tool digests: the surface is decidable.
    let listing = Listing::from_items(
        s.tools
            .iter()
            .cloned()
            .map(Ok::<_, pinlog_core::json::ReadError>),
    )
    .unwrap();
    assert!(listing.set_hash().is_some());
}

#[test]
fn other_reference_servers_over_stdio() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (node_server("server-memory", &[]), "create_entities"),
        (
            node_server("server-filesystem", &[tmp.path().to_str().unwrap()]),
            "read_text_file",
        ),
        (venv_server("mcp-server-time"), "get_current_time"),
        (venv_server("mcp-server-fetch"), "fetch"),
    ];
    for (launch, tool) in cases {
        let l = look(&launch, Caps::default());
        let s = l
            .outcome
            .unwrap_or_else(|e| panic!("{:?}: {e}", launch.argv));
        assert!(s.complete);
        assert!(
            names(&s.tools).contains(&tool.to_string()),
            "{:?}",
            names(&s.tools)
        );
    }
}

#[test]
fn every_handshake_revision_is_asked_for_and_answered() {
    for revision in [
        Revision::R2024_11_05,
        Revision::R2025_03_26,
        Revision::R2025_06_18,
        Revision::R2025_11_25,
    ] {
        let options = ProbeOptions {
            revision: Some(revision),
            ..ProbeOptions::default()
        };
        let l = probe_stdio(&venv_server("mcp-server-time"), &options, Caps::default());
        assert_eq!(l.outcome.unwrap().revision, revision);
    }
}

#[test]
fn pagination_follows_an_empty_cursor_to_the_end() {
    let s = look(&scripted("paginated"), Caps::default())
        .outcome
        .unwrap();
    assert_eq!(names(&s.tools), ["a", "b", "c", "d"]);
    assert!(s.complete);
    assert_eq!(s.instructions.as_deref(), Some("Scripted for tests."));
}

#[test]
fn a_listing_that_changes_between_readings_is_not_complete() {
    let s = look(&scripted("drift"), Caps::default()).outcome.unwrap();
    assert!(!s.complete);
    let one = ProbeOptions {
        passes: 1,
        ..ProbeOptions::default()
    };
    // One reading proves nothing about completeness either.
    let s = probe_stdio(&scripted("drift"), &one, Caps::default())
        .outcome
        .unwrap();
    assert!(!s.complete);
}

/// What a failure must look like.
type Expect = fn(&WireError) -> bool;

#[test]
fn bad_servers_fail_with_a_named_reason() {
    let small = Caps {
        call_ms: 1_500,
        message_bytes: 1 << 20,
        max_pages: 50,
        shutdown_grace_ms: 500,
        ..Caps::default()
    };
    let cases: [(&str, Expect); 6] = [
        (
            "repeat-cursor",
            |e| matches!(e, WireError::Pagination(m) if m.contains("second time")),
        ),
        (
            "endless",
            |e| matches!(e, WireError::Pagination(m) if m.contains("more than 50 pages")),
        ),
        ("flood", |e| matches!(e, WireError::TooLarge(_))),
        ("silent", |e| matches!(e, WireError::Timeout(_))),
        (
            "duplicate",
            |e| matches!(e, WireError::Malformed(m) if m.contains("duplicate-member")),
        ),
        (
            "bad-version",
            |e| matches!(e, WireError::Protocol(m) if m.contains("1999-01-01")),
        ),
    ];
    for (behaviour, expected) in cases {
        let l = look(&scripted(behaviour), small);
        let e = l.outcome.expect_err(behaviour);
        assert!(expected(&e), "{behaviour}: {e}");
    }
}

#[test]
fn the_servers_own_requests_are_answered_and_undeclared_prompts_not_asked() {
    let s = look(&scripted("pings-first"), Caps::default())
        .outcome
        .unwrap();
    assert_eq!(names(&s.tools), ["a"]);
    let s = look(&scripted("no-prompts"), Caps::default())
        .outcome
        .unwrap();
    assert!(s.prompts.is_empty());
}

#[test]
fn stderr_and_errors_are_kept_as_sent() {
    let l = look(&scripted("escapes"), Caps::default());
    let e = l.outcome.unwrap_err();
    assert!(
        matches!(&e, WireError::Rpc { method, .. } if method == "initialize"),
        "{e}"
    );
    // Kept exactly; rendering is the printer's job.
    assert!(e.to_string().contains('\u{1b}'));
    assert!(String::from_utf8_lossy(&l.stderr.kept).contains("\u{1b}[2J"));
}

#[test]
fn a_command_that_does_not_exist_is_unreachable() {
    let l = look(
        &Launch {
            argv: vec!["/nonexistent/mcp-server".into()],
            ..Launch::default()
        },
        Caps::default(),
    );
    assert!(matches!(l.outcome, Err(WireError::Unreachable(_))));
}

fn with_revision(revision: Option<Revision>) -> ProbeOptions {
    ProbeOptions {
        revision,
        ..ProbeOptions::default()
    }
}

#[test]
fn the_stateless_era_over_stdio() {
    // mcp-server-time, on the Python SDK 2.x, is a real 2026-07-28 server.
    let modern = Some(Revision::R2026_07_28);
    let s = probe_stdio(
        &venv_server("mcp-server-time"),
        &with_revision(modern),
        Caps::default(),
    )
    .outcome
    .unwrap();
    assert_eq!(s.revision, Revision::R2026_07_28);
    assert_eq!(s.reported_name(), Some("mcp-time"));
    assert!(names(&s.tools).contains(&"get_current_time".to_string()));
    assert!(s.complete);
    // A scripted one: paged, with the envelope checked on every request.
    let s = probe_stdio(
        &scripted("stateless"),
        &with_revision(modern),
        Caps::default(),
    )
    .outcome
    .unwrap();
    assert_eq!(names(&s.tools), ["a", "b", "c", "d"]);
    assert_eq!(s.reported_name(), Some("scripted-stateless"));
    assert_eq!(s.instructions.as_deref(), Some("Stateless and scripted."));
    // Asked to initialize, a stateless-only server refuses.
    let e = look(&scripted("stateless"), Caps::default())
        .outcome
        .unwrap_err();
    assert!(
        matches!(&e, WireError::Rpc { error, .. } if error.code == UNSUPPORTED_VERSION),
        "{e}"
    );
}

#[test]
fn auto_follows_the_fallback_rules() {
    let auto = with_revision(None);
    // A server that answers server/discover stays in the stateless era.
    for launch in [venv_server("mcp-server-fetch"), scripted("stateless")] {
        let s = probe_stdio(&launch, &auto, Caps::default())
            .outcome
            .unwrap();
        assert_eq!(s.revision, Revision::R2026_07_28);
    }
    // One that answers "method not found" is started again and initialised.
    let s = probe_stdio(
        &node_server("server-everything", &["stdio"]),
        &auto,
        Caps::default(),
    )
    .outcome
    .unwrap();
    assert_eq!(s.revision, Revision::R2025_11_25);
    assert_eq!(s.reported_name(), Some("mcp-servers/everything"));
    // So is one that answers the probe with a scripted handshake-era error.
    let s = probe_stdio(&scripted("paginated"), &auto, Caps::default())
        .outcome
        .unwrap();
    assert_eq!(s.revision, Revision::R2025_11_25);
    // "Unsupported protocol version" is an answer of the stateless era: no fallback.
    let e = probe_stdio(&scripted("newer-only"), &auto, Caps::default())
        .outcome
        .unwrap_err();
    assert!(
        matches!(&e, WireError::Rpc { error, .. } if error.code == UNSUPPORTED_VERSION),
        "{e}"
    );
}

#[test]
fn stderr_is_capped_and_a_stubborn_server_is_ended() {
    let l = look(&scripted("stderr-flood"), Caps::default());
    assert!(l.outcome.is_ok());
    assert_eq!(l.stderr.kept.len(), Caps::default().stderr_bytes);
    assert_eq!(
        l.stderr.dropped,
        (4 << 20) - Caps::default().stderr_bytes as u64
    );
    // Deaf to the end of its input and to SIGTERM: SIGKILL ends it, and the look is kept.
    let quick = Caps {
        shutdown_grace_ms: 300,
        ..Caps::default()
    };
    let l = look(&scripted("stubborn"), quick);
    assert_eq!(names(&l.outcome.unwrap().tools), ["a"]);
}

#[test]
fn auto_falls_back_only_on_the_era_probe_and_listings_are_capped() {
    // server/discover answered, then the server dies listing: that fault is reported as it is,
    // not hidden behind a handshake the server would refuse.
    let e = probe_stdio(
        &scripted("stateless-crash"),
        &with_revision(None),
        Caps::default(),
    )
    .outcome
    .unwrap_err();
    assert!(matches!(e, WireError::Closed(_)), "{e}");
    let few = Caps {
        max_items: 3,
        ..Caps::default()
    };
    let e = look(&scripted("paginated"), few).outcome.unwrap_err();
    assert!(
        matches!(e, WireError::TooLarge(ref m) if m.contains("more than 3 items")),
        "{e}"
    );
}
