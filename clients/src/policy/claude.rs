//! Claude Code (https://code.claude.com/docs/en/managed-mcp): `allowedMcpServers` with one
//! `serverCommand` entry (the exact command and arguments) per allowed server, and
//! `allowManagedMcpServersOnly: true` so no user or project allowlist can widen it; and, for the
//! "fixed deployment" pattern, a managed-mcp.json of the same servers in `.mcp.json` form.

use pinlog_core::render::quoted;

use super::json::Doc;
use super::{distinct_argvs, Allowed, PolicyFile};

const DEPLOY: &str = "/etc/claude-code/ (Linux, WSL), /Library/Application Support/ClaudeCode/ \
(macOS), C:\\Program Files\\ClaudeCode\\ (Windows)";

pub fn files(servers: &[Allowed]) -> Vec<PolicyFile> {
    vec![settings(servers), managed_mcp(servers)]
}

fn settings(servers: &[Allowed]) -> PolicyFile {
    let mut d = Doc::default();
    d.raw(r#"{"allowManagedMcpServersOnly":true,"allowedMcpServers":["#);
    for (i, argv) in distinct_argvs(servers).into_iter().enumerate() {
        if i > 0 {
            d.raw(",");
        }
        d.raw(r#"{"serverCommand":"#).strings(argv).raw("}");
    }
    d.raw("]}");
    PolicyFile {
        path: "claude-code/managed-settings.json",
        bytes: d.pretty(),
        deploy: DEPLOY,
        notes: Vec::new(),
    }
}

fn managed_mcp(servers: &[Allowed]) -> PolicyFile {
    let mut d = Doc::default();
    let mut notes = Vec::new();
    d.raw(r#"{"mcpServers":{"#);
    for (i, s) in servers.iter().enumerate() {
        if i > 0 {
            d.raw(",");
        }
        d.string(&s.name)
            .raw(r#":{"type":"stdio","command":"#)
            .string(&s.argv[0])
            .raw(r#","args":"#)
            .strings(&s.argv[1..]);
        if !s.env.is_empty() {
            d.raw(r#","env":{"#);
            for (j, (k, v)) in s.env.iter().enumerate() {
                if j > 0 {
                    d.raw(",");
                }
                d.string(k).raw(":").string(v);
            }
            d.raw("}");
            let literal: Vec<&str> = s
                .env
                .iter()
                .filter(|(_, v)| !v.is_empty() && !only_references(v))
                .map(|(k, _)| k.as_str())
                .collect();
            if !literal.is_empty() {
                notes.push(format!(
                    "claude-code/managed-mcp.json: server {}: env {} written as given; every user \
                     on the machine can read this file, so keep secrets out of it (use ${{VAR}})",
                    quoted(&s.name, 80),
                    literal
                        .iter()
                        .map(|k| quoted(k, 40))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        d.raw("}");
        if !s.dropped.is_empty() {
            notes.push(format!(
                "claude-code/managed-mcp.json: server {}: {} not carried (the file takes type, \
                 command, args and env)",
                quoted(&s.name, 80),
                s.dropped
                    .iter()
                    .map(|k| quoted(k, 40))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    d.raw("}}");
    PolicyFile {
        path: "claude-code/managed-mcp.json",
        bytes: d.pretty(),
        deploy: DEPLOY,
        notes,
    }
}

/// Whether `v` is nothing but `${VAR}` references (expanded from each user's environment).
fn only_references(v: &str) -> bool {
    let mut rest = v;
    while !rest.is_empty() {
        let Some(r) = rest.strip_prefix("${") else {
            return false;
        };
        let Some(end) = r.find('}') else {
            return false;
        };
        rest = &r[end + 1..];
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_not_literals() {
        assert!(only_references("${TOKEN}"));
        assert!(only_references("${A}${B:-x}"));
        assert!(!only_references("Bearer ${TOKEN}"));
        assert!(!only_references("s3cret"));
    }
}
