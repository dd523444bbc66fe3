//! Reading the configuration of approved servers: each one must be a local server that
//! `pinlog wrap` wrapped, with `--lock` naming the team lockfile the policy requires.

use pinlog_core::json::{self, Limits, Object, Value};
use pinlog_core::render::quoted;

use crate::wrap::command::URL_KEYS;
use crate::wrapped::{self, is_pinlog_name, Malformed, ProxyOption, WrappedCommand};

/// The largest configuration read.
pub const MAX_CONFIG_BYTES: usize = 16 << 20;

/// One server the policy allows: its name in the configuration and the exact command line a
/// client must run for it (`command` then `args`, as written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    pub name: String,
    pub argv: Vec<String>,
    /// `env` as written (for Claude Code's managed-mcp.json), in the configuration's order.
    pub env: Vec<(String, String)>,
    /// Members of the entry no policy file carries (`cwd`, `envFile`, …), for a note.
    pub dropped: Vec<String>,
}

/// Why the configuration was refused (exit 4). The text names the server, rendered safe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Members a server entry may have that the policy reads or carries.
const KNOWN: [&str; 4] = ["type", "command", "args", "env"];

/// Reads `bytes` strictly and returns the servers to allow, sorted by name. Every server must be
/// a local one whose command is pinlog's and whose args are
/// `proxy --name NAME --lock LOCK [--only-locked] [--on-drift MODE] [--] COMMAND ARGS…` with LOCK
/// equal to `lock`; anything else refuses the whole configuration.
pub fn read_allowed(bytes: &[u8], lock: &str) -> Result<Vec<Allowed>, Refusal> {
    let value = json::parse(bytes, Limits::with_max_bytes(MAX_CONFIG_BYTES))
        .map_err(|e| Refusal(format!("the configuration is not strict JSON: {e}")))?;
    let root = value
        .as_object()
        .ok_or_else(|| Refusal("the configuration is not a JSON object".into()))?;
    let servers = match (root.get("mcpServers"), root.get("servers")) {
        (Some(_), Some(_)) => {
            return Err(Refusal(
                "the configuration has both \"mcpServers\" and \"servers\": keep the one your \
                 client reads"
                    .into(),
            ))
        }
        (Some(s), None) => ("mcpServers", s),
        (None, Some(s)) => ("servers", s),
        (None, None) => {
            return Err(Refusal(
                "the configuration has no \"mcpServers\" (or VS Code's \"servers\") object".into(),
            ))
        }
    };
    let (key, servers) = servers;
    let servers = servers
        .as_object()
        .ok_or_else(|| Refusal(format!("\"{key}\" is not an object")))?;
    let mut out = servers
        .iter()
        .map(|(name, entry)| server(name, entry, lock))
        .collect::<Result<Vec<_>, _>>()?;
    out.sort_by(|a, b| json::cmp_utf16(&a.name, &b.name));
    Ok(out)
}

fn server(name: &str, entry: &Value<'_>, lock: &str) -> Result<Allowed, Refusal> {
    let who = format!("server {}", quoted(name, 80));
    let refuse = |why: String| Refusal(format!("{who} {why}"));
    let entry = entry
        .as_object()
        .ok_or_else(|| refuse(format!("is {}, not an object", entry.kind())))?;
    let kind = match entry.get("type") {
        None | Some(Value::Null) => None,
        Some(Value::String(t)) => Some(t.as_ref()),
        Some(other) => {
            return Err(refuse(format!(
                "has a type that is {}, not a string",
                other.kind()
            )))
        }
    };
    let remote_type = kind.is_some_and(|t| !t.eq_ignore_ascii_case("stdio"));
    if URL_KEYS.iter().any(|k| entry.get(k).is_some()) || remote_type {
        return Err(refuse(
            "is remote: pinlog proxy runs local (stdio) servers only, so a policy of wrapped, \
             locked commands cannot allow it; remove it from the configuration"
                .into(),
        ));
    }
    let command = match entry.get("command") {
        Some(Value::String(c)) => c.to_string(),
        None | Some(Value::Null) => return Err(refuse("has no command".into())),
        Some(other) => {
            return Err(refuse(format!(
                "has a command that is {}, not a string",
                other.kind()
            )))
        }
    };
    let args = match entry.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, a)| {
                a.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| refuse(format!("has a {} in args[{i}], not a string", a.kind())))
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(other) => {
            return Err(refuse(format!(
                "has args that are {}, not an array",
                other.kind()
            )))
        }
    };
    if !is_pinlog_name(&command) {
        return Err(refuse(format!(
            "is not wrapped: its command is {}, not pinlog; wrap it first (pinlog wrap)",
            quoted(&command, 80)
        )));
    }
    // The products match the command as written: a bare or relative `pinlog` would be matched by
    // whatever program comes first on a user's PATH, proxy or not.
    if !(command.starts_with('/') || command.get(1..3) == Some(":\\")) {
        return Err(refuse(format!(
            "runs {} by a relative name, which any program earlier on PATH can take; wrap it \
             with an absolute path (pinlog wrap writes one)",
            quoted(&command, 80)
        )));
    }
    check_proxy_args(&command, &args, lock).map_err(refuse)?;
    let mut argv = Vec::with_capacity(args.len() + 1);
    argv.push(command);
    argv.extend(args);
    for (i, a) in argv.iter().enumerate() {
        if let Some(var) = variable(a) {
            let at = if i == 0 {
                "command".to_string()
            } else {
                format!("args[{}]", i - 1)
            };
            return Err(refuse(format!(
                "refers to the environment variable {} in {at}: a policy entry must name the \
                 command line literally (Copilot blocks such a server, and Claude Code expands it \
                 from each user's environment); write the value itself",
                quoted(var, 40)
            )));
        }
    }
    Ok(Allowed {
        name: name.to_string(),
        argv,
        env: env(entry).map_err(refuse)?,
        dropped: entry
            .iter()
            .map(|(k, _)| k)
            .filter(|k| !KNOWN.contains(k))
            .map(str::to_string)
            .collect(),
    })
}

/// Checks that `args` run `pinlog proxy` on a server, with `--name` and `--lock LOCK`, and no
/// option but those wrap writes, `--only-locked` and `--on-drift`.
fn check_proxy_args(command: &str, args: &[String], lock: &str) -> Result<(), String> {
    const NOT_PROXY: &str = "is not wrapped: its command is pinlog but its first argument is \
                             not \"proxy\"; wrap it first (pinlog wrap)";
    let (options, broken) = match WrappedCommand::parse(command, args, is_pinlog_name) {
        None => return Err(NOT_PROXY.into()),
        Some(Ok(wrapped)) => (wrapped.options, None),
        Some(Err(broken)) => (broken.options, Some(broken.why)),
    };
    let (mut name, mut locked): (Option<&str>, Option<&str>) = (None, None);
    for (at, option) in wrapped::options(&options) {
        match option {
            ProxyOption::Name(v) => once(&mut name, "--name", v)?,
            ProxyOption::Lock(v) => once(&mut locked, "--lock", v)?,
            ProxyOption::OnDrift("block" | "hold") | ProxyOption::OnlyLocked => {}
            ProxyOption::OnDrift(v) => {
                return Err(format!(
                    "gives pinlog proxy --on-drift {}, not block or hold",
                    quoted(v, 40)
                ))
            }
            ProxyOption::NoValue(flag) => {
                return Err(format!("gives pinlog proxy {flag} with no value"))
            }
            ProxyOption::Http(flag) => {
                return Err(format!(
                    "gives pinlog proxy {flag}, which puts it in front of an HTTP server: a \
                     policy entry runs a local server"
                ))
            }
            ProxyOption::Other(a) => {
                // An option by its name only: the value glued to it may be a secret.
                let shown = match a.split_once('=') {
                    Some((name, _)) if name.starts_with('-') => name,
                    _ => a,
                };
                return Err(format!(
                    "gives pinlog proxy {} (args[{at}]), which is not one of its options",
                    quoted(shown, 80)
                ));
            }
        }
    }
    match broken {
        Some(Malformed::OptionsOnly) => {
            return Err(format!(
                "is not wrapped: {}; wrap it again (pinlog wrap)",
                Malformed::OptionsOnly
            ))
        }
        Some(Malformed::NoCommand) => {
            return Err("runs pinlog proxy with no command after --".into())
        }
        None => {}
    }
    match name {
        None => {
            return Err("runs pinlog proxy without --name: the lockfile is read by name".into())
        }
        Some("") => return Err("runs pinlog proxy with an empty --name".into()),
        Some(_) => {}
    }
    match locked {
        None => Err(format!(
            "is not locked: pinlog proxy runs without --lock; wrap it with --lock {}",
            quoted(lock, 120)
        )),
        Some(l) if l != lock => Err(format!(
            "is locked to {}, not to {}: every allowed server must carry the same --lock",
            quoted(l, 120),
            quoted(lock, 120)
        )),
        Some(_) => Ok(()),
    }
}

/// Sets `slot` to the value of `flag`, which the proxy takes once.
fn once<'a>(slot: &mut Option<&'a str>, flag: &str, value: &'a str) -> Result<(), String> {
    match slot.replace(value) {
        Some(_) => Err(format!("gives pinlog proxy {flag} twice")),
        None => Ok(()),
    }
}

/// The first environment variable reference in `s`: `${…}`, or `$` then a letter or `_`.
pub(crate) fn variable(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    let at = (0..b.len()).find(|&i| {
        b[i] == b'$'
            && b.get(i + 1)
                .is_some_and(|&c| c == b'{' || c == b'_' || c.is_ascii_alphabetic())
    })?;
    let rest = &s[at..];
    let end = if rest.as_bytes()[1] == b'{' {
        rest.find('}').map_or(rest.len(), |e| e + 1)
    } else {
        1 + rest[1..]
            .find(|c: char| !(c == '_' || c.is_ascii_alphanumeric()))
            .unwrap_or(rest.len() - 1)
    };
    Some(&rest[..end])
}

fn env(entry: &Object<'_>) -> Result<Vec<(String, String)>, String> {
    match entry.get("env") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.to_string(), s.to_string())),
                other => Err(format!(
                    "has a {} in env {}, not a string",
                    other.kind(),
                    quoted(k, 80)
                )),
            })
            .collect(),
        Some(other) => Err(format!(
            "has an env that is {}, not an object",
            other.kind()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_variable_references() {
        assert_eq!(variable("${HOME}/x"), Some("${HOME}"));
        assert_eq!(variable("a$TOKEN-b"), Some("$TOKEN"));
        assert_eq!(variable("$_x"), Some("$_x"));
        assert_eq!(variable("${open"), Some("${open"));
        assert_eq!(variable("cost: $5 or $"), None);
        assert_eq!(variable("plain"), None);
    }
}
