//! Where each MCP client keeps its servers, per operating system, and how its file is laid out.
//! docs/WRAP.md has the table, with what is and is not certain about it.

use std::path::{Path, PathBuf};

use super::json_edit::Layout;

/// The clients `wrap` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Client {
    /// Claude Desktop: claude_desktop_config.json
    ClaudeDesktop,
    /// Claude Code: ~/.claude.json (user and per-project servers)
    ClaudeCode,
    /// Cursor: ~/.cursor/mcp.json
    Cursor,
    /// VS Code: the user mcp.json
    Vscode,
    /// Gemini CLI: ~/.gemini/settings.json
    Gemini,
    /// Windsurf: ~/.codeium/windsurf/mcp_config.json
    Windsurf,
    /// Cline (the VS Code extension): cline_mcp_settings.json
    Cline,
    /// Codex: ~/.codex/config.toml
    Codex,
}

impl Client {
    pub const ALL: [Client; 8] = [
        Client::ClaudeDesktop,
        Client::ClaudeCode,
        Client::Cursor,
        Client::Vscode,
        Client::Gemini,
        Client::Windsurf,
        Client::Cline,
        Client::Codex,
    ];

    /// The name on the command line and in backups.
    pub fn id(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "claude-desktop",
            Client::ClaudeCode => "claude-code",
            Client::Cursor => "cursor",
            Client::Vscode => "vscode",
            Client::Gemini => "gemini",
            Client::Windsurf => "windsurf",
            Client::Cline => "cline",
            Client::Codex => "codex",
        }
    }

    /// The name people know it by.
    pub fn title(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "Claude Desktop",
            Client::ClaudeCode => "Claude Code",
            Client::Cursor => "Cursor",
            Client::Vscode => "VS Code",
            Client::Gemini => "Gemini CLI",
            Client::Windsurf => "Windsurf",
            Client::Cline => "Cline",
            Client::Codex => "Codex",
        }
    }

    pub fn format(self) -> Format {
        match self {
            Client::ClaudeCode => Format::Json(Layout::ClaudeCode),
            Client::Vscode => Format::Json(Layout::VsCode),
            Client::Codex => Format::Toml,
            _ => Format::Json(Layout::McpServers),
        }
    }

    /// The client's user configuration file on `env`'s system.
    pub fn path(self, env: &Env) -> PathBuf {
        let home = &env.home;
        match self {
            Client::ClaudeDesktop => {
                under(&env.app_config_dir(), "Claude/claude_desktop_config.json")
            }
            Client::ClaudeCode => env
                .claude_config_dir
                .as_deref()
                .unwrap_or(home)
                .join(".claude.json"),
            Client::Cursor => under(home, ".cursor/mcp.json"),
            Client::Vscode => under(&env.app_config_dir(), "Code/User/mcp.json"),
            Client::Gemini => under(home, ".gemini/settings.json"),
            Client::Windsurf => under(home, ".codeium/windsurf/mcp_config.json"),
            Client::Cline => under(
                &env.app_config_dir(),
                "Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
            ),
            Client::Codex => env
                .codex_home
                .clone()
                .unwrap_or_else(|| home.join(".codex"))
                .join("config.toml"),
        }
    }
}

/// `base` joined with each `/`-separated part, so that the separators are the platform's.
fn under(base: &Path, parts: &str) -> PathBuf {
    parts.split('/').fold(base.to_path_buf(), |p, c| p.join(c))
}

/// How a file is read and edited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json(Layout),
    Toml,
}

impl Format {
    /// A file given with `--config`: TOML when its name ends in `.toml`, else JSON with any of
    /// the layouts.
    pub fn guess(path: &Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("toml") => Format::Toml,
            _ => Format::Json(Layout::Any),
        }
    }
}

/// The operating system whose layout the paths follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// Linux and the other Unix systems that follow the XDG layout.
    Linux,
    MacOs,
    Windows,
}

impl Os {
    pub fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::MacOs
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }
}

/// Where to look: the home directory and the variables that move a client's files. Built from
/// the process environment by [`Env::from_process`], or by hand (tests use a fake home).
#[derive(Debug, Clone)]
pub struct Env {
    pub os: Os,
    pub home: PathBuf,
    /// `XDG_CONFIG_HOME` (Linux; absolute only).
    pub xdg_config_home: Option<PathBuf>,
    /// `APPDATA` (Windows).
    pub appdata: Option<PathBuf>,
    /// `CODEX_HOME` (Codex).
    pub codex_home: Option<PathBuf>,
    /// `CLAUDE_CONFIG_DIR` (Claude Code).
    pub claude_config_dir: Option<PathBuf>,
    /// Where `--project` looks for `.mcp.json`.
    pub cwd: PathBuf,
}

impl Env {
    /// A Linux layout under `home`, no variables set, the project directory `home`.
    pub fn with_home(home: &Path) -> Env {
        Env {
            os: Os::Linux,
            home: home.to_path_buf(),
            xdg_config_home: None,
            appdata: None,
            codex_home: None,
            claude_config_dir: None,
            cwd: home.to_path_buf(),
        }
    }

    /// The running process's: `HOME` (`USERPROFILE` on Windows), the variables above, the
    /// current directory.
    pub fn from_process() -> Result<Env, String> {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let os = Os::current();
        let home = match os {
            Os::Windows => var("USERPROFILE").or_else(|| var("HOME")),
            _ => var("HOME"),
        }
        .ok_or("no home directory: HOME is not set")?;
        let cwd = std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?;
        Ok(Env {
            os,
            home,
            xdg_config_home: var("XDG_CONFIG_HOME").filter(|p| p.is_absolute()),
            appdata: var("APPDATA"),
            codex_home: var("CODEX_HOME"),
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            cwd,
        })
    }

    /// Where Electron applications (Claude Desktop, VS Code) keep their data: `~/.config` or
    /// `$XDG_CONFIG_HOME` on Linux, `~/Library/Application Support` on macOS, `%APPDATA%` on
    /// Windows.
    pub fn app_config_dir(&self) -> PathBuf {
        match self.os {
            Os::Linux => self
                .xdg_config_home
                .clone()
                .unwrap_or_else(|| self.home.join(".config")),
            Os::MacOs => under(&self.home, "Library/Application Support"),
            Os::Windows => self
                .appdata
                .clone()
                .unwrap_or_else(|| under(&self.home, "AppData/Roaming")),
        }
    }

    /// The project configuration `--project` adds: `.mcp.json` in the current directory.
    pub fn project_file(&self) -> PathBuf {
        self.cwd.join(".mcp.json")
    }
}
