//! Installing the exact package a candidate names into a scratch prefix, outside the sandbox
//! (installing needs the registry) but with nothing of the package run: npm with
//! `--ignore-scripts`, pip with wheels only (`--only-binary :all:`, so no `setup.py` runs).

use std::ffi::OsString;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pinlog_core::json::{self, Limits, Value};

use crate::candidate::pypi_normalized;
use crate::fetch::{get, text};

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
    /// Directories the command must be able to read.
    pub visible: Vec<PathBuf>,
}

/// Installs `name@version` (the latest when `None`) from npm under `dir`.
pub fn npm(
    tools: &Installers,
    name: &str,
    version: Option<&str>,
    dir: &Path,
) -> Result<Installed, String> {
    let spec = format!("{name}@{}", version.unwrap_or("latest"));
    let mut cmd = Command::new(&tools.npm);
    cmd.arg("install")
        .arg("--prefix")
        .arg(dir)
        .args([
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--no-update-notifier",
            "--omit=dev",
            "--loglevel=error",
        ])
        .arg(format!("--registry={}", tools.npm_registry))
        .arg("--")
        .arg(&spec)
        .env("npm_config_ignore_scripts", "true");
    run(cmd, tools.timeout, "npm install")?;

    let modules = dir.join("node_modules");
    let lock = read_json(&modules.join(".package-lock.json"))?;
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
    let mut visible = vec![dir.to_path_buf()];
    visible.extend(outside_system(&tools.node));
    Ok(Installed {
        version: installed_version,
        registry_digest: integrity,
        argv: vec![tools.node.clone().into(), script.into()],
        visible,
    })
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
) -> Result<Installed, String> {
    let venv = dir.join("venv");
    let mut mk = Command::new(&tools.python);
    mk.args(["-m", "venv", "--without-pip"]).arg(&venv);
    run(mk, tools.timeout, "python -m venv")?;
    let report = dir.join("pip-report.json");
    let spec = match version {
        Some(v) => format!("{name}=={v}"),
        None => name.to_string(),
    };
    let mut pip = Command::new(&tools.python);
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
        .arg(&spec)
        // Only the index the operator named: no configuration file, no extra places from the
        // environment.
        .env("PIP_CONFIG_FILE", "/dev/null")
        .env_remove("PIP_FIND_LINKS")
        .env_remove("PIP_INDEX_URL")
        .env_remove("PIP_EXTRA_INDEX_URL")
        .env_remove("PIP_NO_INDEX");
    run(pip, tools.timeout, "pip install")?;

    let report = read_json(&report)?;
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
    let mut visible = vec![dir.to_path_buf()];
    visible.extend(outside_system(&python_prefix(&tools.python)?));
    Ok(Installed {
        version: installed_version,
        registry_digest: sha256,
        argv: vec![venv.join("bin").join(script).into()],
        visible,
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

/// `sys.base_prefix` of `python`: where the interpreter a venv links to lives.
fn python_prefix(python: &Path) -> Result<PathBuf, String> {
    let out = Command::new(python)
        .args(["-c", "import sys; print(sys.base_prefix)"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    let prefix = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || prefix.is_empty() {
        return Err(format!("{} did not say its prefix", python.display()));
    }
    Ok(PathBuf::from(prefix))
}

/// The install prefix of a program outside the system directories the sandbox already shows
/// (e.g. `/opt/node` for `/opt/node/bin/node`).
fn outside_system(program: &Path) -> Option<PathBuf> {
    let real = program.canonicalize().ok()?;
    if real.starts_with("/usr") {
        return None;
    }
    let dir = if real.is_dir() {
        real
    } else {
        real.parent()?.to_path_buf()
    };
    Some(if dir.ends_with("bin") {
        dir.parent()?.to_path_buf()
    } else {
        dir
    })
}

fn read_json(path: &Path) -> Result<Value<'static>, String> {
    let bytes = pinlog_log::files::read_bounded(path, 64 << 20)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    json::parse(&bytes, Limits::default())
        .map(Value::into_owned)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs an installer with a deadline; its standard error (the end of it) is the failure.
fn run(mut cmd: Command, timeout: Duration, what: &str) -> Result<(), String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    let mut stderr = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut kept = Vec::new();
        let _ = (&mut stderr).take(1 << 20).read_to_end(&mut kept);
        // Drain the rest so the installer never blocks on a full pipe.
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
        kept
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if start.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("{what}: {e}")),
        }
    };
    let kept = reader.join().unwrap_or_default();
    match status {
        None => Err(format!("{what} took over {} s", timeout.as_secs())),
        Some(s) if s.success() => Ok(()),
        Some(s) => {
            let text = String::from_utf8_lossy(&kept);
            let tail: String = text
                .trim()
                .lines()
                .rev()
                .take(3)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join(" | ");
            Err(format!(
                "{what} failed ({s}): {}",
                pinlog_core::render::quoted(&tail, 300)
            ))
        }
    }
}
