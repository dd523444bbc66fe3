//! A server's public identity, as the public log names it (`npm:<pkg>`, `pypi:<pkg>`,
//! `oci:<image>`, `remote:<url>`), and the version run, from how this machine starts it: a
//! runner's command line (`npx`, `npm exec`, `uvx`, `pipx run`, `node` on a script inside
//! `node_modules`, `python -m`), a package a lockfile pins, or an HTTP endpoint.
//!
//! This is a best reading of a command line, not a proof of what runs: a comparison made under it
//! says which identity it took, so that a reader can tell a wrong guess from a wrong surface.

use std::ffi::OsString;
use std::path::{Component, Path};

use crate::package::{pypi_normalized, Package, Registry};
use crate::server::{ServerId, ServerKind};

/// Who a server is in the public log, and the version run here when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicIdentity {
    pub id: ServerId,
    pub version: Option<String>,
}

impl PublicIdentity {
    /// The identity of a package a lockfile pins.
    pub fn of_package(p: &Package) -> Option<PublicIdentity> {
        let id = match p.registry {
            Registry::Npm => format!("npm:{}", p.name),
            Registry::Pypi => format!("pypi:{}", pypi_normalized(&p.name)),
            Registry::Oci => format!("oci:{}", p.name),
        };
        Some(PublicIdentity {
            id: id.parse().ok()?,
            version: p.version.clone(),
        })
    }

    /// The identity of a Streamable HTTP endpoint: `remote:<url>`, without what may carry a
    /// secret (user and password, query, fragment), which is never part of a public identity.
    pub fn of_url(url: &str) -> Option<PublicIdentity> {
        let url = url.split(['?', '#']).next()?;
        let (scheme, rest) = url.split_once("://")?;
        let (authority, path) = match rest.find('/') {
            Some(at) => rest.split_at(at),
            None => (rest, ""),
        };
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        Some(PublicIdentity {
            id: format!("remote:{scheme}://{host}{path}").parse().ok()?,
            version: None,
        })
    }

    /// The identity a command line runs, when it is a runner's or an interpreter's the log knows.
    pub fn of_command(argv: &[OsString]) -> Option<PublicIdentity> {
        let args: Vec<&str> = argv.iter().map(|a| a.to_str()).collect::<Option<_>>()?;
        let (program, rest) = args.split_first()?;
        let program = Path::new(program).file_name()?.to_str()?;
        match program {
            "npx" => npm_spec(runner_package(rest, &["-p", "--package"], NPX_VALUES)?),
            "npm" => match rest.split_first() {
                Some((&("exec" | "x"), rest)) => {
                    npm_spec(runner_package(rest, &["-p", "--package"], NPX_VALUES)?)
                }
                _ => None,
            },
            "uvx" => pypi_spec(runner_package(rest, &["--from"], UVX_VALUES)?),
            "pipx" => match rest.split_first() {
                Some((&"run", rest)) => pypi_spec(runner_package(rest, &["--spec"], PIPX_VALUES)?),
                _ => None,
            },
            "node" | "nodejs" => node_script(rest),
            p if p == "python" || p.starts_with("python3") => python_module(rest),
            _ => None,
        }
    }

    /// The package run, for a manifest to record: only when a registry's package is named at one
    /// exact version (npm's `MAJOR.MINOR.PATCH`, PyPI's `==` pin), since a tag, a range or no
    /// version at all says nothing of what ran. The digest is the registry's, unknown here.
    pub fn exact_package(&self) -> Option<Package> {
        let version = self.version.as_deref()?;
        let registry = match self.id.kind() {
            ServerKind::Npm if exact_npm_version(version) => Registry::Npm,
            ServerKind::Pypi if exact_pypi_version(version) => Registry::Pypi,
            _ => return None,
        };
        Some(Package {
            registry,
            name: self.id.name().to_string(),
            version: Some(version.to_string()),
            digest: None,
        })
    }
}

/// Semantic versioning's `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]`: the one npm form that is not
/// a range (`1.2` is any 1.2.x).
fn exact_npm_version(v: &str) -> bool {
    let (core, tail) = match v.find(['-', '+']) {
        Some(at) => v.split_at(at),
        None => (v, ""),
    };
    let numbers: Vec<&str> = core.split('.').collect();
    numbers.len() == 3
        && numbers
            .iter()
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        && tail.len() != 1
        && tail
            .bytes()
            .skip(1)
            .all(|b| b.is_ascii_alphanumeric() || b"-.+".contains(&b))
}

/// A PEP 440 version as `==` pins it: no wildcard (`1.*`), no second clause (`1.0,<2`), no
/// arbitrary equality (`===`).
fn exact_pypi_version(v: &str) -> bool {
    v.bytes().next().is_some_and(|b| b.is_ascii_digit())
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-+!".contains(&b))
}

/// Options of npx, uvx and `pipx run` that take a value (other than the one naming the package).
const NPX_VALUES: &[&str] = &["-c", "--call", "--cache", "--registry", "--userconfig"];
const UVX_VALUES: &[&str] = &[
    "--with",
    "--python",
    "-p",
    "--index",
    "--index-url",
    "--extra-index-url",
    "--cache-dir",
    "--directory",
];
const PIPX_VALUES: &[&str] = &["--python", "--pip-args", "--index-url"];

/// The package a runner runs: the value of an option that names it, else the first argument
/// that is not an option.
fn runner_package<'a>(args: &[&'a str], naming: &[&str], values: &[&str]) -> Option<&'a str> {
    let mut first = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if naming.contains(a) {
            return it.next().copied();
        }
        if let Some((flag, value)) = a.split_once('=').filter(|_| a.starts_with('-')) {
            if naming.contains(&flag) {
                return Some(value);
            }
            continue;
        }
        if values.contains(a) {
            it.next();
            continue;
        }
        if *a == "--" {
            return first.or_else(|| it.next().copied());
        }
        if !a.starts_with('-') && first.is_none() {
            first = Some(*a);
            break;
        }
    }
    first
}

/// `name`, `name@version`, `@scope/name@version`.
fn npm_spec(spec: &str) -> Option<PublicIdentity> {
    let (name, version) = match spec.rfind('@') {
        Some(at) if at > 0 => (&spec[..at], Some(&spec[at + 1..])),
        _ => (spec, None),
    };
    // `latest` and ranges name no version.
    let version = version.filter(|v| v.chars().next().is_some_and(|c| c.is_ascii_digit()));
    Some(PublicIdentity {
        id: format!("npm:{name}").parse().ok()?,
        version: version.map(str::to_string),
    })
}

/// `name`, `name==version`, `name@version`, `name[extra]==version`.
fn pypi_spec(spec: &str) -> Option<PublicIdentity> {
    let (name, version) = match spec.split_once("==").or_else(|| spec.split_once('@')) {
        Some((n, v)) => (n, Some(v.trim())),
        None => (spec, None),
    };
    let name = name.split('[').next()?.trim();
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    {
        return None;
    }
    Some(PublicIdentity {
        id: format!("pypi:{}", pypi_normalized(name)).parse().ok()?,
        version: version.filter(|v| !v.is_empty()).map(str::to_string),
    })
}

/// `node …/node_modules/[@scope/]name/…`: the package whose script it is.
fn node_script(args: &[&str]) -> Option<PublicIdentity> {
    let script = args.iter().find(|a| !a.starts_with('-'))?;
    let parts: Vec<&str> = Path::new(script)
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    let at = parts.iter().rposition(|p| *p == "node_modules")?;
    let name = match parts.get(at + 1)? {
        scope if scope.starts_with('@') => format!("{scope}/{}", parts.get(at + 2)?),
        name => name.to_string(),
    };
    Some(PublicIdentity {
        id: format!("npm:{name}").parse().ok()?,
        version: None,
    })
}

/// `python -m module`: the project of that name, as PyPI writes it.
fn python_module(args: &[&str]) -> Option<PublicIdentity> {
    let at = args.iter().position(|a| *a == "-m")?;
    let module = args.get(at + 1)?.split('.').next()?;
    pypi_spec(module)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(args: &[&str]) -> Option<(String, Option<String>)> {
        let argv: Vec<OsString> = args.iter().map(OsString::from).collect();
        PublicIdentity::of_command(&argv).map(|i| (i.id.as_str().to_string(), i.version))
    }

    fn some(id: &str, version: Option<&str>) -> Option<(String, Option<String>)> {
        Some((id.to_string(), version.map(str::to_string)))
    }

    #[test]
    fn runners_name_their_package_and_version() {
        let everything = "npm:@modelcontextprotocol/server-everything";
        assert_eq!(
            of(&[
                "npx",
                "-y",
                "@modelcontextprotocol/server-everything@2026.8.31",
                "stdio"
            ]),
            some(everything, Some("2026.8.31"))
        );
        assert_eq!(
            of(&[
                "/usr/bin/npx",
                "--yes",
                "@modelcontextprotocol/server-everything"
            ]),
            some(everything, None)
        );
        assert_eq!(
            of(&[
                "npx",
                "-p",
                "@modelcontextprotocol/server-everything@1.2.0",
                "mcp-server-everything"
            ]),
            some(everything, Some("1.2.0"))
        );
        assert_eq!(
            of(&["npx", "-y", "server@latest"]),
            some("npm:server", None)
        );
        assert_eq!(
            of(&[
                "uvx",
                "mcp-server-time==2026.10.19",
                "--local-timezone",
                "UTC"
            ]),
            some("pypi:mcp-server-time", Some("2026.10.19"))
        );
        assert_eq!(
            of(&["uvx", "--python", "3.12", "Mcp_Server.Fetch"]),
            some("pypi:mcp-server-fetch", None)
        );
        assert_eq!(
            of(&["uvx", "--from", "mcp-server-git==1.0", "mcp-server-git"]),
            some("pypi:mcp-server-git", Some("1.0"))
        );
        assert_eq!(
            of(&["pipx", "run", "mcp-server-time"]),
            some("pypi:mcp-server-time", None)
        );
        assert_eq!(
            of(&[
                "node",
                "/srv/app/node_modules/@scope/server/dist/index.js",
                "--port",
                "1"
            ]),
            some("npm:@scope/server", None)
        );
        assert_eq!(
            of(&[
                "python3.12",
                "-m",
                "mcp_server_time",
                "--local-timezone",
                "UTC"
            ]),
            some("pypi:mcp-server-time", None)
        );
    }

    fn package(args: &[&str]) -> Option<String> {
        let argv: Vec<OsString> = args.iter().map(OsString::from).collect();
        let p = PublicIdentity::of_command(&argv)?.exact_package()?;
        assert_eq!(p.digest, None);
        Some(p.to_string())
    }

    #[test]
    fn a_package_is_recorded_only_at_an_exact_version() {
        for (args, expected) in [
            (
                &["npx", "-y", "@scope/srv@1.2.3"][..],
                Some("npm:@scope/srv@1.2.3"),
            ),
            (
                &["npx", "-y", "srv@1.2.3-beta.1+b7"],
                Some("npm:srv@1.2.3-beta.1+b7"),
            ),
            (
                &["npm", "exec", "-y", "srv@2.0.0", "--", "--flag"],
                Some("npm:srv@2.0.0"),
            ),
            (
                &["npm", "exec", "--package=srv@2.0.1", "--", "srv"],
                Some("npm:srv@2.0.1"),
            ),
            (
                &["npm", "x", "-p", "srv@0.0.1", "srv"],
                Some("npm:srv@0.0.1"),
            ),
            (
                &["uvx", "mcp-server-time==2026.10.19"],
                Some("pypi:mcp-server-time@2026.10.19"),
            ),
            (
                &["uvx", "Mcp_Server.Git@1.0"],
                Some("pypi:mcp-server-git@1.0"),
            ),
            (
                &["pipx", "run", "--spec", "srv==1!2.0+local", "srv"],
                Some("pypi:srv@1!2.0+local"),
            ),
            // No version, a tag, a range, or what is not a package: nothing to record.
            (&["npx", "-y", "srv"], None),
            (&["npx", "-y", "srv@latest"], None),
            (&["npx", "-y", "srv@1.2"], None),
            (&["npx", "-y", "srv@1.2.x"], None),
            (&["npx", "-y", "srv@1.2.3-"], None),
            (&["npm", "install", "srv@1.2.3"], None),
            (&["uvx", "srv==1.*"], None),
            (&["uvx", "srv===1.0"], None),
            (&["uvx", "srv==1.0,<2"], None),
            (&["node", "/srv/node_modules/srv/index.js"], None),
            (&["python", "-m", "srv"], None),
        ] {
            assert_eq!(package(args).as_deref(), expected, "{args:?}");
        }
    }

    #[test]
    fn other_commands_have_no_public_identity() {
        assert_eq!(of(&["/usr/local/bin/my-server"]), None);
        assert_eq!(of(&["node", "/srv/weather.js"]), None);
        assert_eq!(of(&["python", "server.py"]), None);
        assert_eq!(of(&["npx"]), None);
        assert_eq!(of(&["npx", "-y"]), None);
        assert_eq!(of(&["pipx", "install", "x"]), None);
        assert_eq!(of(&["uvx", "--from"]), None);
    }

    #[test]
    fn packages_and_endpoints_have_one() {
        let p = Package {
            registry: Registry::Pypi,
            name: "MCP_Server_Time".into(),
            version: Some("1.0".into()),
            digest: None,
        };
        let i = PublicIdentity::of_package(&p).unwrap();
        assert_eq!(i.id.as_str(), "pypi:mcp-server-time");
        assert_eq!(i.version.as_deref(), Some("1.0"));
        let r = PublicIdentity::of_url("https://mcp.example.com/mcp").unwrap();
        assert_eq!(r.id.as_str(), "remote:https://mcp.example.com/mcp");
        // Nothing that may hold a secret.
        let r = PublicIdentity::of_url("https://u:p@mcp.example.com:8443/v1/mcp?key=s#f").unwrap();
        assert_eq!(r.id.as_str(), "remote:https://mcp.example.com:8443/v1/mcp");
        assert_eq!(PublicIdentity::of_url("https://bad host/"), None);
    }
}
