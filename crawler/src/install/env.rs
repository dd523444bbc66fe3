//! The environment an installer runs with: a home of its own, and of the operator's only what
//! finds programs, the network and the trusted certificate authorities.

use std::path::PathBuf;
use std::process::Command;

use super::jail::{Jail, CA_ENV, JAIL_HOME};
use super::Installers;

/// What of the operator's environment an installer keeps beside [`CA_ENV`]: where to find
/// programs, and how this machine reaches the network (which proxy it uses, how long it waits).
const KEPT_ENV: [&str; 8] = [
    "PATH",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "NO_PROXY",
    "no_proxy",
    "PIP_DEFAULT_TIMEOUT",
];

/// The installers' home, seen from where they run: in the jail its tmpfs, else the crawler's
/// directory for them; and their user npm configuration, which is empty (the machine-wide one
/// stays: administrators put certificate and proxy settings there).
pub(super) fn installer_home(tools: &Installers, jail: Option<&Jail>) -> (PathBuf, PathBuf) {
    match jail {
        Some(_) => (PathBuf::from(JAIL_HOME), PathBuf::from("/dev/null")),
        None => {
            let user_rc = tools.home.join("npmrc");
            if !user_rc.exists() {
                let _ = std::fs::write(&user_rc, b"");
            }
            (tools.home.clone(), user_rc)
        }
    }
}

/// Sets the environment an installer runs with: [`KEPT_ENV`] and [`CA_ENV`] of the operator's,
/// and nothing else of theirs: no home, no user configuration (where registry tokens live), no
/// SSH agent.
pub(super) fn installer_env(cmd: &mut Command, (home, user_rc): &(PathBuf, PathBuf)) {
    cmd.env_clear();
    for name in KEPT_ENV.into_iter().chain(CA_ENV) {
        if let Some(v) = std::env::var_os(name) {
            cmd.env(name, v);
        }
    }
    cmd.env("HOME", home)
        .env("LANG", "C.UTF-8")
        .env("npm_config_cache", home.join("npm-cache"))
        .env("npm_config_userconfig", user_rc)
        .env("npm_config_update_notifier", "false")
        .env("PIP_CONFIG_FILE", "/dev/null")
        .env("PIP_CACHE_DIR", home.join("pip-cache"))
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        // An empty list allows git no protocol at all: a git dependency fails to fetch.
        .env("GIT_ALLOW_PROTOCOL", "")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_SSH_COMMAND", "false");
}
