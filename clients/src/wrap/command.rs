//! What `wrap` decides about one server, whatever file it came from: local or remote, already
//! wrapped or not, the command it runs once unwrapped, and whether that command runs a package
//! without an exact version.

use std::path::Path;

use pinlog_core::render::quoted;

use super::shown::masked_url;
use crate::wrapped::{is_pinlog_name, Broken, WrappedCommand};

/// The keys that make a server remote in one client or another (Claude, Cursor, VS Code, Cline:
/// `url`; Gemini CLI: `httpUrl`; Windsurf: `serverUrl`).
pub const URL_KEYS: [&str; 3] = ["url", "httpUrl", "serverUrl"];

/// A `type` (or `transport`) that names a remote transport.
pub fn is_remote_type(t: &str) -> bool {
    matches!(
        t.to_ascii_lowercase().as_str(),
        "http" | "sse" | "streamable-http" | "streamablehttp" | "streamable_http" | "ws"
    )
}

/// One field of a server as found: absent, present but not of the expected shape, or read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field<T> {
    Absent,
    Bad,
    Ok(T),
}

/// A server entry as the file holds it, independent of the file's format.
#[derive(Debug, Clone)]
pub struct View {
    /// A URL key is present, or the type names a remote transport.
    pub remote: bool,
    /// `type`, when it is a string.
    pub kind: Option<String>,
    pub command: Field<String>,
    pub args: Field<Vec<String>>,
}

impl View {
    /// The command line the entry runs (`command`, then `args`), when both read.
    pub fn argv(&self) -> Option<Vec<String>> {
        let Field::Ok(command) = &self.command else {
            return None;
        };
        let args = match &self.args {
            Field::Ok(a) => a.as_slice(),
            Field::Absent => &[],
            Field::Bad => return None,
        };
        Some(std::iter::once(command).chain(args).cloned().collect())
    }
}

/// The command written in front of a server, and what it is given.
#[derive(Debug, Clone)]
pub struct Proxy {
    /// The pinlog program written as `command`.
    pub program: String,
    /// The lockfile given to every wrapped server (`--lock`), as written.
    pub lock: Option<String>,
    /// Other commands that run pinlog: those earlier wraps wrote (`--pinlog`, or another
    /// binary's path), as the backups record them, and the one `unwrap --pinlog` names.
    pub others: Vec<String>,
}

impl Proxy {
    /// `server` (its command, then its arguments) behind this proxy, under `name`.
    pub fn wrap(&self, name: &str, server: Vec<String>) -> WrappedCommand {
        WrappedCommand::new(&self.program, name, self.lock.as_deref(), server)
    }

    /// Whether `command` runs pinlog: its file name is `pinlog` (or `pinlog.exe`), it is the
    /// program this run writes, or one an earlier wrap wrote.
    pub fn is_pinlog(&self, command: &str) -> bool {
        command == self.program
            || self.others.iter().any(|o| o == command)
            || is_pinlog_name(command)
    }

    /// `command` and `args` read as a wrapped command line: `None` when they are none.
    fn parse(&self, command: &str, args: &[String]) -> Option<Result<WrappedCommand, Broken>> {
        WrappedCommand::parse(command, args, |c| self.is_pinlog(c))
    }
}

/// What wrap does with one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WrapPlan {
    /// Left alone: it is reached over the network.
    Remote,
    /// Left alone, for the reason given.
    Skip(String),
    /// Left alone: pinlog already runs in front of it.
    Already(WrappedCommand),
    /// To wrap: `argv` is its command and arguments.
    Wrap { argv: Vec<String> },
}

/// What unwrap does with one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnwrapPlan {
    Remote,
    Skip(String),
    NotWrapped {
        argv: Vec<String>,
    },
    /// Wrapped: what comes off is all but its server's command line.
    Unwrap(WrappedCommand),
    /// It looks wrapped, but the server's command cannot be found in it.
    Cannot(String),
}

fn common(view: &View) -> Result<(String, Vec<String>), Result<(), String>> {
    if view.remote {
        return Err(Ok(()));
    }
    let command = match &view.command {
        Field::Ok(c) => c.clone(),
        Field::Absent => return Err(Err("no command".into())),
        Field::Bad => return Err(Err("its command is not a string".into())),
    };
    let args = match &view.args {
        Field::Ok(a) => a.clone(),
        Field::Absent => Vec::new(),
        Field::Bad => return Err(Err("its args are not a list of strings".into())),
    };
    if let Some(kind) = view
        .kind
        .as_deref()
        .filter(|k| !k.eq_ignore_ascii_case("stdio"))
    {
        return Err(Err(format!("its type {} is not stdio", quoted(kind, 32))));
    }
    Ok((command, args))
}

pub fn plan_wrap(view: &View, proxy: &Proxy) -> WrapPlan {
    let (command, args) = match common(view) {
        Ok(c) => c,
        Err(Ok(())) => return WrapPlan::Remote,
        Err(Err(why)) => return WrapPlan::Skip(why),
    };
    match proxy.parse(&command, &args) {
        Some(Ok(wrapped)) => WrapPlan::Already(wrapped),
        Some(Err(broken)) => WrapPlan::Skip(format!("it runs pinlog already, but {}", broken.why)),
        None => {
            let mut argv = vec![command];
            argv.extend(args);
            WrapPlan::Wrap { argv }
        }
    }
}

pub fn plan_unwrap(view: &View, proxy: &Proxy) -> UnwrapPlan {
    let (command, args) = match common(view) {
        Ok(c) => c,
        Err(Ok(())) => return UnwrapPlan::Remote,
        Err(Err(why)) => return UnwrapPlan::Skip(why),
    };
    match proxy.parse(&command, &args) {
        Some(Ok(wrapped)) => UnwrapPlan::Unwrap(wrapped),
        Some(Err(broken)) => UnwrapPlan::Cannot(broken.why.to_string()),
        None => {
            let mut argv = vec![command];
            argv.extend(args);
            UnwrapPlan::NotWrapped { argv }
        }
    }
}

/// The runner's file name, lowercased, without a Windows extension.
fn runner(program: &str) -> String {
    let base = Path::new(program)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = base
        .rsplit('\\')
        .next()
        .unwrap_or(&base)
        .to_ascii_lowercase();
    for ext in [".exe", ".cmd", ".bat"] {
        if let Some(stem) = base.strip_suffix(ext) {
            return stem.to_string();
        }
    }
    base
}

/// Digits separated by dots, `parts` of them at least, then an optional `-pre`/`+build` tail.
fn exact_version(v: &str, parts: usize) -> bool {
    let core_end = v.find(['-', '+']).unwrap_or(v.len());
    let (core, tail) = v.split_at(core_end);
    let nums: Vec<&str> = core.split('.').collect();
    nums.len() >= parts
        && nums
            .iter()
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        && (tail.is_empty()
            || tail[1..]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-'))
        && (tail.is_empty() || tail.len() > 1)
}

/// The first argument at or after `from` that is not a flag, skipping the values of the flags
/// in `valued`; a `--flag=value` is one argument.
fn operand(args: &[String], from: usize, valued: &[&str]) -> Option<usize> {
    let mut i = from;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            return (i + 1 < args.len()).then_some(i + 1);
        }
        if a.starts_with('-') && a.len() > 1 {
            if !a.contains('=') && valued.contains(&a) {
                i += 1;
            }
            i += 1;
            continue;
        }
        return Some(i);
    }
    None
}

/// The value of the first `--flag VALUE` or `--flag=VALUE` among `names`, before the operand.
fn option_value<'a>(args: &'a [String], from: usize, names: &[&str]) -> Option<&'a str> {
    let mut i = from;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" || !a.starts_with('-') {
            return None;
        }
        for n in names {
            if a == *n {
                return args.get(i + 1).map(String::as_str);
            }
            if let Some(v) = a.strip_prefix(n).and_then(|r| r.strip_prefix('=')) {
                return Some(v);
            }
        }
        i += 1;
    }
    None
}

fn npm_pinned(spec: &str) -> bool {
    if spec.starts_with(['.', '/', '~']) {
        return true; // a local directory: nothing to pin
    }
    let rest = spec.strip_prefix('@').unwrap_or(spec);
    match rest.rfind('@') {
        Some(at) => exact_version(&rest[at + 1..], 3),
        None => false,
    }
}

fn pypi_pinned(spec: &str) -> bool {
    if spec.starts_with(['.', '/', '~']) {
        return true;
    }
    if let Some((_, v)) = spec.split_once("==") {
        let v = v.trim();
        return !v.is_empty() && !v.contains(['*', ',', ';', ' ']) && exact_version(v, 1);
    }
    if let Some((_, v)) = spec.rsplit_once('@') {
        return exact_version(v.trim(), 1);
    }
    false
}

/// Why `argv` runs a package without an exact version, or `None` when it does not (or runs no
/// package pinlog knows how to read): `npx`/`bunx` without `@x.y.z`, `uvx`/`uv tool run`/`pipx
/// run` without `==x.y` (or `@x.y`), `docker run`/`podman run` of an image without `@sha256:`.
pub fn unpinned(argv: &[String]) -> Option<String> {
    let program = argv.first()?;
    let run = runner(program);
    let args = &argv[1..];
    match run.as_str() {
        "npx" | "bunx" => {
            const VALUED: [&str; 8] = [
                "-p",
                "--package",
                "-c",
                "--call",
                "--registry",
                "--cache",
                "-w",
                "--workspace",
            ];
            let spec = match option_value(args, 0, &["--package", "-p"]) {
                Some(p) => p.to_string(),
                None => args[operand(args, 0, &VALUED)?].clone(),
            };
            (!npm_pinned(&spec)).then(|| {
                format!(
                    "{run} runs {} without an exact version (write NAME@x.y.z)",
                    quoted(&masked_url(&spec), 96)
                )
            })
        }
        "uvx" | "uv" | "pipx" => {
            let from = match run.as_str() {
                "uvx" => 0,
                "uv" => {
                    let t = operand(args, 0, &[])?;
                    if args[t] != "tool" || args.get(t + 1).map(String::as_str) != Some("run") {
                        return None;
                    }
                    t + 2
                }
                _ => {
                    let t = operand(args, 0, &[])?;
                    if args[t] != "run" {
                        return None;
                    }
                    t + 1
                }
            };
            const VALUED: [&str; 17] = [
                "--from",
                "--with",
                "--with-editable",
                "--with-requirements",
                "--python",
                "-p",
                "--index",
                "--index-url",
                "--extra-index-url",
                "--default-index",
                "--directory",
                "--project",
                "--env-file",
                "--spec",
                "--pip-args",
                "-i",
                "--cache-dir",
            ];
            let spec = match option_value(args, from, &["--from", "--spec"]) {
                Some(s) => s.to_string(),
                None => args[operand(args, from, &VALUED)?].clone(),
            };
            (!pypi_pinned(&spec)).then(|| {
                format!(
                    "{run} runs {} without an exact version (write NAME==x.y.z)",
                    quoted(&masked_url(&spec), 96)
                )
            })
        }
        "docker" | "podman" => {
            let mut at = operand(args, 0, &["--context", "-c", "--host", "-H", "--config"])?;
            if args[at] == "container" {
                at += 1;
            }
            if args.get(at).map(String::as_str) != Some("run") {
                return None;
            }
            let image = docker_image(args, at + 1)?;
            (!image.contains("@sha256:")).then(|| {
                format!(
                    "{run} runs the image {} without a digest (write IMAGE@sha256:…)",
                    quoted(&masked_url(image), 96)
                )
            })
        }
        _ => None,
    }
}

/// The image `docker run` runs: the first operand, skipping every option's value.
fn docker_image(args: &[String], from: usize) -> Option<&str> {
    // Long options that take no value; every other long option without `=` takes the next one.
    const SWITCHES: [&str; 16] = [
        "--rm",
        "--init",
        "--interactive",
        "--tty",
        "--detach",
        "--privileged",
        "--read-only",
        "--no-healthcheck",
        "--oom-kill-disable",
        "--publish-all",
        "--disable-content-trust",
        "--quiet",
        "--sig-proxy",
        "--help",
        "--use-api-socket",
        "--replace",
    ];
    // Short options that take a value.
    const VALUED_SHORT: &[u8] = b"acehlmpuvw";
    let mut i = from;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            return args.get(i + 1).map(String::as_str);
        }
        if let Some(long) = a.strip_prefix("--") {
            if !long.contains('=') && !SWITCHES.contains(&a) {
                i += 1;
            }
        } else if let Some(short) = a.strip_prefix('-').filter(|s| !s.is_empty()) {
            let last = short.as_bytes()[short.len() - 1];
            if !short.contains('=') && VALUED_SHORT.contains(&last) {
                i += 1;
            }
        } else {
            return Some(a);
        }
        i += 1;
    }
    None
}

/// Whether `a` and `b` are the same file.
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The pinlog program to write: the `pinlog` found on PATH when it is this very binary (its
/// PATH location survives upgrades that move the binary behind a link), else this binary's
/// absolute path, else plain `pinlog`. Clients started from a desktop often do not have the
/// shell's PATH, so a bare name is the last resort.
pub fn default_program() -> String {
    let Ok(exe) = std::env::current_exe() else {
        return "pinlog".into();
    };
    let name = if cfg!(windows) {
        "pinlog.exe"
    } else {
        "pinlog"
    };
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path).filter(|d| d.is_absolute()) {
            let candidate = dir.join(name);
            if candidate.is_file() && same_file(&candidate, &exe) {
                return candidate.to_string_lossy().into_owned();
            }
        }
    }
    exe.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn unpinned_runners() {
        for pinned in [
            &["npx", "-y", "@scope/pkg@1.2.3"][..],
            &["npx", "pkg@1.2.3-rc.1", "--flag"],
            &["npx", "-p", "pkg@2.0.0", "bin"],
            &["npx.cmd", "-y", "pkg@1.0.0"],
            &["uvx", "mcp-server-time==2026.1.2"],
            &["uvx", "--from", "mcp-server-time==1.0", "mcp-server-time"],
            &["uvx", "mcp-server-time@1.0.0"],
            &["uv", "tool", "run", "x==1.2"],
            &["pipx", "run", "--spec", "x==1.2", "x"],
            &[
                "docker",
                "run",
                "-i",
                "--rm",
                "-e",
                "TOKEN",
                "ghcr.io/x/y@sha256:abc",
            ],
            &["node", "server.js"],
            &["python", "-m", "server"],
            &["npx", "./local"],
        ] {
            assert_eq!(unpinned(&v(pinned)), None, "{pinned:?}");
        }
        for loose in [
            &["npx", "-y", "@scope/pkg"][..],
            &["npx", "-y", "@scope/pkg@latest"],
            &["npx", "pkg@^1.2.3"],
            &["npx", "pkg@1"],
            &["bunx", "pkg"],
            &["uvx", "mcp-server-time"],
            &["uvx", "mcp-server-time@latest"],
            &["uvx", "x>=1.0"],
            &["uv", "tool", "run", "x"],
            &["pipx", "run", "x"],
            &[
                "docker",
                "run",
                "-i",
                "--rm",
                "-e",
                "TOKEN",
                "ghcr.io/x/y:1.0",
            ],
            &["docker", "run", "-it", "--name", "n", "-v", "/a:/b", "img"],
            &["podman", "container", "run", "img:latest"],
        ] {
            assert!(unpinned(&v(loose)).is_some(), "{loose:?}");
        }
    }

    #[test]
    fn prefix_and_detection() {
        let p = Proxy {
            program: "/opt/bin/pinlog".into(),
            lock: Some("/t/mcp.lock.json".into()),
            others: vec!["/opt/tools/pl".into()],
        };
        assert_eq!(
            p.wrap("w", v(&["node"])).prefix(),
            v(&["proxy", "--name", "w", "--lock", "/t/mcp.lock.json"])
        );
        assert_eq!(p.wrap("-x", v(&["node"])).prefix()[1], "--name=-x");
        assert!(p.is_pinlog("pinlog"));
        assert!(p.is_pinlog("C:\\bin\\pinlog.exe"));
        assert!(p.is_pinlog("/opt/bin/pinlog"));
        assert!(p.is_pinlog("/opt/tools/pl"));
        assert!(!p.is_pinlog("/opt/bin/pinlogger"));
    }
}
