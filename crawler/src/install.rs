//! Installing the exact package a candidate names into a scratch prefix, with nothing of the
//! package run: npm with `--ignore-scripts`, pip with wheels only (`--only-binary :all:`, so no
//! `setup.py` runs).
//!
//! The installers run in a sandbox of their own ([`Jail`]: the network, the scratch directory
//! and nothing else of the operator's) with an environment of their own (a private home and
//! caches, no configuration files, git allowed no protocol), so a hostile dependency finds none
//! of the operator's files or credentials; and a package any part of which came from somewhere
//! other than the registry (a git, file or URL dependency) is refused before anything of it runs.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pinlog_core::json::{self, Limits, Value};

use crate::candidate::pypi_normalized;
use crate::fetch::{get, text};
use crate::sandbox::Bind;

/// Where packages come from and with what tools.
#[derive(Debug, Clone)]
pub struct Installers {
    pub npm_registry: String,
    pub pypi_index: String,
    /// The `npm` to install with and the `node` to run with.
    pub npm: PathBuf,
    pub node: PathBuf,
    /// The Python whose `venv` and `pip` install PyPI packages.
    pub python: PathBuf,
    pub timeout: Duration,
    /// The installers' home: their caches live here, and nothing of the operator's.
    pub home: PathBuf,
}

/// A package installed and ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub version: String,
    /// The registry's digest of what was installed: npm's `integrity`, or `sha256:<hex>` of
    /// the PyPI file.
    pub registry_digest: Option<String>,
    /// The command, by absolute paths.
    pub argv: Vec<OsString>,
    /// What of the host the command must be able to read.
    pub binds: Vec<Bind>,
}

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

/// Why an install failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallError {
    pub message: String,
    /// The package unpacks past `--max-unpacked-bytes` (or one file of it past
    /// `--max-file-bytes`).
    pub too_large: bool,
}

impl From<String> for InstallError {
    fn from(message: String) -> InstallError {
        InstallError {
            message,
            too_large: false,
        }
    }
}

impl From<&str> for InstallError {
    fn from(message: &str) -> InstallError {
        InstallError::from(message.to_string())
    }
}

/// How installers are confined: bubblewrap with the host's network, the look's caps, an empty
/// home, and a tmpfs of `unpacked_bytes` at the scratch directory, whose contents are copied to
/// the real one when the installer succeeds: a package that unpacks past the cap fills the
/// tmpfs, never the disk.
#[derive(Debug, Clone)]
pub struct Jail {
    pub bwrap: PathBuf,
    /// `pinlog sandbox-exec … --`: the look's cgroup, rlimits and seccomp filter.
    pub confine: Vec<OsString>,
    pub unpacked_bytes: u64,
}

/// The home of a confined installer, on a tmpfs of its own.
const JAIL_HOME: &str = "/home/installer";
/// Where a confined installer sees the real scratch directory, to copy its work in and out.
const JAIL_OUT: &str = "/pinlog-out";
/// What of `/etc` an installer needs to reach the registry, besides what every sandbox shows.
const NETWORK_ETC: [&str; 4] = [
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/gai.conf",
];
/// The variables an installer keeps that name the certificate authorities this machine trusts:
/// files or directories.
const CA_ENV: [&str; 7] = [
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "PIP_CERT",
    "GIT_SSL_CAINFO",
];
/// Run inside the jail as `sh -c COPY <dir> <installer…>`: the scratch directory's earlier work
/// in, the installer, its work out.
const COPY: &str =
    "cp -a -- /pinlog-out/. \"$0\"/ && \"$@\" && exec cp -a -- \"$0\"/. /pinlog-out/";

impl Jail {
    /// `cmd` (an installer with its whole environment set) run confined, with `dir` as its
    /// scratch directory and `binds` readable.
    fn wrap(&self, cmd: &Command, dir: &Path, binds: &[Bind]) -> Command {
        let size = self.unpacked_bytes.to_string();
        let mut a = self.confine.clone();
        a.push(self.bwrap.clone().into());
        a.extend(crate::sandbox::base_args(self.unpacked_bytes));
        a.push("--share-net".into());
        let ca = CA_ENV
            .iter()
            .filter_map(std::env::var_os)
            .map(PathBuf::from);
        for file in NETWORK_ETC.iter().map(PathBuf::from).chain(ca) {
            a.extend(["--ro-bind-try".into(), file.clone().into(), file.into()]);
        }
        for b in binds {
            a.extend([
                "--ro-bind".into(),
                b.source.clone().into_os_string(),
                b.dest.clone().into_os_string(),
            ]);
        }
        a.extend([
            "--size".into(),
            size.clone().into(),
            "--tmpfs".into(),
            dir.into(),
            "--bind".into(),
            dir.into(),
            JAIL_OUT.into(),
            "--size".into(),
            size.into(),
            "--tmpfs".into(),
            "/home".into(),
            "--dir".into(),
            JAIL_HOME.into(),
            "--chdir".into(),
            JAIL_HOME.into(),
        ]);
        for (k, v) in cmd.get_envs() {
            if let Some(v) = v {
                a.extend(["--setenv".into(), k.to_os_string(), v.to_os_string()]);
            }
        }
        a.extend(["--setenv".into(), "TMPDIR".into(), "/tmp".into()]);
        a.extend(["--".into(), "/bin/sh".into(), "-c".into(), COPY.into()]);
        a.push(dir.into());
        a.push(cmd.get_program().to_os_string());
        a.extend(cmd.get_args().map(OsString::from));
        let mut jailed = Command::new(&a[0]);
        jailed.args(&a[1..]).env_clear();
        jailed
    }
}

/// The installers' home, seen from where they run: in the jail its tmpfs, else the crawler's
/// directory for them; and their user npm configuration, which is empty (the machine-wide one
/// stays: administrators put certificate and proxy settings there).
fn installer_home(tools: &Installers, jail: Option<&Jail>) -> (PathBuf, PathBuf) {
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
fn installer_env(cmd: &mut Command, (home, user_rc): &(PathBuf, PathBuf)) {
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

/// Every package npm installed must have come from the registry: no link to a directory, no
/// git or URL source.
fn npm_provenance(lock: &Value<'_>, registry: &str) -> Result<(), String> {
    let prefix = format!("{}/", registry.trim_end_matches('/'));
    let packages = get(lock, "packages")
        .and_then(Value::as_object)
        .ok_or("npm wrote no package list")?;
    for (path, entry) in packages.iter() {
        if path.is_empty() {
            continue;
        }
        let bundled = matches!(get(entry, "inBundle"), Some(Value::Bool(true)));
        let from = if matches!(get(entry, "link"), Some(Value::Bool(true))) {
            Some("a link to a directory".to_string())
        } else if bundled {
            // A bundled dependency came inside its parent's tarball, which is checked itself.
            let parent = path.rsplit_once("/node_modules/").map(|(p, _)| p);
            match parent.and_then(|p| packages.get(p)) {
                Some(_) => None,
                None => Some("a bundle with no parent package".to_string()),
            }
        } else {
            match text(entry, "resolved") {
                Some(url) if url.starts_with(&prefix) => None,
                Some(url) => Some(pinlog_core::render::quoted(url, 120)),
                None => Some("no recorded source".to_string()),
            }
        };
        if let Some(from) = from {
            return Err(format!(
                "{} comes from {from}, not from the registry",
                pinlog_core::render::quoted(path, 120)
            ));
        }
    }
    Ok(())
}

/// Every distribution pip installed must have come through the index: no direct URL, no VCS
/// checkout, no local directory.
fn pip_provenance(report: &Value<'_>) -> Result<(), String> {
    for item in get(report, "install")
        .and_then(Value::as_array)
        .unwrap_or(&[])
    {
        let name = get(item, "metadata")
            .and_then(|m| text(m, "name"))
            .unwrap_or("?");
        let direct = matches!(get(item, "is_direct"), Some(Value::Bool(true)));
        let archive = get(item, "download_info")
            .and_then(|d| get(d, "archive_info"))
            .is_some();
        if direct || !archive {
            return Err(format!(
                "{} does not come from the index",
                pinlog_core::render::quoted(name, 120)
            ));
        }
    }
    Ok(())
}

/// `path` with `.` and `..` taken out by their text alone, so that `/usr/local/bin/../../../opt`
/// is seen as `/opt` before it is compared with the system directories.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Binds for `program` and every link on the way to the file it names, each path showing the
/// real file; nothing when it lies in the system directories the sandbox shows anyway, or in
/// `inside` (the scratch directory, shown whole).
fn program_binds(program: &Path, inside: &Path) -> Result<Vec<Bind>, String> {
    let real = program
        .canonicalize()
        .map_err(|e| format!("{}: {e}", program.display()))?;
    let mut binds = Vec::new();
    let mut at = program.to_path_buf();
    for _ in 0..16 {
        if !at.starts_with(inside) && !crate::sandbox::is_system(&at) {
            binds.push(Bind {
                source: real.clone(),
                dest: at.clone(),
            });
        }
        match std::fs::read_link(&at) {
            Ok(next) => at = lexical(&at.parent().map_or(next.clone(), |d| d.join(&next))),
            Err(_) => return Ok(binds),
        }
    }
    Err(format!(
        "{} is a chain of too many links",
        program.display()
    ))
}

/// Installs `name@version` (the latest when `None`) from npm under `dir`.
pub fn npm(
    tools: &Installers,
    name: &str,
    version: Option<&str>,
    dir: &Path,
    jail: Option<&Jail>,
) -> Result<Installed, InstallError> {
    let spec = format!("{name}@{}", version.unwrap_or("latest"));
    let home = installer_home(tools, jail);
    let tool_binds = match jail {
        Some(_) => npm_binds(tools, dir)?,
        None => Vec::new(),
    };
    npm_can_refuse_sources(tools, dir, jail, &home, &tool_binds)?;
    let mut cmd = Command::new(&tools.npm);
    installer_env(&mut cmd, &home);
    cmd.arg("install")
        .arg("--prefix")
        .arg(dir)
        .args([
            "--ignore-scripts",
            // Only the registry: npm refuses git, file, directory and URL sources before it
            // fetches anything (a git source would have npm run the source's own scripts).
            "--allow-git=none",
            "--allow-file=none",
            "--allow-directory=none",
            "--allow-remote=none",
            "--no-audit",
            "--no-fund",
            "--no-update-notifier",
            "--omit=dev",
            "--loglevel=error",
        ])
        .arg(format!("--registry={}", tools.npm_registry))
        .arg("--")
        .arg(&spec)
        .env("npm_config_ignore_scripts", "true")
        // Should anything still ask for git, it gets a program that does nothing.
        .env("npm_config_git", "/bin/false");
    run(
        confined(cmd, jail, dir, &tool_binds),
        tools.timeout,
        "npm install",
        jail.is_some(),
    )?;

    let modules = dir.join("node_modules");
    let lock = read_json(&modules.join(".package-lock.json"))?;
    npm_provenance(&lock, &tools.npm_registry)?;
    let entry = get(&lock, "packages")
        .and_then(|p| get(p, &format!("node_modules/{name}")))
        .ok_or_else(|| format!("npm installed no {name}"))?;
    let installed_version = text(entry, "version")
        .ok_or("npm recorded no version")?
        .to_string();
    let integrity = text(entry, "integrity").map(str::to_string);

    let package_dir = modules.join(name);
    let manifest = read_json(&package_dir.join("package.json"))?;
    let bin = pick_bin(&manifest, name)?;
    let script = inside(&package_dir, &bin)?;
    let mut binds = vec![Bind::same(dir)];
    binds.extend(program_binds(&tools.node, dir)?);
    Ok(Installed {
        version: installed_version,
        registry_digest: integrity,
        argv: vec![tools.node.clone().into(), script.into()],
        binds,
    })
}

/// What a confined npm must read: `npm` and `node` (at each link on their way), and the npm
/// package `npm` runs when it lies outside the system directories.
fn npm_binds(tools: &Installers, dir: &Path) -> Result<Vec<Bind>, String> {
    let mut binds = program_binds(&tools.npm, dir)?;
    binds.extend(program_binds(&tools.node, dir)?);
    let real = tools
        .npm
        .canonicalize()
        .map_err(|e| format!("{}: {e}", tools.npm.display()))?;
    if real.ends_with("bin/npm-cli.js") {
        if let Some(package) = real.parent().and_then(Path::parent) {
            if !crate::sandbox::is_system(package) {
                binds.push(Bind::same(package));
            }
        }
    }
    Ok(binds)
}

/// `cmd` in `jail` when there is one, with `dir` its scratch directory and `binds` readable.
fn confined(cmd: Command, jail: Option<&Jail>, dir: &Path, binds: &[Bind]) -> Command {
    match jail {
        Some(j) => j.wrap(&cmd, dir, binds),
        None => cmd,
    }
}

/// npm before 11.x ignores the `--allow-*` options it does not know, and would then fetch git,
/// file and URL sources: such an npm is not used.
fn npm_can_refuse_sources(
    tools: &Installers,
    dir: &Path,
    jail: Option<&Jail>,
    home: &(PathBuf, PathBuf),
    binds: &[Bind],
) -> Result<(), InstallError> {
    let mut cmd = Command::new(&tools.npm);
    installer_env(&mut cmd, home);
    cmd.args(["config", "get", "allow-git"]);
    // Beside the look's own directory (looks run side by side), not in it: a confined npm's
    // work is copied over it when it ends.
    let answer = dir.with_extension("npm-allow-git");
    let file = std::fs::File::create(&answer)
        .map_err(|e| format!("cannot create {}: {e}", answer.display()))?;
    run_to(
        confined(cmd, jail, dir, binds),
        tools.timeout,
        "npm config",
        Stdio::from(file),
        jail.is_some(),
    )?;
    let said = std::fs::read_to_string(&answer).unwrap_or_default();
    let _ = std::fs::remove_file(&answer);
    match said.trim() {
        "all" | "none" | "root" => Ok(()),
        _ => Err(format!(
            "{} cannot refuse git and URL dependencies (it knows no --allow-git); use a newer npm",
            tools.npm.display()
        )
        .into()),
    }
}

/// The bin to run: the only one, or the one named like the package, else the first by name.
fn pick_bin(manifest: &Value<'_>, name: &str) -> Result<String, String> {
    let base = name.rsplit('/').next().unwrap_or(name);
    match get(manifest, "bin") {
        Some(Value::String(s)) => Ok(s.to_string()),
        Some(Value::Object(o)) => {
            let mut bins: Vec<(&str, &str)> = o
                .iter()
                .filter_map(|(k, v)| Some((k, v.as_str()?)))
                .collect();
            bins.sort();
            bins.iter()
                .find(|(k, _)| *k == base)
                .or(bins.first())
                .map(|(_, v)| v.to_string())
                .ok_or_else(|| "the package names no bin to run".into())
        }
        _ => Err("the package names no bin to run".into()),
    }
}

/// `rel` inside `root`, refusing a path that climbs out of it.
fn inside(root: &Path, rel: &str) -> Result<PathBuf, String> {
    let p = Path::new(rel);
    if p.components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(format!(
            "the bin {} leaves its package",
            pinlog_core::render::quoted(rel, 80)
        ));
    }
    let full = root.join(p);
    let real = full
        .canonicalize()
        .map_err(|e| format!("the bin {}: {e}", full.display()))?;
    let real_root = root
        .canonicalize()
        .map_err(|e| format!("{}: {e}", root.display()))?;
    if !real.starts_with(&real_root) {
        return Err(format!(
            "the bin {} links out of its package",
            pinlog_core::render::quoted(rel, 80)
        ));
    }
    Ok(real)
}

/// Installs `name==version` (the newest when `None`) from PyPI into a venv under `dir`.
pub fn pypi(
    tools: &Installers,
    name: &str,
    version: Option<&str>,
    dir: &Path,
    jail: Option<&Jail>,
) -> Result<Installed, InstallError> {
    let venv = dir.join("venv");
    let home = installer_home(tools, jail);
    // A confined pip runs the interpreter itself (not a shim that needs the operator's home),
    // and reads it, its library and the packages pip is one of.
    let (python, tool_binds) = match jail {
        Some(_) => python_for_install(&tools.python, dir)?,
        None => (tools.python.clone(), Vec::new()),
    };
    let mut mk = Command::new(&python);
    installer_env(&mut mk, &home);
    mk.args(["-m", "venv", "--without-pip"]).arg(&venv);
    run(
        confined(mk, jail, dir, &tool_binds),
        tools.timeout,
        "python -m venv",
        jail.is_some(),
    )?;
    let report = dir.join("pip-report.json");
    let spec = match version {
        Some(v) => format!("{name}=={v}"),
        None => name.to_string(),
    };
    let mut pip = Command::new(&python);
    installer_env(&mut pip, &home);
    pip.args(["-m", "pip", "--python"])
        .arg(venv.join("bin/python"))
        .args([
            "install",
            "--only-binary",
            ":all:",
            "--no-input",
            "--disable-pip-version-check",
            "--no-warn-script-location",
            "--quiet",
        ])
        .arg("--index-url")
        .arg(&tools.pypi_index)
        .arg("--report")
        .arg(&report)
        .arg("--")
        .arg(&spec);
    run(
        confined(pip, jail, dir, &tool_binds),
        tools.timeout,
        "pip install",
        jail.is_some(),
    )?;

    let report = read_json(&report)?;
    pip_provenance(&report)?;
    let want = pypi_normalized(name);
    let item = get(&report, "install")
        .and_then(Value::as_array)
        .unwrap_or(&[])
        .iter()
        .find(|i| {
            get(i, "metadata")
                .and_then(|m| text(m, "name"))
                .is_some_and(|n| pypi_normalized(n) == want)
        })
        .ok_or_else(|| format!("pip installed no {name}"))?;
    let installed_version = get(item, "metadata")
        .and_then(|m| text(m, "version"))
        .ok_or("pip recorded no version")?
        .to_string();
    let sha256 = get(item, "download_info")
        .and_then(|d| get(d, "archive_info"))
        .and_then(|a| get(a, "hashes"))
        .and_then(|h| text(h, "sha256"))
        .map(|h| format!("sha256:{h}"));
    let script = console_script(&venv, &want, &installed_version)?;
    let mut binds = vec![Bind::same(dir)];
    binds.extend(program_binds(&venv.join("bin/python"), dir)?);
    binds.extend(python_library(&tools.python)?);
    Ok(Installed {
        version: installed_version,
        registry_digest: sha256,
        argv: vec![venv.join("bin").join(script).into()],
        binds,
    })
}

/// The console script of the installed distribution: the one named like the project, the only
/// one, or else the first by name.
fn console_script(venv: &Path, project: &str, version: &str) -> Result<String, String> {
    let lib = venv.join("lib");
    let dist_info = format!("{}-{version}.dist-info", project.replace('-', "_"));
    let mut entry_points = None;
    for python in std::fs::read_dir(&lib)
        .map_err(|e| format!("{}: {e}", lib.display()))?
        .flatten()
    {
        let site = python.path().join("site-packages");
        for d in std::fs::read_dir(&site).into_iter().flatten().flatten() {
            let n = d.file_name().to_string_lossy().to_lowercase();
            if n == dist_info.to_lowercase() {
                entry_points = Some(d.path().join("entry_points.txt"));
            }
        }
    }
    let path = entry_points.ok_or_else(|| format!("no {dist_info} in the venv"))?;
    let text = std::fs::read_to_string(&path)
        .map_err(|_| "the package has no console script to run".to_string())?;
    let mut scripts: Vec<&str> = Vec::new();
    let mut in_section = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_section = line == "[console_scripts]";
        } else if in_section {
            if let Some((name, _)) = line.split_once('=') {
                let name = name.trim();
                if !name.is_empty()
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
                {
                    scripts.push(name);
                }
            }
        }
    }
    scripts.sort();
    scripts
        .iter()
        .find(|s| pypi_normalized(s) == project)
        .or(scripts.first())
        .map(|s| s.to_string())
        .ok_or_else(|| "the package has no console script to run".into())
}

/// The interpreter `python` runs (past any shim), with what a confined pip must read: the
/// interpreter and the one its venvs link to (at each link on their way), its library, and its
/// packages, pip among them.
fn python_for_install(python: &Path, dir: &Path) -> Result<(PathBuf, Vec<Bind>), String> {
    const ASK: &str = "import sys, sysconfig as s\n\
        print(sys.executable); print(getattr(sys, '_base_executable', sys.executable))\n\
        print(s.get_paths()['purelib']); print(s.get_paths()['platlib'])\n";
    let out = Command::new(python)
        .args(["-c", ASK])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    let said = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<PathBuf> = said.lines().map(|l| PathBuf::from(l.trim())).collect();
    let [executable, base, packages @ ..] = lines.as_slice() else {
        return Err(format!("{} did not say where it is", python.display()));
    };
    if !out.status.success() || !executable.is_absolute() {
        return Err(format!("{} did not say where it is", python.display()));
    }
    let mut binds = program_binds(executable, dir)?;
    binds.extend(program_binds(base, dir)?);
    binds.extend(python_library(executable)?);
    for p in packages {
        if p.is_absolute() && p.is_dir() && !crate::sandbox::is_system(p) {
            binds.push(Bind::same(p));
        }
    }
    Ok((executable.clone(), binds))
}

/// The standard library (and shared libpython, by the name the loader asks for) of `python`,
/// which a venv made by it reads.
fn python_library(python: &Path) -> Result<Vec<Bind>, String> {
    const ASK: &str = "import os, sysconfig as s\n\
        p = s.get_paths()\n\
        print(p['stdlib']); print(p['platstdlib'])\n\
        if s.get_config_var('Py_ENABLE_SHARED'):\n\
        \x20   print(os.path.join(s.get_config_var('LIBDIR') or '', s.get_config_var('INSTSONAME') or ''))\n";
    let out = Command::new(python)
        .args(["-c", ASK])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} did not say where its library is",
            python.display()
        ));
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut binds: Vec<Bind> = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let path = PathBuf::from(line.trim());
        if !path.is_absolute() || crate::sandbox::is_system(&path) || !path.exists() {
            continue;
        }
        // A library directory of the root or of a home itself would show a server everything.
        if path.components().count() < 3 || Some(&path) == home.as_ref() {
            return Err(format!(
                "{}'s library at {} is too broad to show a server",
                python.display(),
                path.display()
            ));
        }
        if !binds.iter().any(|b| b.dest == path) {
            binds.push(Bind::same(&path));
        }
    }
    Ok(binds)
}

fn read_json(path: &Path) -> Result<Value<'static>, String> {
    let bytes = pinlog_core::files::read_bounded(path, 64 << 20)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    json::parse(&bytes, Limits::default())
        .map(Value::into_owned)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs an installer with a deadline, in a process group of its own that is killed whole
/// afterwards (pip re-executes itself, npm starts git): nothing it started outlives it. Its
/// standard error (the end of it) is the failure.
/// A confined installer that ran out of room ran into the unpacked-size cap: its tmpfs filled
/// (`ENOSPC`), or one file passed the file-size cap (`EFBIG`, or death by `SIGXFSZ`).
fn run(cmd: Command, timeout: Duration, what: &str, jailed: bool) -> Result<(), InstallError> {
    run_to(cmd, timeout, what, Stdio::null(), jailed)
}

/// [`run`], with standard output going to `stdout`.
fn run_to(
    mut cmd: Command,
    timeout: Duration,
    what: &str,
    stdout: Stdio,
    jailed: bool,
) -> Result<(), InstallError> {
    use std::os::unix::process::CommandExt;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    let mut stderr = child.stderr.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let _ = (&mut stderr).take(1 << 20).read_to_end(&mut kept);
        // Drain the rest so the installer never blocks on a full pipe.
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
        let _ = tx.send(kept);
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Ok(s),
            Ok(None) if start.elapsed() >= timeout => {
                break Err(format!("{what} took over {} s", timeout.as_secs()))
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => break Err(format!("{what}: {e}")),
        }
    };
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
    // A process that left the group may still hold the pipe: its output is not waited for.
    let kept = rx.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
    let status = status?;
    if status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&kept);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" | ");
    let too_large = jailed
        && (status.code() == Some(128 + rustix::process::Signal::XFSZ.as_raw())
            || [
                "ENOSPC",
                "No space left on device",
                "EFBIG",
                "File too large",
            ]
            .iter()
            .any(|m| text.contains(m)));
    Err(InstallError {
        message: format!(
            "{what} failed ({status}): {}",
            pinlog_core::render::quoted(&tail, 300)
        ),
        too_large,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(s: &str) -> Value<'static> {
        json::parse(s.as_bytes(), Limits::default())
            .unwrap()
            .into_owned()
    }

    #[test]
    fn the_bin_named_like_the_package_is_run_and_may_not_leave_it() {
        let m = value(r#"{"bin":{"zz":"b.js","server":"s.js","aa":"a.js"}}"#);
        assert_eq!(pick_bin(&m, "@scope/server").unwrap(), "s.js");
        assert_eq!(pick_bin(&m, "other").unwrap(), "a.js");
        assert_eq!(
            pick_bin(&value(r#"{"bin":"cli.js"}"#), "x").unwrap(),
            "cli.js"
        );
        assert!(pick_bin(&value(r#"{"bin":7}"#), "x").is_err());
        assert!(pick_bin(&value(r#"{}"#), "x").is_err());

        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("pkg");
        std::fs::create_dir_all(pkg.join("bin")).unwrap();
        std::fs::write(pkg.join("bin/ok.js"), "").unwrap();
        std::fs::write(dir.path().join("secret"), "").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), pkg.join("bin/link.js")).unwrap();
        assert!(inside(&pkg, "./bin/ok.js").is_ok());
        assert!(inside(&pkg, "../secret")
            .unwrap_err()
            .contains("leaves its package"));
        assert!(inside(&pkg, "/etc/passwd")
            .unwrap_err()
            .contains("leaves its package"));
        assert!(inside(&pkg, "bin/link.js")
            .unwrap_err()
            .contains("links out"));
        assert!(inside(&pkg, "bin/missing.js").is_err());
    }

    #[test]
    fn only_what_came_from_the_registry_is_accepted() {
        let reg = "http://127.0.0.1:5/";
        let ok = value(
            r#"{"packages":{"":{"name":"root"},"node_modules/a":{"resolved":"http://127.0.0.1:5/-/tarballs/a/1.tgz"}}}"#,
        );
        assert!(npm_provenance(&ok, reg).is_ok());
        let bundled = value(
            r#"{"packages":{"node_modules/a":{"resolved":"http://127.0.0.1:5/a.tgz"},"node_modules/a/node_modules/b":{"inBundle":true}}}"#,
        );
        assert!(
            npm_provenance(&bundled, reg).is_ok(),
            "a bundled dependency comes with its parent"
        );
        let orphan = value(r#"{"packages":{"node_modules/b":{"inBundle":true}}}"#);
        assert!(npm_provenance(&orphan, reg).is_err());
        let linked_bundle = value(
            r#"{"packages":{"node_modules/a":{"resolved":"http://127.0.0.1:5/a.tgz"},"node_modules/a/node_modules/b":{"inBundle":true,"link":true}}}"#,
        );
        assert!(npm_provenance(&linked_bundle, reg).is_err());
        for bad in [
            r#"{"packages":{"node_modules/a":{"resolved":"git+ssh://git@example.com/a.git"}}}"#,
            r#"{"packages":{"node_modules/a":{"resolved":"http://127.0.0.1:55/a.tgz"}}}"#,
            r#"{"packages":{"node_modules/a":{"link":true,"resolved":"../x"}}}"#,
            r#"{"packages":{"node_modules/a":{"version":"1.0.0"}}}"#,
            r#"{}"#,
        ] {
            assert!(npm_provenance(&value(bad), reg).is_err(), "{bad}");
        }
        let index = r#"{"install":[{"metadata":{"name":"a"},"is_direct":false,"download_info":{"url":"https://files.example/a.whl","archive_info":{}}}]}"#;
        assert!(pip_provenance(&value(index)).is_ok());
        for bad in [
            r#"{"install":[{"metadata":{"name":"a"},"is_direct":true,"download_info":{"archive_info":{}}}]}"#,
            r#"{"install":[{"metadata":{"name":"a"},"is_direct":false,"download_info":{"vcs_info":{}}}]}"#,
            r#"{"install":[{"metadata":{"name":"a"},"download_info":{"dir_info":{}}}]}"#,
        ] {
            assert!(pip_provenance(&value(bad)).is_err(), "{bad}");
        }
    }
}
