//! OpenAI Codex admin-enforced requirements
//! (https://developers.openai.com/codex/enterprise/managed-configuration and the
//! `requirements.toml` section of https://developers.openai.com/codex/config-reference): an
//! `mcp_servers` allowlist, one `[mcp_servers.<name>.identity.command]` matcher table per
//! allowed server with the exact executable and one `exact` matcher per argument. Codex enables a
//! server only when its name and identity both match; the string form of `identity.command`
//! would not inspect arguments, so it is never written.

use std::fmt::Write;

use super::{Allowed, PolicyFile};

const HEADER: &str = "\
# Admin-enforced requirements for OpenAI Codex, written by `pinlog policy codex`.
# Codex enables an MCP server only when its name and its exact command line match an
# entry below (docs/POLICY.md). Deploy as /etc/codex/requirements.toml (Linux, macOS)
# or %ProgramData%\\OpenAI\\Codex\\requirements.toml (Windows).
";

pub fn file(servers: &[Allowed]) -> PolicyFile {
    let mut t = String::from(HEADER);
    if servers.is_empty() {
        // An empty allowlist: Codex enables no configured MCP server.
        t.push_str("\n[mcp_servers]\n");
    }
    for s in servers {
        let _ = write!(t, "\n[mcp_servers.{}.identity.command]\n", key(&s.name));
        let _ = writeln!(t, "executable = {}", string(&s.argv[0]));
        if s.argv.len() == 1 {
            t.push_str("args = []\n");
            continue;
        }
        t.push_str("args = [\n");
        for a in &s.argv[1..] {
            let _ = writeln!(t, "  {{ match = \"exact\", value = {} }},", string(a));
        }
        t.push_str("]\n");
    }
    PolicyFile {
        path: "codex/requirements.toml",
        bytes: t.into_bytes(),
        deploy: "/etc/codex/ (Linux, macOS), %ProgramData%\\OpenAI\\Codex\\ (Windows)",
        notes: Vec::new(),
    }
}

/// A TOML key: bare when it can be, else a basic string.
fn key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare {
        k.to_string()
    } else {
        string(k)
    }
}

/// A TOML basic string: `"` and `\` escaped, every control character escaped.
fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_strings() {
        assert_eq!(key("billing_2-x"), "billing_2-x");
        assert_eq!(key("a.b"), "\"a.b\"");
        assert_eq!(key(""), "\"\"");
        assert_eq!(
            string("a\"b\\c\u{1}\u{7f}é"),
            "\"a\\\"b\\\\c\\u0001\\u007Fé\""
        );
    }
}
