use super::npm::{inside, pick_bin};
use super::provenance::{npm_provenance, pip_provenance};
use super::pypi::{console_script, main_module};
use pinlog_core::json::{self, Limits, Value};

fn value(s: &str) -> Value<'static> {
    json::parse(s.as_bytes(), Limits::default())
        .unwrap()
        .into_owned()
}

#[test]
fn the_bin_named_like_the_package_is_run_and_may_not_leave_it() {
    let m = value(r#"{"bin":{"zz":"b.js","server":"s.js","aa":"a.js"}}"#);
    assert_eq!(pick_bin(&m, "@scope/server").unwrap(), "s.js");
    assert_eq!(pick_bin(&m, "other").unwrap(), "a.js");
    assert_eq!(
        pick_bin(&value(r#"{"bin":"cli.js"}"#), "x").unwrap(),
        "cli.js"
    );
    assert!(pick_bin(&value(r#"{"bin":7}"#), "x").is_err());
    assert!(pick_bin(&value(r#"{}"#), "x").is_err());

    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("pkg");
    std::fs::create_dir_all(pkg.join("bin")).unwrap();
    std::fs::write(pkg.join("bin/ok.js"), "").unwrap();
    std::fs::write(dir.path().join("secret"), "").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret"), pkg.join("bin/link.js")).unwrap();
    assert!(inside(&pkg, "./bin/ok.js").is_ok());
    assert!(inside(&pkg, "../secret")
        .unwrap_err()
        .contains("leaves its package"));
    assert!(inside(&pkg, "/etc/passwd")
        .unwrap_err()
        .contains("leaves its package"));
    assert!(inside(&pkg, "bin/link.js")
        .unwrap_err()
        .contains("links out"));
    assert!(inside(&pkg, "bin/missing.js").is_err());
}

#[test]
fn only_what_came_from_the_registry_is_accepted() {
    let reg = "http://127.0.0.1:5/";
    let ok = value(
        r#"{"packages":{"":{"name":"root"},"node_modules/a":{"resolved":"http://127.0.0.1:5/-/tarballs/a/1.tgz"}}}"#,
    );
    assert!(npm_provenance(&ok, reg).is_ok());
    let bundled = value(
        r#"{"packages":{"node_modules/a":{"resolved":"http://127.0.0.1:5/a.tgz"},"node_modules/a/node_modules/b":{"inBundle":true}}}"#,
    );
    assert!(
        npm_provenance(&bundled, reg).is_ok(),
        "a bundled dependency comes with its parent"
    );
    let orphan = value(r#"{"packages":{"node_modules/b":{"inBundle":true}}}"#);
    assert!(npm_provenance(&orphan, reg).is_err());
    let linked_bundle = value(
        r#"{"packages":{"node_modules/a":{"resolved":"http://127.0.0.1:5/a.tgz"},"node_modules/a/node_modules/b":{"inBundle":true,"link":true}}}"#,
    );
    assert!(npm_provenance(&linked_bundle, reg).is_err());
    for bad in [
        r#"{"packages":{"node_modules/a":{"resolved":"git+ssh://git@example.com/a.git"}}}"#,
        r#"{"packages":{"node_modules/a":{"resolved":"http://127.0.0.1:55/a.tgz"}}}"#,
        r#"{"packages":{"node_modules/a":{"link":true,"resolved":"../x"}}}"#,
        r#"{"packages":{"node_modules/a":{"version":"1.0.0"}}}"#,
        r#"{}"#,
    ] {
        assert!(npm_provenance(&value(bad), reg).is_err(), "{bad}");
    }
    let index = r#"{"install":[{"metadata":{"name":"a"},"is_direct":false,"download_info":{"url":"https://files.example/a.whl","archive_info":{}}}]}"#;
    assert!(pip_provenance(&value(index)).is_ok());
    for bad in [
        r#"{"install":[{"metadata":{"name":"a"},"is_direct":true,"download_info":{"archive_info":{}}}]}"#,
        r#"{"install":[{"metadata":{"name":"a"},"is_direct":false,"download_info":{"vcs_info":{}}}]}"#,
        r#"{"install":[{"metadata":{"name":"a"},"download_info":{"dir_info":{}}}]}"#,
    ] {
        assert!(pip_provenance(&value(bad)).is_err(), "{bad}");
    }
}

#[test]
fn a_pypi_package_without_a_console_script_runs_the_module_with_a_main() {
    let dist = tempfile::tempdir().unwrap();
    let record = |lines: &str| std::fs::write(dist.path().join("RECORD"), lines).unwrap();
    assert_eq!(console_script(dist.path(), "acme-mcp"), None);
    record(
        "zeta/__main__.py,sha256=x,1\nacme_mcp/__init__.py,sha256=x,1\n\
         acme_mcp/__main__.py,sha256=x,1\nacme_mcp/sub/__main__.py,sha256=x,1\n\
         bad-name/__main__.py,sha256=x,1\n",
    );
    assert_eq!(main_module(dist.path(), "acme-mcp").unwrap(), "acme_mcp");
    // Not named like the project: the first by name; a nested one or an invalid name never.
    assert_eq!(main_module(dist.path(), "other").unwrap(), "acme_mcp");
    record("acme_mcp/__init__.py,sha256=x,1\nacme_mcp/sub/__main__.py,sha256=x,1\n");
    assert!(main_module(dist.path(), "acme-mcp")
        .unwrap_err()
        .contains("nor a module with a __main__"));
    std::fs::write(
        dist.path().join("entry_points.txt"),
        "[console_scripts]\nacme-mcp = acme_mcp:main\n",
    )
    .unwrap();
    assert_eq!(
        console_script(dist.path(), "acme-mcp").as_deref(),
        Some("acme-mcp")
    );
}
