//! The official MCP registry: `GET /v0.1/servers?limit=N[&cursor=C]`, page after page.
//!
//! Each item is `{server: {name, packages[], remotes[]}, _meta}` (older answers put the server
//! object itself in the list); `metadata.nextCursor` (or the older `next_cursor`) leads on. Only
//! the latest version of each server is asked for (`version=latest`), and an item the registry
//! marks as not the latest (`isLatest: false`) is skipped too, as is a server whose status is
//! `deleted`. A server becomes one candidate, named
//! by the first thing it can be run as: an npm, PyPI or OCI package, else a remote.
//!
//! A package's `packageArguments` and `environmentVariables` say how to start it ([`Start`]).
//! Its `runtimeArguments` are not used: they are options of the runtime a client would run
//! (`npx`, `uvx`, `docker`), and this crawler runs the installed program itself.

use std::collections::HashSet;

use pinlog_core::json::Value;

use crate::candidate::{Candidate, EnvVar, Launch, Remote, SourceKind};
use crate::fetch::{get, get_any, join, query_value, text, Fetcher};
use crate::names;
use crate::start::{Format, Given, Start, MAX_VALUE_BYTES};

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
    let mut unstartable = 0usize;
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
            match candidate(item, &mut unstartable) {
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
                if unstartable > 0 {
                    problems.push(format!(
                        "{unstartable} registry servers declare arguments or variables this \
                         crawler cannot pass; they are started without them"
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

/// What a registry package becomes: its rank among the kinds (the sandbox's first), how to
/// run it, its declared variables, and how to start it (or why it cannot be as declared).
type Package = (u8, Launch, Vec<EnvVar>, Result<Start, String>);

/// The candidate a registry item describes; `None` for a deleted server. A package whose
/// declared start cannot be used counts in `unstartable`.
fn candidate(item: &Value<'_>, unstartable: &mut usize) -> Result<Option<Candidate>, String> {
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
    let mut packages: Vec<Package> = Vec::new();
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
            packages.push((3, found, Vec::new(), Ok(Start::default())));
        }
    }
    // npm before PyPI before OCI before a remote: the kinds the sandbox can run come first.
    packages.sort_by_key(|p| p.0);
    let (_, launch, env, start) = packages
        .into_iter()
        .next()
        .ok_or("nothing to run or connect to")?;
    let mut c = Candidate::new(launch, SourceKind::Registry)?;
    c.env = env;
    match start {
        Ok(s) => c.start = s,
        Err(_) => *unstartable += 1,
    }
    if let Some(name) = text(server, "name") {
        c.aliases.push(name.to_string());
    }
    Ok(Some(c))
}

fn package(p: &Value<'_>) -> Result<Package, String> {
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
    Ok((launch.0, launch.1, env, start(p)))
}

/// How a package is started, from what it declares: a fixed `value` is passed as it is (its
/// `{variables}` filled in); a secret is a placeholder; a required argument without a value
/// takes its `default`, its first choice, or a placeholder of its `format` (a named one that says
/// no format, or `boolean`, is a bare flag, as `--stdio` is declared); an optional one without a
/// fixed value is left out.
/// Variables alike, a required one without a value getting the placeholder.
fn start(p: &Value<'_>) -> Result<Start, String> {
    let mut s = Start::default();
    let args = get_any(p, &["packageArguments", "package_arguments"])
        .map(|a| a.as_array().ok_or("packageArguments is not an array"))
        .transpose()?
        .unwrap_or(&[]);
    if args.len() > crate::start::MAX_ARGS {
        return Err(format!("over {} arguments", crate::start::MAX_ARGS));
    }
    for a in args {
        let value = input(a)?;
        match text(a, "type") {
            Some("positional") => {
                if let Some(v) = value {
                    s.positional(v)?;
                } else if flag(a, &["isRequired", "is_required"]) {
                    s.positional(Given::Placeholder(format(a)?))?;
                }
            }
            Some("named") => {
                let name = text(a, "name").ok_or("a named argument without a name")?;
                match value {
                    Some(v) => s.named(name, Some(v))?,
                    None if !flag(a, &["isRequired", "is_required"]) => {}
                    // A flag that selects something (`--stdio`) says no format of a value.
                    None if matches!(text(a, "format"), None | Some("boolean")) => {
                        s.named(name, None)?
                    }
                    None => s.named(name, Some(Given::Placeholder(format(a)?)))?,
                }
            }
            other => return Err(format!("argument type {other:?}")),
        }
    }
    let vars = get_any(p, &["environmentVariables", "environment_variables"])
        .and_then(Value::as_array)
        .unwrap_or(&[]);
    for v in vars.iter().take(MAX_ENV) {
        let name = text(v, "name").ok_or("a variable without a name")?;
        match input(v)? {
            Some(Given::Text(value)) => s.set_env(name, Some(&value))?,
            Some(Given::Placeholder(_)) => s.set_env(name, None)?,
            None if flag(v, &["isRequired", "is_required"]) => s.set_env(name, None)?,
            None => {}
        }
    }
    Ok(s)
}

fn flag(v: &Value<'_>, names: &[&str]) -> bool {
    matches!(get_any(v, names), Some(Value::Bool(true)))
}

fn format(v: &Value<'_>) -> Result<Format, String> {
    match text(v, "format") {
        None => Ok(Format::Text),
        Some(f) => Format::parse(f).ok_or_else(|| format!("format {f:?}")),
    }
}

/// The value an input (argument or variable) is given, `None` when it is left to the server:
/// its fixed value, else (when required) its default or first choice; a placeholder for a
/// secret or for a `{variable}` nobody gave a value.
fn input(v: &Value<'_>) -> Result<Option<Given>, String> {
    let placeholder = || format(v).map(|f| Some(Given::Placeholder(f)));
    let required = flag(v, &["isRequired", "is_required"]);
    if flag(v, &["isSecret", "is_secret"]) {
        return if required || text(v, "value").is_some() {
            placeholder()
        } else {
            Ok(None)
        };
    }
    if let Some(fixed) = text(v, "value") {
        return match fill(fixed, get(v, "variables"))? {
            Some(text) => Ok(Some(Given::Text(text))),
            None => placeholder(),
        };
    }
    if !required {
        return Ok(None);
    }
    let choice = get(v, "choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .and_then(Value::as_str);
    match text(v, "default").or(choice) {
        Some(d) => Ok(Some(Given::Text(d.to_string()))),
        None => Ok(None),
    }
}

/// `value` with each `{name}` replaced by its variable's fixed value or default; `None` when a
/// variable is secret, has neither, or the braces do not close. Refused past the longest value
/// as it grows: a short value naming a long variable many times is no way round the bound.
fn fill(value: &str, variables: Option<&Value<'_>>) -> Result<Option<String>, String> {
    let too_long = || format!("a value past {MAX_VALUE_BYTES} bytes");
    if value.len() > MAX_VALUE_BYTES {
        return Err(too_long());
    }
    let mut out = String::new();
    let mut rest = value;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}').map(|c| c + open) else {
            return Ok(None);
        };
        let Some(var) = variables.and_then(|vs| get(vs, &rest[open + 1..close])) else {
            return Ok(None);
        };
        let filled = text(var, "value").or_else(|| text(var, "default"));
        let (false, Some(filled)) = (flag(var, &["isSecret", "is_secret"]), filled) else {
            return Ok(None);
        };
        if out.len() + filled.len() > MAX_VALUE_BYTES {
            return Err(too_long());
        }
        out.push_str(filled);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Ok(Some(out))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::PLACEHOLDER;
    use pinlog_core::json::{parse, Limits};

    /// An item as `GET /v0.1/servers` answers it, shaped like the registry's own examples: a
    /// subcommand, a database path, a token flag, an option templated from variables, and
    /// variables with and without values.
    const ITEM: &str = r#"{
      "server": {
        "name": "io.example/warehouse",
        "description": "Queries a warehouse",
        "version": "2.4.0",
        "packages": [{
          "registryType": "npm",
          "registryBaseUrl": "https://registry.npmjs.org",
          "identifier": "@example/warehouse-mcp",
          "version": "2.4.0",
          "transport": {"type": "stdio"},
          "runtimeHint": "npx",
          "runtimeArguments": [{"type": "positional", "value": "-y"}],
          "packageArguments": [
            {"type": "positional", "value": "serve"},
            {"type": "named", "name": "--stdio", "isRequired": true},
            {"type": "named", "name": "--cache-dir", "format": "filepath", "isRequired": true},
            {"type": "positional", "valueHint": "db_file", "format": "filepath", "isRequired": true},
            {"type": "named", "name": "--api-key", "isRequired": true, "isSecret": true},
            {"type": "named", "name": "--region", "value": "{region}-{zone}",
             "variables": {"region": {"default": "eu"}, "zone": {"value": "2"}}},
            {"type": "named", "name": "--login", "value": "user:{password}",
             "variables": {"password": {"isSecret": true, "isRequired": true}}},
            {"type": "named", "name": "--mode", "isRequired": true, "choices": ["read", "write"]},
            {"type": "named", "name": "--port", "format": "number", "description": "optional"},
            {"type": "named", "name": "--workers", "format": "number", "isRequired": true, "default": "4"}
          ],
          "environmentVariables": [
            {"name": "WAREHOUSE_TOKEN", "isRequired": true, "isSecret": true},
            {"name": "WAREHOUSE_URL", "isRequired": true, "default": "https://warehouse.example"},
            {"name": "WAREHOUSE_TEAM", "isRequired": true},
            {"name": "LOG_LEVEL", "default": "info"},
            {"name": "OPTIONAL_SECRET", "isSecret": true}
          ]
        }]
      },
      "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "isLatest": true}}
    }"#;

    fn read(item: &str) -> (Option<Candidate>, usize) {
        let v = parse(item.as_bytes(), Limits::default()).unwrap();
        let mut unstartable = 0;
        let c = candidate(&v, &mut unstartable).unwrap();
        (c, unstartable)
    }

    #[test]
    fn declared_arguments_and_variables_start_the_package() {
        let (c, unstartable) = read(ITEM);
        let c = c.unwrap();
        assert_eq!(unstartable, 0);
        let db = format!("/tmp/{PLACEHOLDER}");
        // npx's `-y` is not the server's: runtime arguments are left out.
        assert_eq!(
            c.start.args(),
            [
                "serve",
                "--stdio",
                "--cache-dir",
                &db,
                &db,
                "--api-key",
                PLACEHOLDER,
                "--region",
                "eu-2",
                "--login",
                PLACEHOLDER,
                "--mode",
                "read",
                "--workers",
                "4"
            ]
        );
        assert_eq!(
            c.start.arg_placeholders(),
            ["$5", "--api-key", "--cache-dir", "--login"]
        );
        assert_eq!(
            c.start.env_names(),
            (
                vec!["WAREHOUSE_URL".to_string()],
                vec!["WAREHOUSE_TEAM".to_string(), "WAREHOUSE_TOKEN".to_string()]
            )
        );
        assert!(c
            .start
            .env_values()
            .contains(&("WAREHOUSE_URL".into(), "https://warehouse.example".into())));
    }

    #[test]
    fn a_package_whose_start_cannot_be_used_is_started_without_it() {
        let many_refs = format!(
            r#"{{"type": "positional", "value": "{}", "variables": {{"a": {{"default": "{}"}}}}}}"#,
            "{a}".repeat(100),
            "x".repeat(400)
        );
        let alone = format!(r#"{{"packageArguments": [{many_refs}]}}"#);
        let alone = parse(alone.as_bytes(), Limits::default()).unwrap();
        assert!(start(&alone).unwrap_err().contains("past 512 bytes"));
        for (bad, why) in [
            (
                r#"{"type": "named", "name": "stdio", "isRequired": true}"#,
                "no dashes",
            ),
            (r#"{"type": "flag", "value": "x"}"#, "unknown type"),
            (
                r#"{"type": "positional", "value": "a\u0000b"}"#,
                "control character",
            ),
            (
                r#"{"type": "positional", "isRequired": true, "format": "url"}"#,
                "unknown format",
            ),
            (&many_refs, "a short value that fills past the bound"),
        ] {
            let item = ITEM.replacen(r#"{"type": "positional", "value": "serve"}"#, bad, 1);
            let (c, unstartable) = read(&item);
            let c = c.unwrap();
            assert_eq!(unstartable, 1, "{why}");
            assert!(c.start.is_empty(), "{why}");
            // Still a candidate: looked at as before, with no arguments.
            assert_eq!(c.id.to_string(), "npm:@example/warehouse-mcp");
        }
    }
}
