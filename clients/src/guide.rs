//! How to put pinlog in front of a client's local MCP servers: fixed text, one entry per client
//! `pinlog wrap` knows. Nothing here comes from outside.

/// One client's instructions.
pub struct Client {
    /// The id `pinlog wrap --client` takes.
    pub id: &'static str,
    pub name: &'static str,
    /// Where the client keeps its MCP servers.
    pub config_files: &'static [&'static str],
    /// The member of that file holding the servers.
    pub servers_key: &'static str,
    /// `json` or `toml`.
    pub format: &'static str,
    /// One server, as the proxy runs it: NAME is the server's name, COMMAND ARG… its command.
    pub snippet: &'static str,
    /// What to do after changing the file.
    pub after: &'static str,
    /// Another way the client offers, if any.
    pub alternative: Option<&'static str>,
}

const JSON_SNIPPET: &str = r#"{"mcpServers": {"NAME": {"command": "pinlog", "args": ["proxy", "--name", "NAME", "--", "COMMAND", "ARG"]}}}"#;

/// Every client, by id.
pub const CLIENTS: [Client; 8] = [
    Client {
        id: "claude-desktop",
        name: "Claude Desktop",
        config_files: &[
            "macOS: ~/Library/Application Support/Claude/claude_desktop_config.json",
            "Windows: %APPDATA%\\Claude\\claude_desktop_config.json",
            "Linux: ~/.config/Claude/claude_desktop_config.json",
        ],
        servers_key: "mcpServers",
        format: "json",
        snippet: JSON_SNIPPET,
        after: "Quit and restart Claude Desktop.",
        alternative: None,
    },
    Client {
        id: "claude-code",
        name: "Claude Code",
        config_files: &[
            "~/.claude.json (user and local scope)",
            ".mcp.json in the project (project scope, shared with the team)",
        ],
        servers_key: "mcpServers",
        format: "json",
        snippet: JSON_SNIPPET,
        after: "Start a new Claude Code session.",
        alternative: Some("claude mcp add NAME -- pinlog proxy --name NAME COMMAND ARG"),
    },
    Client {
        id: "cursor",
        name: "Cursor",
        config_files: &[
            "~/.cursor/mcp.json (every project)",
            ".cursor/mcp.json in the project",
        ],
        servers_key: "mcpServers",
        format: "json",
        snippet: JSON_SNIPPET,
        after: "Reload the MCP servers in Cursor's settings, or restart Cursor.",
        alternative: None,
    },
    Client {
        id: "vscode",
        name: "VS Code",
        config_files: &[
            ".vscode/mcp.json in the workspace",
            "the user mcp.json (command palette: MCP: Open User Configuration): \
             ~/.config/Code/User/mcp.json on Linux, \
             ~/Library/Application Support/Code/User/mcp.json on macOS, \
             %APPDATA%\\Code\\User\\mcp.json on Windows",
        ],
        servers_key: "servers",
        format: "json",
        snippet: r#"{"servers": {"NAME": {"type": "stdio", "command": "pinlog", "args": ["proxy", "--name", "NAME", "--", "COMMAND", "ARG"]}}}"#,
        after: "Restart the server from the MCP servers list, or reload the window.",
        alternative: None,
    },
    Client {
        id: "gemini",
        name: "Gemini CLI",
        config_files: &[
            "~/.gemini/settings.json (every project)",
            ".gemini/settings.json in the project",
        ],
        servers_key: "mcpServers",
        format: "json",
        snippet: JSON_SNIPPET,
        after: "Start Gemini CLI again.",
        alternative: None,
    },
    Client {
        id: "windsurf",
        name: "Windsurf",
        config_files: &["~/.codeium/windsurf/mcp_config.json"],
        servers_key: "mcpServers",
        format: "json",
        snippet: JSON_SNIPPET,
        after: "Refresh the MCP servers in Windsurf's settings, or restart Windsurf.",
        alternative: None,
    },
    Client {
        id: "cline",
        name: "Cline",
        config_files: &[
            "cline_mcp_settings.json in Cline's extension storage, \
             Code/User/globalStorage/saoudrizwan.claude-dev/settings/ under VS Code's \
             configuration directory (in Cline: MCP Servers, Configure MCP Servers opens it)",
        ],
        servers_key: "mcpServers",
        format: "json",
        snippet: JSON_SNIPPET,
        after: "Cline reloads the file when it is saved.",
        alternative: None,
    },
    Client {
        id: "codex",
        name: "Codex",
        config_files: &["~/.codex/config.toml"],
        servers_key: "mcp_servers",
        format: "toml",
        snippet: "[mcp_servers.NAME]\ncommand = \"pinlog\"\nargs = [\"proxy\", \"--name\", \"NAME\", \"--\", \"COMMAND\", \"ARG\"]",
        after: "Start Codex again.",
        alternative: Some("codex mcp add NAME -- pinlog proxy --name NAME COMMAND ARG"),
    },
];

/// Every client id, in the order of [`CLIENTS`].
pub fn ids() -> impl Iterator<Item = &'static str> {
    CLIENTS.iter().map(|c| c.id)
}

/// Other names a client is asked for by.
const ALIASES: [(&str, &str); 3] = [
    ("gemini-cli", "gemini"),
    ("vs-code", "vscode"),
    ("code", "vscode"),
];

/// Every name `find` takes: the ids, then the aliases.
pub fn names() -> impl Iterator<Item = &'static str> {
    ids().chain(ALIASES.iter().map(|(alias, _)| *alias))
}

pub fn find(name: &str) -> Option<&'static Client> {
    let id = ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, id)| id);
    CLIENTS.iter().find(|c| c.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ids_are_those_wrap_takes() {
        let wrap: Vec<&str> = crate::wrap::clients::Client::ALL
            .iter()
            .map(|c| c.id())
            .collect();
        assert_eq!(ids().collect::<Vec<_>>(), wrap);
        for (alias, id) in ALIASES {
            assert_eq!(find(alias).unwrap().id, id);
        }
    }
}
