//! A server's command line as a dry run shows it: shell-quoted, rendered safe, and with every
//! value that may be a secret masked. A configuration file holds tokens (in `env`, in headers, in
//! arguments); what `wrap` prints may end up in a terminal log, a screen share or a bug report.
//! docs/WRAP.md ("Output") lists what is masked.

use pinlog_core::render::safe;
use shlex::Quoter;

/// What a masked value is shown as.
pub const MASK: &str = "<masked>";

/// Option names whose value is taken for a secret when one of these is in them (case ignored).
const SECRET_WORDS: [&str; 8] = [
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "auth",
    "credential",
    "cookie",
];

/// What the word after an option holds.
#[derive(Clone, Copy)]
enum Value {
    /// `Name: value` (`-H`, `--header`): the value is masked, the name kept.
    Header,
    /// Anything: masked whole.
    Secret,
}

fn option_value(flag: &str) -> Option<Value> {
    if matches!(flag, "-H" | "--header") {
        return Some(Value::Header);
    }
    let name = flag.trim_start_matches('-').to_ascii_lowercase();
    SECRET_WORDS
        .iter()
        .any(|w| name.contains(w))
        .then_some(Value::Secret)
}

fn masked_value(kind: Value, v: &str) -> String {
    match kind {
        Value::Header => match v.split_once(':') {
            Some((name, _)) => format!("{name}: {MASK}"),
            None => MASK.into(),
        },
        Value::Secret => MASK.into(),
    }
}

/// `NAME=VALUE` with NAME an environment variable's name: an assignment (`env`, `docker -e`);
/// not `NAME==VERSION`, a Python requirement.
fn assignment(word: &str) -> Option<&str> {
    let (name, value) = word.split_once('=')?;
    if value.starts_with('=') {
        return None;
    }
    let mut chars = name.chars();
    let first = chars.next()?;
    ((first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then_some(name)
}

/// A URL's password (`scheme://user:PASSWORD@host`) and the value of each query parameter,
/// masked; any other word as it is.
pub fn masked_url(word: &str) -> String {
    let Some(at) = word.find("://") else {
        return word.to_string();
    };
    let (head, rest) = word.split_at(at + 3);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let mut out = head.to_string();
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            match userinfo.split_once(':') {
                Some((user, _)) => out.push_str(&format!("{user}:{MASK}")),
                None => out.push_str(userinfo),
            }
            out.push('@');
            out.push_str(host);
        }
        None => out.push_str(authority),
    }
    let Some(q) = path.find('?') else {
        out.push_str(path);
        return out;
    };
    out.push_str(&path[..=q]);
    let query = &path[q + 1..];
    let (query, fragment) = query.split_at(query.find('#').unwrap_or(query.len()));
    let params: Vec<String> = query
        .split('&')
        .map(|p| match p.split_once('=') {
            Some((name, _)) => format!("{name}={MASK}"),
            None => p.to_string(),
        })
        .collect();
    out.push_str(&params.join("&"));
    out.push_str(fragment);
    out
}

/// A word that no option names: an assignment's value, or a URL's secrets, masked.
fn masked_word(word: &str) -> String {
    match assignment(word) {
        Some(name) => format!("{name}={MASK}"),
        None => masked_url(word),
    }
}

/// `argv` with every value that may be a secret replaced by [`MASK`].
pub fn masked(argv: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    let mut next: Option<Value> = None;
    for word in argv {
        let shown = if let Some(kind) = next.take() {
            masked_value(kind, word)
        } else if word.starts_with('-') {
            match word.split_once('=') {
                Some((name, v)) => match option_value(name) {
                    Some(kind) => format!("{name}={}", masked_value(kind, v)),
                    None => format!("{name}={}", masked_word(v)),
                },
                None => {
                    next = option_value(word);
                    word.clone()
                }
            }
        } else {
            masked_word(word)
        };
        out.push(shown);
    }
    out
}

/// `argv` masked, shell-quoted and rendered safe: one line.
pub fn command_line(argv: &[String]) -> String {
    let words = masked(argv);
    let joined = Quoter::new()
        .allow_nul(true)
        .join(words.iter().map(String::as_str))
        .expect("nul bytes are allowed");
    safe(&joined).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(a: &[&str]) -> String {
        command_line(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn secrets_are_masked_and_the_rest_is_kept() {
        assert_eq!(
            shown(&[
                "npx",
                "-y",
                "@scope/server@1.0.0",
                "--db-path",
                "/tmp/a b.db"
            ]),
            "npx -y @scope/server@1.0.0 --db-path '/tmp/a b.db'"
        );
        assert_eq!(
            shown(&["docker", "run", "-e", "TOKEN=s3", "-e", "PLAIN", "img"]),
            "docker run -e 'TOKEN=<masked>' -e PLAIN img"
        );
        assert_eq!(
            shown(&[
                "npx",
                "mcp-remote",
                "https://h/mcp",
                "--header",
                "Authorization: Bearer s3"
            ]),
            "npx mcp-remote https://h/mcp --header 'Authorization: <masked>'"
        );
        assert_eq!(
            shown(&["x", "--api-key", "s3", "--token=s3", "--header=X-Key:s3"]),
            "x --api-key '<masked>' '--token=<masked>' '--header=X-Key: <masked>'"
        );
        assert_eq!(
            shown(&["x", "postgresql://me:s3@db/x", "https://h/p?k=s3&flag#f"]),
            "x 'postgresql://me:<masked>@db/x' 'https://h/p?k=<masked>&flag#f'"
        );
        assert_eq!(
            shown(&["env", "A_1=s3", "node", "--url=wss://u:s3@h"]),
            "env 'A_1=<masked>' node '--url=wss://u:<masked>@h'"
        );
        assert_eq!(
            shown(&[
                "uvx",
                "black==24.1",
                "--from",
                "git+https://me:s3@git.example/x.git"
            ]),
            "uvx 'black==24.1' --from 'git+https://me:<masked>@git.example/x.git'"
        );
        assert_eq!(shown(&["a\u{1b}[2J"]), "'a<U+001B>[2J'");
    }
}
