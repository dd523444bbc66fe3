//! `pinlog policy`: the managed-policy files each product documents, allowing only the servers of
//! a configuration that `pinlog wrap` wrapped with the team lockfile. It writes files under
//! `--out` and installs nothing; docs/POLICY.md says what each product reads and where.
//!
//! Everything is checked and rendered before anything is written: a refused server leaves no
//! file behind. The same configuration and lockfile path give the same bytes, whatever order the
//! configuration lists its servers in.

mod claude;
mod codex;
mod config;
mod copilot;
mod json;
mod out;
pub mod plan;

pub use config::{read_allowed, Allowed, Refusal};
pub use out::system_dir;

/// The products `pinlog policy` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Product {
    /// Claude Code: managed-settings.json (allowlist) and managed-mcp.json (fixed set)
    ClaudeCode,
    /// GitHub Copilot (VS Code, Copilot CLI, JetBrains): managed-settings.json
    Copilot,
    /// OpenAI Codex: requirements.toml
    Codex,
    /// Cursor: documents no file-based MCP policy; nothing is written
    Cursor,
    /// Every product that documents a file
    All,
}

impl Product {
    /// The products this choice writes files for, in a fixed order.
    pub fn with_files(self) -> &'static [Product] {
        match self {
            Product::ClaudeCode => &[Product::ClaudeCode],
            Product::Copilot => &[Product::Copilot],
            Product::Codex => &[Product::Codex],
            Product::Cursor => &[],
            Product::All => &[Product::ClaudeCode, Product::Copilot, Product::Codex],
        }
    }

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Product::ClaudeCode => "claude-code",
            Product::Copilot => "copilot",
            Product::Codex => "codex",
            Product::Cursor => "cursor",
            Product::All => "all",
        }
    }
}

/// Why Cursor gets no file: what its documentation offers instead.
pub const CURSOR_NOTE: &str =
    "cursor: Cursor documents no file-based policy that limits which MCP \
servers run: its MCP allowlist is set in the team dashboard (MCP Configuration, Enterprise), and \
~/.cursor/permissions.json only lists tools that run without approval \
(https://cursor.com/docs/enterprise/model-and-integration-management). pinlog writes nothing for \
it; see docs/POLICY.md";

/// One file to write: its path under `--out`, its bytes, and where the product reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyFile {
    /// Relative to `--out`, `/`-separated: `claude-code/managed-settings.json`.
    pub path: &'static str,
    pub bytes: Vec<u8>,
    /// Where the product documents reading it, for the message after writing.
    pub deploy: &'static str,
    /// Notes for standard error (a literal secret in a file every user can read, …).
    pub notes: Vec<String>,
}

/// The files for `product`, allowing exactly `servers` (sorted by name, as [`read_allowed`]
/// returns them).
pub fn render(product: Product, servers: &[Allowed]) -> Vec<PolicyFile> {
    product
        .with_files()
        .iter()
        .flat_map(|p| match p {
            Product::ClaudeCode => claude::files(servers),
            Product::Copilot => vec![copilot::file(servers)],
            Product::Codex => vec![codex::file(servers)],
            Product::Cursor | Product::All => Vec::new(),
        })
        .collect()
}

/// The allowlist entries of the JSON products: each distinct command line once, in server order.
fn distinct_argvs(servers: &[Allowed]) -> Vec<&[String]> {
    let mut seen: Vec<&[String]> = Vec::new();
    for s in servers {
        if !seen.contains(&s.argv.as_slice()) {
            seen.push(&s.argv);
        }
    }
    seen
}
