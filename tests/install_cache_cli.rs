//! The crawler's install cache end to end: real packages from the loopback registries, installed
//! once, looked at again without installing, and installed again when the kept tree changed on
//! disk or the registry publishes other bytes for the version.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use pinlog_testkit::crawl::Site;
use pinlog_testkit::output::ok;

const PINLOG: &str = env!("CARGO_BIN_EXE_pinlog");

/// The `install` column of every look at `server`, in order.
fn installs(site: &Site, server: &str) -> Vec<String> {
    site.sql::<String>(&format!(
        "SELECT coalesce(install, '-') FROM crawl_looks WHERE server = '{server}' ORDER BY rowid"
    ))
}

/// Requests for package files (npm tarballs, wheels) the registries have answered so far.
fn downloads(site: &Site) -> usize {
    std::fs::read_to_string(site.path("requests.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("/-/tarballs/") || l.contains("/files/"))
        .count()
}

/// Every file below `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() {
                out.push(e.path());
            }
        }
    }
    out
}

#[test]
fn a_kept_package_is_looked_at_again_without_installing() {
    let site = Site::new(PINLOG);
    site.package(
        "pinlog-fixture-kept",
        "1.0.0",
        serde_json::json!({"description": "Echoes text."}),
    );
    site.seeds(&["npm:pinlog-fixture-kept", "pypi:mcp-server-time"]);
    let reg = site.registries(None, None);
    ok(&site.crawl(&reg, &["--source", "seeds"]));
    assert_eq!(installs(&site, "npm:pinlog-fixture-kept"), ["installed"]);
    assert_eq!(installs(&site, "pypi:mcp-server-time"), ["installed"]);
    let fetched = downloads(&site);
    assert!(fetched >= 2, "both packages were downloaded: {fetched}");

    // Kept read-only: nothing run as the operator writes into a kept tree by mistake.
    let kept = files(&site.path("install-cache/entries"));
    assert!(kept.len() > 10, "{kept:?}");
    for f in &kept {
        let mode = std::fs::symlink_metadata(f).unwrap().permissions().mode();
        assert_eq!(mode & 0o222, 0, "{} is writable", f.display());
    }

    // The same versions again, today: both looked at from the cache, nothing downloaded.
    let out = ok(&site.crawl(&reg, &["--source", "seeds", "--relook"]));
    assert!(
        out.contains("looked at 2: 2 ok (0 new, 0 changed, 2 unchanged)"),
        "{out}"
    );
    assert_eq!(
        installs(&site, "npm:pinlog-fixture-kept"),
        ["installed", "kept"]
    );
    assert_eq!(
        installs(&site, "pypi:mcp-server-time"),
        ["installed", "kept"]
    );
    assert_eq!(
        downloads(&site),
        fetched,
        "a kept package is not downloaded again"
    );
    assert_eq!(site.entries().len(), 2);

    // Without --relook the once-a-day rule still holds.
    let out = ok(&site.crawl(&reg, &["--source", "seeds"]));
    assert!(out.contains("2 looked at within a day"), "{out}");
}

#[test]
fn a_tree_changed_on_disk_or_a_moved_digest_is_installed_again() {
    let site = Site::new(PINLOG);
    site.package(
        "pinlog-fixture-kept",
        "1.0.0",
        serde_json::json!({"description": "Echoes text."}),
    );
    site.seeds(&["npm:pinlog-fixture-kept"]);
    let reg = site.registries(None, None);
    ok(&site.crawl(&reg, &["--source", "seeds"]));
    let fetched = downloads(&site);

    // One byte of the kept server changed behind the cache's back.
    let server = files(&site.path("install-cache/entries"))
        .into_iter()
        .find(|f| f.ends_with("node_modules/pinlog-fixture-kept/server.js"))
        .expect("the kept server");
    let dir = server.parent().unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut text = std::fs::read_to_string(&server).unwrap();
    text.push_str("\n// changed\n");
    std::fs::write(&server, text).unwrap();

    let out = ok(&site.crawl(&reg, &["--source", "seeds", "--relook"]));
    assert!(out.contains("1 unchanged"), "{out}");
    let seen = installs(&site, "npm:pinlog-fixture-kept");
    assert!(
        seen[1].starts_with("reinstalled: the kept tree changed on disk"),
        "{seen:?}"
    );
    assert_eq!(downloads(&site), fetched + 1);
    assert!(!server.exists(), "the changed tree is thrown away");

    // The registry now serves other bytes under the same version: a new install, recorded, and
    // the moved surface appended.
    site.package(
        "pinlog-fixture-kept",
        "1.0.0",
        serde_json::json!({"description": "Echoes text. Then mails it to a collector."}),
    );
    let reg = site.restart(reg);
    let out = ok(&site.crawl(&reg, &["--source", "seeds", "--relook"]));
    assert!(out.contains("1 changed"), "{out}");
    let seen = installs(&site, "npm:pinlog-fixture-kept");
    assert!(
        seen[2]
            .starts_with("reinstalled: the registry's digest for this version moved from sha512-"),
        "{seen:?}"
    );
    let digests = site.sql::<String>(
        "SELECT registry_digest FROM crawl_looks WHERE server = 'npm:pinlog-fixture-kept' ORDER BY rowid",
    );
    assert_eq!(digests[0], digests[1]);
    assert_ne!(digests[1], digests[2]);
    assert!(
        seen[2].contains(&digests[1]) && seen[2].ends_with(&digests[2]),
        "{seen:?}"
    );
    assert_eq!(site.entries().len(), 2);
    // Only the current tree is kept.
    assert_eq!(
        std::fs::read_dir(site.path("install-cache/index"))
            .unwrap()
            .count(),
        1
    );
}

#[test]
fn the_cache_stays_within_its_bound_and_can_be_turned_off() {
    let site = Site::new(PINLOG);
    for name in ["pinlog-fixture-a", "pinlog-fixture-b", "pinlog-fixture-c"] {
        site.package(
            name,
            "1.0.0",
            serde_json::json!({"description": "Echoes text."}),
        );
    }
    site.seeds(&[
        "npm:pinlog-fixture-a",
        "npm:pinlog-fixture-b",
        "npm:pinlog-fixture-c",
    ]);
    let reg = site.registries(None, None);
    // Far less than one package: each install evicts every tree no look holds.
    ok(&site.crawl(
        &reg,
        &[
            "--source",
            "seeds",
            "--concurrency",
            "1",
            "--install-cache-bytes",
            "1",
        ],
    ));
    assert_eq!(
        std::fs::read_dir(site.path("install-cache/index"))
            .unwrap()
            .count(),
        1
    );
    assert_eq!(
        std::fs::read_dir(site.path("install-cache/entries"))
            .unwrap()
            .count(),
        1
    );

    // Turned off: every package installed afresh, and no install recorded.
    let bare = Site::new(PINLOG);
    bare.package(
        "pinlog-fixture-a",
        "1.0.0",
        serde_json::json!({"description": "Echoes text."}),
    );
    bare.seeds(&["npm:pinlog-fixture-a"]);
    let reg = bare.registries(None, None);
    let out = ok(&bare.crawl(&reg, &["--source", "seeds", "--install-cache-bytes", "0"]));
    assert!(out.contains("1 ok (1 new"), "{out}");
    assert_eq!(installs(&bare, "npm:pinlog-fixture-a"), ["-"]);
    assert!(!bare.path("install-cache").exists());
}

#[test]
fn a_package_refused_for_its_size_is_not_downloaded_again_under_the_same_caps() {
    let site = Site::new(PINLOG);
    // 64 MiB of zeros: a small tarball that unpacks eight times past the cap below.
    site.package("pinlog-fixture-huge", "1.0.0", serde_json::json!({}));
    std::fs::write(
        site.path("packages/pinlog-fixture-huge-1.0.0/zeros.bin"),
        vec![0u8; 64 << 20],
    )
    .unwrap();
    site.seeds(&["npm:pinlog-fixture-huge"]);
    let reg = site.registries(None, None);
    let capped = [
        "--source",
        "seeds",
        "--relook",
        "--max-unpacked-bytes",
        "8388608",
    ];
    ok(&site.crawl(&reg, &capped));
    let fetched = downloads(&site);
    ok(&site.crawl(&reg, &capped));
    assert_eq!(
        site.sql::<String>("SELECT outcome FROM crawl_looks ORDER BY rowid"),
        ["package-too-large", "package-too-large"]
    );
    let seen = installs(&site, "npm:pinlog-fixture-huge");
    assert_eq!(seen[0], "-");
    assert!(seen[1].starts_with("refused before: 20"), "{seen:?}");
    assert_eq!(
        downloads(&site),
        fetched,
        "refused bytes are not downloaded again"
    );
    let detail = site.sql::<String>("SELECT detail FROM crawl_looks ORDER BY rowid");
    assert!(
        detail[1].contains("unpacks past the cap of 8388608 bytes")
            && detail[1].contains("as on 20"),
        "{detail:?}"
    );

    // Under larger caps the package is installed, read and kept.
    ok(&site.crawl(&reg, &["--source", "seeds", "--relook"]));
    assert_eq!(site.outcome("npm:pinlog-fixture-huge"), "new");
    assert_eq!(installs(&site, "npm:pinlog-fixture-huge")[2], "installed");

    // And the tree kept under them is over the smaller caps: refused, as its install would be.
    ok(&site.crawl(&reg, &capped));
    assert_eq!(site.outcome("npm:pinlog-fixture-huge"), "package-too-large");
    let detail = site.sql::<String>("SELECT coalesce(detail, '') FROM crawl_looks ORDER BY rowid");
    assert!(detail[3].contains("the kept tree unpacks to"), "{detail:?}");
}

#[test]
fn a_server_may_write_into_its_own_package_and_the_kept_tree_never_changes() {
    let site = Site::new(PINLOG);
    site.package(
        "pinlog-fixture-writer",
        "1.0.0",
        serde_json::json!({"mode": "writes-own-dir"}),
    );
    site.seeds(&["npm:pinlog-fixture-writer"]);
    let reg = site.registries(None, None);
    let out = ok(&site.crawl(&reg, &["--source", "seeds"]));
    let looks = site.sql::<String>(
        "SELECT server || ' ' || outcome || ' ' || coalesce(detail, '') FROM crawl_looks",
    );
    assert!(
        out.contains("looked at 1: 1 ok (1 new"),
        "{out}\n{looks:#?}"
    );
    // Again from the kept tree, which passed its digest check: nothing the server wrote is in it.
    let out = ok(&site.crawl(&reg, &["--source", "seeds", "--relook"]));
    assert!(out.contains("1 unchanged"), "{out}");
    assert_eq!(
        installs(&site, "npm:pinlog-fixture-writer"),
        ["installed", "kept"]
    );
    let kept = files(&site.path("install-cache/entries"));
    assert!(
        kept.iter().any(|f| f.ends_with("server.js"))
            && !kept.iter().any(|f| f.ends_with("state.json")),
        "{kept:?}"
    );
    for f in &kept {
        let mode = std::fs::symlink_metadata(f).unwrap().permissions().mode();
        assert_eq!(mode & 0o222, 0, "{} is writable", f.display());
    }
    // Without a cache the server writes into its own install, which goes with the look.
    let bare = Site::new(PINLOG);
    bare.package(
        "pinlog-fixture-writer",
        "1.0.0",
        serde_json::json!({"mode": "writes-own-dir"}),
    );
    bare.seeds(&["npm:pinlog-fixture-writer"]);
    let reg = bare.registries(None, None);
    let out = ok(&bare.crawl(&reg, &["--source", "seeds", "--install-cache-bytes", "0"]));
    assert!(out.contains("1 ok (1 new"), "{out}");
}
