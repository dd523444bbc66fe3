//! The command a team lock lets run: when the lockfile pins a server's package, the runner's
//! package argument (`npx`, `uvx`) is pinned to the locked version, and a command that asks for
//! another package or another version is refused rather than run.

use std::ffi::OsString;
use std::path::Path;

use pinlog_core::package::{Package, Registry};
use pinlog_core::render::quoted;

/// What to run, and a note when the lock's package could not be enforced on this command.
pub struct Launch {
    pub argv: Vec<OsString>,
    pub note: Option<String>,
}

/// `name` and the version written after it, in a runner's package argument.
fn split_spec(spec: &str, registry: Registry) -> (&str, Option<&str>) {
    if registry == Registry::Pypi {
        if let Some((name, version)) = spec.split_once("==") {
            return (name, Some(version));
        }
    }
    // A scoped npm name starts with `@`; the version follows the last `@` after it.
    match spec[1..].rfind('@') {
        Some(at) => (&spec[..=at], Some(&spec[at + 2..])),
        None => (spec, None),
    }
}

/// The launch `argv` pinned to `package`, or why it may not run.
pub fn pinned(argv: &[OsString], package: &Package) -> Result<Launch, String> {
    let unenforced = |why: &str| Launch {
        argv: argv.to_vec(),
        note: Some(format!(
            "the lock pins {package}, and {why}: its version is not enforced"
        )),
    };
    let runner = argv
        .first()
        .and_then(|p| Path::new(p).file_name())
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let expected = match runner.as_str() {
        "npx" => Registry::Npm,
        "uvx" => Registry::Pypi,
        _ => return Ok(unenforced("the command does not run it through npx or uvx")),
    };
    if package.registry != expected {
        return Err(format!(
            "the command runs {runner}, and the lock pins {package}: change the configuration, or \
             lock again"
        ));
    }
    let Some(version) = &package.version else {
        return Ok(unenforced("it has no version"));
    };
    // The first argument that is not a flag is the package (npx's `-p X` names it too).
    let mut at = None;
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].to_string_lossy();
        if a == "-p" || a == "--package" {
            at = Some(i + 1);
            break;
        }
        if !a.starts_with('-') {
            at = Some(i);
            break;
        }
        i += 1;
    }
    let Some(at) = at.filter(|at| *at < argv.len()) else {
        return Err(format!(
            "the command names no package, and the lock pins {package}"
        ));
    };
    let spec = argv[at].to_string_lossy().into_owned();
    let (name, asked) = split_spec(&spec, expected);
    if !expected.same_name(name, &package.name) {
        return Err(format!(
            "the command runs {}, and the lock pins {package}: change the configuration, or lock \
             again",
            quoted(name, 128)
        ));
    }
    if let Some(asked) = asked.filter(|a| a != version) {
        return Err(format!(
            "the command asks for {} version {}, and the lock pins {package}: change the \
             configuration, or lock again",
            quoted(name, 128),
            quoted(asked, 64)
        ));
    }
    let mut pinned = argv.to_vec();
    pinned[at] = format!("{name}@{version}").into();
    Ok(Launch {
        argv: pinned,
        note: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    fn npm(name: &str, version: &str) -> Package {
        Package {
            registry: Registry::Npm,
            name: name.into(),
            version: Some(version.into()),
            digest: None,
        }
    }

    #[test]
    fn npx_and_uvx_run_exactly_the_locked_version() {
        let p = npm("@modelcontextprotocol/server-everything", "2026.8.31");
        let run = |a: &[&str]| pinned(&argv(a), &p).map(|l| l.argv);
        assert_eq!(
            run(&[
                "npx",
                "-y",
                "@modelcontextprotocol/server-everything",
                "stdio"
            ])
            .unwrap(),
            argv(&[
                "npx",
                "-y",
                "@modelcontextprotocol/server-everything@2026.8.31",
                "stdio"
            ])
        );
        assert_eq!(
            run(&[
                "npx",
                "-y",
                "@modelcontextprotocol/server-everything@2026.8.31"
            ])
            .unwrap(),
            argv(&[
                "npx",
                "-y",
                "@modelcontextprotocol/server-everything@2026.8.31"
            ])
        );
        for refused in [
            &[
                "npx",
                "-y",
                "@modelcontextprotocol/server-everything@latest",
            ][..],
            &[
                "npx",
                "-y",
                "@modelcontextprotocol/server-everything@2026.1.1",
            ],
            &["npx", "-y", "server-everything"],
            &["uvx", "server-everything"],
            &["npx", "-y"],
        ] {
            assert!(run(refused).is_err(), "{refused:?}");
        }
        let time = Package {
            registry: Registry::Pypi,
            name: "mcp-server-time".into(),
            version: Some("2026.10.19".into()),
            digest: None,
        };
        assert_eq!(
            pinned(&argv(&["uvx", "mcp_server.time"]), &time)
                .unwrap()
                .argv,
            argv(&["uvx", "mcp_server.time@2026.10.19"])
        );
        assert!(pinned(&argv(&["uvx", "mcp-server-time==1.0"]), &time).is_err());
        // Another command runs as given, and says the version is not enforced.
        let l = pinned(&argv(&["node", "server.js"]), &p).unwrap();
        assert_eq!(l.argv, argv(&["node", "server.js"]));
        assert!(l.note.unwrap().contains("not enforced"));
    }
}
