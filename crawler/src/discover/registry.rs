//! The official MCP registry: `GET /v0.1/servers?limit=N[&cursor=C]`, page after page.
//!
//! Each item is `{server: {name, packages[], remotes[]}, _meta}` (older answers put the server
//! object itself in the list); `metadata.nextCursor` (or the older `next_cursor`) leads on. Only
//! the latest version of each server is asked for (`version=latest`), and an item the registry
//! marks as not the latest (`isLatest: false`) is skipped too, as is a server whose status is
//! `deleted`. A server becomes one candidate, named
//! by the first thing it can be run as: an npm, PyPI or OCI package, else a remote.

use std::collections::HashSet;

use pinlog_core::json::Value;

use crate::candidate::{Candidate, EnvVar, Launch, Remote, SourceKind};
use crate::fetch::{get, get_any, join, query_value, text, Fetcher};
use crate::names;

/// Items asked for per page.
const PAGE: u32 = 100;
/// The most pages read; a registry that goes on further is reported, not followed.
const MAX_PAGES: usize = 10_000;
/// The most environment variables taken from one package.
const MAX_ENV: usize = 64;
const OFFICIAL: &str = "io.modelcontextprotocol.registry/official";

/// Reads the whole registry at `base`. Servers that cannot be made candidates are counted in
/// the messages; a failing page ends the walk with what was found so far and the error.
pub fn discover(fetch: &Fetcher, base: &str, out: &mut Vec<Candidate>) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen = HashSet::new();
    let mut cursor: Option<String> = None;
    let mut skipped = 0usize;
    for _ in 0..MAX_PAGES {
        let mut url = join(base, &format!("v0.1/servers?version=latest&limit={PAGE}"));
        if let Some(c) = &cursor {
            url.push_str("&cursor=");
            url.push_str(&query_value(c));
        }
        let page = match fetch.json(&url, &[]) {
            Ok(p) => p,
            Err(e) => {
                problems.push(e);
                return problems;
            }
        };
        let Some(items) = get(&page, "servers").and_then(Value::as_array) else {
            problems.push(format!("{url}: the answer has no `servers` array"));
            return problems;
        };
        for item in items {
            match candidate(item) {
                Ok(Some(c)) => out.push(c),
                Ok(None) => {}
                Err(_) => skipped += 1,
            }
        }
        let next = get(&page, "metadata")
            .and_then(|m| get_any(m, &["nextCursor", "next_cursor"]))
            .and_then(Value::as_str);
        match next {
            None => {
                if skipped > 0 {
                    problems.push(format!(
                        "{skipped} registry servers name nothing this crawler can run"
                    ));
                }
                return problems;
            }
            Some(c) if !seen.insert(c.to_string()) => {
                problems.push(format!("{url}: the cursor {c:?} came back; stopped"));
                return problems;
            }
            Some(c) => cursor = Some(c.to_string()),
        }
    }
    problems.push(format!("the registry has over {MAX_PAGES} pages; stopped"));
    problems
}

/// The candidate a registry item describes; `None` for a deleted server.
fn candidate(item: &Value<'_>) -> Result<Option<Candidate>, String> {
    let server = get(item, "server").unwrap_or(item);
    let official = [item, server]
        .iter()
        .find_map(|v| get(v, "_meta").and_then(|m| get(m, OFFICIAL)));
    let status = official
        .and_then(|o| text(o, "status"))
        .or_else(|| text(server, "status"));
    let latest = official.and_then(|o| get(o, "isLatest"));
    if status == Some("deleted") || matches!(latest, Some(Value::Bool(false))) {
        return Ok(None);
    }
    let mut packages: Vec<(u8, Launch, Vec<EnvVar>)> = Vec::new();
    for p in get(server, "packages")
        .and_then(Value::as_array)
        .unwrap_or(&[])
    {
        if let Ok(found) = package(p) {
            packages.push(found);
        }
    }
    for r in get(server, "remotes")
        .and_then(Value::as_array)
        .unwrap_or(&[])
    {
        if let Ok(found) = remote(r) {
            packages.push((3, found, Vec::new()));
        }
    }
    // npm before PyPI before OCI before a remote: the kinds the sandbox can run come first.
    packages.sort_by_key(|p| p.0);
    let (_, launch, env) = packages
        .into_iter()
        .next()
        .ok_or("nothing to run or connect to")?;
    let mut c = Candidate::new(launch, SourceKind::Registry)?;
    c.env = env;
    if let Some(name) = text(server, "name") {
        c.aliases.push(name.to_string());
    }
    Ok(Some(c))
}

fn package(p: &Value<'_>) -> Result<(u8, Launch, Vec<EnvVar>), String> {
    let kind = get_any(p, &["registryType", "registry_type", "registry_name"])
        .and_then(Value::as_str)
        .ok_or("no registryType")?;
    let ident = get_any(p, &["identifier", "name"])
        .and_then(Value::as_str)
        .ok_or("no identifier")?;
    let version = text(p, "version").filter(|v| names::version(v).is_ok());
    // A package spoken to over HTTP once started is not a stdio server this crawler runs.
    if let Some(t) = get(p, "transport").and_then(|t| text(t, "type")) {
        if t != "stdio" {
            return Err(format!("transport {t}"));
        }
    }
    let launch = match kind {
        "npm" => {
            names::npm_name(ident)?;
            (
                0,
                Launch::Npm {
                    name: ident.into(),
                    version: version.map(Into::into),
                },
            )
        }
        "pypi" => {
            names::pypi_name(ident)?;
            (
                1,
                Launch::Pypi {
                    name: ident.into(),
                    version: version.map(Into::into),
                },
            )
        }
        "oci" => {
            let (image, digest) = ident.split_once('@').ok_or("an image without a digest")?;
            names::oci_image(image)?;
            names::oci_digest(digest)?;
            (
                2,
                Launch::Oci {
                    image: image.into(),
                    digest: digest.into(),
                },
            )
        }
        other => return Err(format!("registry type {other}")),
    };
    let mut env = Vec::new();
    // A registry entry declaring hundreds of variables gets the first few looked at.
    for v in get_any(p, &["environmentVariables", "environment_variables"])
        .and_then(Value::as_array)
        .unwrap_or(&[])
        .iter()
        .take(MAX_ENV)
    {
        let Some(name) = text(v, "name").filter(|n| is_env_name(n)) else {
            continue;
        };
        let flag = |names: &[&str]| matches!(get_any(v, names), Some(Value::Bool(true)));
        env.push(EnvVar {
            name: name.to_string(),
            required: flag(&["isRequired", "is_required"]),
            secret: flag(&["isSecret", "is_secret"]),
        });
    }
    Ok((launch.0, launch.1, env))
}

fn remote(r: &Value<'_>) -> Result<Launch, String> {
    let transport = match get_any(r, &["type", "transport_type"]).and_then(Value::as_str) {
        Some("streamable-http") => Remote::StreamableHttp,
        Some("sse") => Remote::Sse,
        other => return Err(format!("remote type {other:?}")),
    };
    let url = text(r, "url").ok_or("no url")?;
    // A templated URL (`{tenant}`) needs values the registry does not give.
    if url.contains('{') {
        return Err("a templated URL".into());
    }
    Ok(Launch::Remote {
        url: names::remote_url(url)?,
        transport,
    })
}

/// An environment variable name as a shell would take it.
pub fn is_env_name(s: &str) -> bool {
    let mut b = s.bytes();
    s.len() <= 128
        && b.next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}
