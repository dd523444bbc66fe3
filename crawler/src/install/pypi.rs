//! Installing from PyPI: wheels only into a venv, only index sources, and the console script to
//! run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pinlog_core::json::Value;

use super::env::{installer_env, installer_home};
use super::jail::confined;
use super::process::run;
use super::provenance::pip_provenance;
use super::{program_binds, python, read_json, InstallError, Installed, Installers, Jail};
use crate::candidate::pypi_normalized;
use crate::fetch::{get, text};
use crate::sandbox::Bind;

/// Installs `name==version` (the newest when `None`) from PyPI into a venv under `dir`, with the
/// crawler's Python, or when the package's `Requires-Python` excludes it, with the newest
/// interpreter of the machine that fits.
pub fn pypi(
    tools: &Installers,
    name: &str,
    version: Option<&str>,
    dir: &Path,
    jail: Option<&Jail>,
) -> Result<Installed, InstallError> {
    let e = match install_with(tools, &tools.python, name, version, dir, jail) {
        Err(e) if !e.too_large && e.filled.is_none() => e,
        done => return done,
    };
    let Some(spec) = python::required(&e.message) else {
        return Err(e);
    };
    let mut candidates = vec![tools.python.clone()];
    candidates.extend(tools.pythons.iter().cloned());
    let chosen = python::newest_fitting(&candidates, &spec)?;
    let _ = std::fs::remove_dir_all(dir.join("venv"));
    let _ = std::fs::remove_file(dir.join("pip-report.json"));
    install_with(tools, &chosen.path, name, version, dir, jail)
}

fn install_with(
    tools: &Installers,
    python: &Path,
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
        Some(_) => python_for_install(python, dir)?,
        None => (python.to_path_buf(), Vec::new()),
    };
    let mut mk = Command::new(&python);
    installer_env(&mut mk, &home);
    mk.args(["-m", "venv", "--without-pip"]).arg(&venv);
    run(
        confined(mk, jail, dir, &tool_binds),
        tools.timeout,
        "python -m venv",
        jail.map(|_| dir),
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
        jail.map(|_| dir),
    )?;

    pypi_tree(tools, name, dir)
}

/// The project `name` as pip installed it under `dir` (now or for an earlier look): every
/// distribution from the index, its version and digests, and the console script to run.
pub fn pypi_tree(tools: &Installers, name: &str, dir: &Path) -> Result<Installed, InstallError> {
    let venv = dir.join("venv");
    let report = read_json(&dir.join("pip-report.json"))?;
    pip_provenance(&report)?;
    let want = pypi_normalized(name);
    let items = get(&report, "install")
        .and_then(Value::as_array)
        .unwrap_or(&[]);
    let sha256 = |item: &Value<'_>| {
        get(item, "download_info")
            .and_then(|d| get(d, "archive_info"))
            .and_then(|a| get(a, "hashes"))
            .and_then(|h| text(h, "sha256"))
            .map(|h| format!("sha256:{h}"))
    };
    let item = items
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
    let dist_info = dist_info(&venv, &want, &installed_version)?;
    // A package with no console script, but a module that runs as a program, is started as its
    // users start it: `python -m <module>`.
    let (argv, note) = match console_script(&dist_info, &want) {
        Some(script) => (vec![venv.join("bin").join(script).into()], None),
        None => {
            let module = main_module(&dist_info, &want)?;
            let note =
                format!("started as `python -m {module}`: the package has no console script");
            (
                vec![venv.join("bin/python").into(), "-m".into(), module.into()],
                Some(note),
            )
        }
    };
    let base = base_interpreter(tools, &venv)?;
    let mut binds = vec![Bind::same(dir)];
    binds.extend(program_binds(&venv.join("bin/python"), dir)?);
    binds.extend(python_library(&base.executable)?);
    Ok(Installed {
        python: Some(base.describe()),
        version: installed_version,
        registry_digest: sha256(item),
        packages: items.iter().filter_map(sha256).collect(),
        tree: dir.to_path_buf(),
        argv,
        note,
        binds,
    })
}

/// The interpreter the venv was made with: the one of the crawler's interpreters whose directory
/// its `pyvenv.cfg` names (a file in the tree, so only an interpreter the operator allows is
/// taken from it).
fn base_interpreter(tools: &Installers, venv: &Path) -> Result<python::Interpreter, String> {
    let cfg = std::fs::read_to_string(venv.join("pyvenv.cfg"))
        .map_err(|e| format!("{}: {e}", venv.join("pyvenv.cfg").display()))?;
    let home = cfg
        .lines()
        .filter_map(|l| l.split_once('='))
        .find(|(k, _)| k.trim() == "home")
        .map(|(_, v)| PathBuf::from(v.trim()))
        .ok_or("the venv's pyvenv.cfg names no home")?;
    for p in std::iter::once(&tools.python).chain(&tools.pythons) {
        if let Ok(i) = python::ask(p) {
            if i.executable.parent() == Some(home.as_path()) {
                return Ok(i);
            }
        }
    }
    Err(format!(
        "the venv was made with a Python in {}, which is none of the crawler's",
        home.display()
    ))
}

/// The `.dist-info` directory of the installed distribution.
fn dist_info(venv: &Path, project: &str, version: &str) -> Result<PathBuf, String> {
    let lib = venv.join("lib");
    let name = format!("{}-{version}.dist-info", project.replace('-', "_"));
    let mut found = None;
    for python in std::fs::read_dir(&lib)
        .map_err(|e| format!("{}: {e}", lib.display()))?
        .flatten()
    {
        let site = python.path().join("site-packages");
        for d in std::fs::read_dir(&site).into_iter().flatten().flatten() {
            let n = d.file_name().to_string_lossy().to_lowercase();
            if n == name.to_lowercase() {
                found = Some(d.path());
            }
        }
    }
    found.ok_or_else(|| format!("no {name} in the venv"))
}

/// The console script of the installed distribution: the one named like the project, the only
/// one, or else the first by name; `None` when it has none.
pub(super) fn console_script(dist_info: &Path, project: &str) -> Option<String> {
    let text = std::fs::read_to_string(dist_info.join("entry_points.txt")).ok()?;
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
}

/// The top-level module of the distribution that runs as a program (a package with a
/// `__main__.py`, by the files its `RECORD` says it installed): the one named like the
/// project, the only one, or else the first by name.
pub(super) fn main_module(dist_info: &Path, project: &str) -> Result<String, String> {
    let none =
        || "the package has no console script to run, nor a module with a __main__".to_string();
    let record = std::fs::read_to_string(dist_info.join("RECORD")).map_err(|_| none())?;
    let mut modules: Vec<&str> = record
        .lines()
        .filter_map(|l| l.split(',').next()?.strip_suffix("/__main__.py"))
        .filter(|m| {
            let mut b = m.bytes();
            b.next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
                && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
        })
        .collect();
    modules.sort();
    modules.dedup();
    modules
        .iter()
        .find(|m| pypi_normalized(m) == project)
        .or(modules.first())
        .map(|m| m.to_string())
        .ok_or_else(none)
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
