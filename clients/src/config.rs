//! Client configurations: the `mcpServers` object most MCP clients share (and VS Code's
//! `servers`), read by the reader `pinlog wrap` edits them with (JSON, and the comments and
//! trailing commas JSONC adds), with `${VAR}`, `${VAR:-default}` and `${env:VAR}` expanded.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

use pinlog_core::render::quoted;
use pinlog_mcp::stdio::Launch;

use crate::wrap::json_edit::{self, get, members, Member, Val};

/// One server a configuration declares.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerEntry {
    Stdio(Launch),
    Http {
        url: String,
        headers: Vec<(String, String)>,
        /// `sse`: the legacy HTTP+SSE transport of 2024-11-05.
        legacy_sse: bool,
    },
}

/// Why a configuration was refused; the message names the server and the member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "bad-config: {}", self.0)
    }
}

impl std::error::Error for ConfigError {}

/// The servers of a configuration by id, in id order; each one that cannot be run says why, so
/// that a server nobody asked for cannot fail the others.
pub type Servers = BTreeMap<String, Result<ServerEntry, ConfigError>>;

/// Reads a configuration; `env` looks up a variable for expansion.
pub fn read(bytes: &[u8], env: &dyn Fn(&str) -> Option<String>) -> Result<Servers, ConfigError> {
    let root = json_edit::parse(bytes)
        .map_err(|e| ConfigError(format!("not JSON (nor JSONC): {}", e.describe(bytes))))?;
    let root = members(&root)
        .ok_or_else(|| ConfigError("the configuration is not a JSON object".into()))?;
    let member = |key: &str| get(root, key).map_err(ConfigError);
    let servers = match (member("mcpServers")?, member("servers")?) {
        (Some(s), _) => s,
        (None, Some(s)) => s,
        (None, None) => {
            return Err(ConfigError(
                "no \"mcpServers\" (or VS Code's \"servers\") object".into(),
            ))
        }
    };
    let servers = members(&servers.value)
        .ok_or_else(|| ConfigError(format!("{} is not an object", quoted(&servers.key, 64))))?;
    let mut out = BTreeMap::new();
    for m in servers {
        if out.contains_key(&m.key) {
            return Err(ConfigError(format!(
                "the server {} appears twice",
                quoted(&m.key, 64)
            )));
        }
        let id = &m.key;
        let parsed = members(&m.value)
            .ok_or_else(|| ConfigError(format!("server {id:?} is not an object")))
            .and_then(|o| server(id, o, env));
        out.insert(id.to_string(), parsed);
    }
    Ok(out)
}

fn server(
    id: &str,
    o: &[Member],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ServerEntry, ConfigError> {
    let member = |name: &str| -> Result<Option<&Val>, ConfigError> {
        get(o, name)
            .map(|m| m.map(|m| &m.value.val))
            .map_err(|e| ConfigError(format!("server {id:?}: {e}")))
    };
    let text = |name: &str| -> Result<Option<String>, ConfigError> {
        match member(name)? {
            None | Some(Val::Null) => Ok(None),
            Some(Val::Str(s)) => expand(s, env)
                .map(Some)
                .map_err(|v| ConfigError(format!("server {id:?}: {name}: {v}"))),
            Some(other) => Err(ConfigError(format!(
                "server {id:?}: {name} is {}, not a string",
                other.kind()
            ))),
        }
    };
    let map = |name: &str| -> Result<Vec<(String, String)>, ConfigError> {
        match member(name)? {
            None | Some(Val::Null) => Ok(Vec::new()),
            Some(Val::Object(m)) => {
                let mut out: Vec<(String, String)> = Vec::with_capacity(m.len());
                for Member { key: k, value, .. } in m {
                    if out.iter().any(|(seen, _)| seen == k) {
                        return Err(ConfigError(format!(
                            "server {id:?}: {name}.{k} appears twice"
                        )));
                    }
                    match &value.val {
                        Val::Str(s) => out.push((
                            k.to_string(),
                            expand(s, env).map_err(|e| {
                                ConfigError(format!("server {id:?}: {name}.{k}: {e}"))
                            })?,
                        )),
                        other => {
                            return Err(ConfigError(format!(
                                "server {id:?}: {name}.{k} is {}, not a string",
                                other.kind()
                            )))
                        }
                    }
                }
                Ok(out)
            }
            Some(other) => Err(ConfigError(format!(
                "server {id:?}: {name} is {}, not an object",
                other.kind()
            ))),
        }
    };
    let kind = text("type")?;
    if let Some(url) = text("url")? {
        let legacy_sse = match kind.as_deref() {
            None | Some("http" | "streamable-http" | "streamableHttp") => false,
            Some("sse") => true,
            Some(other) => {
                return Err(ConfigError(format!(
                    "server {id:?}: type {other:?} with a url (http or sse expected)"
                )))
            }
        };
        return Ok(ServerEntry::Http {
            url,
            headers: map("headers")?,
            legacy_sse,
        });
    }
    if !matches!(kind.as_deref(), None | Some("stdio")) {
        return Err(ConfigError(format!(
            "server {id:?}: type {:?} needs a url",
            kind.unwrap_or_default()
        )));
    }
    let command = text("command")?
        .ok_or_else(|| ConfigError(format!("server {id:?} has neither \"command\" nor \"url\"")))?;
    let mut argv: Vec<OsString> = vec![command.into()];
    match member("args")? {
        None | Some(Val::Null) => {}
        Some(Val::Array(items, _)) => {
            for (i, a) in items.iter().enumerate() {
                let Val::Str(a) = &a.val else {
                    return Err(ConfigError(format!(
                        "server {id:?}: args[{i}] is not a string"
                    )));
                };
                argv.push(
                    expand(a, env)
                        .map_err(|e| ConfigError(format!("server {id:?}: args[{i}]: {e}")))?
                        .into(),
                );
            }
        }
        Some(other) => {
            return Err(ConfigError(format!(
                "server {id:?}: args is {}, not an array",
                other.kind()
            )))
        }
    }
    Ok(ServerEntry::Stdio(Launch {
        argv,
        env: map("env")?
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect(),
        clear_env: false,
        cwd: text("cwd")?.map(PathBuf::from),
    }))
}

/// Expands `${VAR}`, `${VAR:-default}` and `${env:VAR}`; a variable that is not set and has no
/// default is an error naming it. `$` not followed by `{` is kept as it is.
pub fn expand(s: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("an unclosed ${{ in {s:?}"))?;
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        let name = name.strip_prefix("env:").unwrap_or(name);
        let valid =
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !valid {
            return Err(format!("${{{inner}}} does not name a variable"));
        }
        // As in a shell, `:-` takes the default for a variable that is unset or empty.
        match (env(name), default) {
            (Some(v), Some(d)) if v.is_empty() => out.push_str(d),
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => return Err(format!("${{{name}}} is not set and has no default")),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/u".into()),
            "TOKEN" => Some("t0k".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn expands_the_three_forms() {
        assert_eq!(expand("${HOME}/x", &env).unwrap(), "/home/u/x");
        assert_eq!(expand("${env:TOKEN}", &env).unwrap(), "t0k");
        assert_eq!(expand("${MISSING:-fallback}", &env).unwrap(), "fallback");
        assert_eq!(expand("${HOME:-unused}", &env).unwrap(), "/home/u");
        assert_eq!(expand("${EMPTY:-fallback}", &env).unwrap(), "fallback");
        assert_eq!(expand("[${EMPTY}]", &env).unwrap(), "[]");
        assert_eq!(expand("$HOME ${HOME}", &env).unwrap(), "$HOME /home/u");
        assert!(expand("${MISSING}", &env).unwrap_err().contains("MISSING"));
        assert!(expand("${HOME", &env).is_err());
        assert!(expand("${a b}", &env).is_err());
    }

    #[test]
    fn reads_stdio_and_http_entries() {
        let cfg = br#"{"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "server", "${HOME}"], "env": {"K": "${TOKEN}"}, "cwd": "/tmp"},
            "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
            "old": {"type": "sse", "url": "https://example.com/sse"}
        }}"#;
        let s: BTreeMap<String, ServerEntry> = read(cfg, &env)
            .unwrap()
            .into_iter()
            .map(|(k, v)| (k, v.unwrap()))
            .collect();
        assert_eq!(s.keys().collect::<Vec<_>>(), ["files", "old", "remote"]);
        let ServerEntry::Stdio(l) = &s["files"] else {
            panic!()
        };
        assert_eq!(
            l.argv,
            ["npx", "-y", "server", "/home/u"].map(OsString::from)
        );
        assert_eq!(l.env, [("K".into(), "t0k".into())]);
        assert_eq!(l.cwd.as_deref(), Some(std::path::Path::new("/tmp")));
        assert_eq!(
            s["remote"],
            ServerEntry::Http {
                url: "https://example.com/mcp".into(),
                headers: vec![("Authorization".into(), "Bearer t0k".into())],
                legacy_sse: false
            }
        );
        assert!(matches!(
            s["old"],
            ServerEntry::Http {
                legacy_sse: true,
                ..
            }
        ));
        // VS Code's key.
        let vs = read(
            br#"{"servers": {"a": {"type": "stdio", "command": "x"}}}"#,
            &env,
        )
        .unwrap();
        assert!(matches!(vs["a"], Ok(ServerEntry::Stdio(_))));
    }

    /// VS Code's `mcp.json` is JSONC: comments and trailing commas, read as wrap reads them.
    #[test]
    fn reads_jsonc_as_vs_code_writes_it() {
        let cfg = b"\xEF\xBB\xBF// user servers\n{\n  \"servers\": {\n    /* local */\n    \"a\": {\"type\": \"stdio\", \"command\": \"x\", \"args\": [\"-y\", \"${HOME}\",], // pinned\n    },\n  },\n  \"inputs\": [],\n}\n";
        let s = read(cfg, &env).unwrap();
        let Ok(ServerEntry::Stdio(l)) = &s["a"] else {
            panic!("{s:?}")
        };
        assert_eq!(l.argv, ["x", "-y", "/home/u"].map(OsString::from));
    }

    #[test]
    fn refuses_what_it_cannot_run_and_names_it() {
        for (cfg, needle) in [
            (
                &br#"{"mcpServers": {"a": {"command": "x", "command": "y"}}}"#[..],
                "\"command\" appears twice",
            ),
            (
                br#"{"mcpServers": {"a": {"command": "x", "env": {"K": "1", "K": "2"}}}}"#,
                "env.K appears twice",
            ),
            (
                br#"{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}"#,
                "the server \"a\" appears twice",
            ),
            (
                br#"{"mcpServers": {"a": {"command": 'x'}}}"#,
                "line 1, column 34: a value was expected",
            ),
            (br#"{"other": {}}"#, "mcpServers"),
            (br#"{"mcpServers": {"a": {}}}"#, "neither"),
            (
                br#"{"mcpServers": {"a": {"command": 1}}}"#,
                "command is number",
            ),
            (
                br#"{"mcpServers": {"a": {"command": "x", "args": "y"}}}"#,
                "args is string",
            ),
            (br#"{"mcpServers": {"a": {"command": "${NOPE}"}}}"#, "NOPE"),
            (
                br#"{"mcpServers": {"a": {"type": "ws", "url": "x"}}}"#,
                "ws",
            ),
            (
                br#"{"mcpServers": {"a": {"type": "http", "command": "x"}}}"#,
                "needs a url",
            ),
        ] {
            let e = match read(cfg, &env) {
                Err(e) => e,
                Ok(servers) => servers.into_values().find_map(Result::err).unwrap(),
            };
            assert!(e.0.contains(needle), "{e}");
        }
    }
}
