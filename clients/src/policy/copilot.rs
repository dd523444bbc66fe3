//! GitHub Copilot enterprise managed settings
//! (https://docs.github.com/en/copilot/reference/enterprise-administrators/enterprise-managed-settings):
//! `allowedMcpServers` with one `serverCommand` entry per allowed server. Copilot matches the
//! exact command and each argument, with no wildcards or expansion.

use super::json::Doc;
use super::{distinct_argvs, Allowed, PolicyFile};

pub fn file(servers: &[Allowed]) -> PolicyFile {
    let mut d = Doc::default();
    d.raw(r#"{"allowedMcpServers":["#);
    for (i, argv) in distinct_argvs(servers).into_iter().enumerate() {
        if i > 0 {
            d.raw(",");
        }
        d.raw(r#"{"serverCommand":"#).strings(argv).raw("}");
    }
    d.raw("]}");
    PolicyFile {
        path: "copilot/managed-settings.json",
        bytes: d.pretty(),
        deploy: "/etc/github-copilot/ (Linux), /Library/Application Support/GitHubCopilot/ \
                 (macOS), %ProgramFiles%\\GitHubCopilot\\ (Windows), or copilot/ in your \
                 enterprise's .github-private repository",
        notes: Vec::new(),
    }
}
