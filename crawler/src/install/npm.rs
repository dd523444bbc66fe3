//! Installing from npm: the exact version, no scripts run, only registry sources, and the bin
//! to run.

use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};

use pinlog_core::json::Value;

use super::env::{installer_env, installer_home};
use super::jail::{confined, Jail};
use super::process::{run, run_to};
use super::provenance::npm_provenance;
use super::{program_binds, read_json, InstallError, Installed, Installers};
use crate::fetch::{get, text};
use crate::sandbox::Bind;

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
        jail.map(|_| dir),
    )?;

    npm_tree(tools, name, dir)
}

/// The package `name` as npm installed it under `dir` (now or for an earlier look): every part
/// from the registry, its version and digests, and the bin to run.
pub fn npm_tree(tools: &Installers, name: &str, dir: &Path) -> Result<Installed, InstallError> {
    let modules = dir.join("node_modules");
    let lock = read_json(&modules.join(".package-lock.json"))?;
    npm_provenance(&lock, &tools.npm_registry)?;
    let packages = get(&lock, "packages").and_then(Value::as_object);
    let entry = packages
        .and_then(|p| p.get(&format!("node_modules/{name}")))
        .ok_or_else(|| format!("npm installed no {name}"))?;
    let installed_version = text(entry, "version")
        .ok_or("npm recorded no version")?
        .to_string();
    let integrity = text(entry, "integrity").map(str::to_string);
    let every = packages
        .into_iter()
        .flat_map(|p| p.iter())
        .filter_map(|(_, e)| text(e, "integrity").map(str::to_string))
        .collect();

    let package_dir = modules.join(name);
    let manifest = read_json(&package_dir.join("package.json"))?;
    let bin = pick_bin(&manifest, name)?;
    let script = inside(&package_dir, &bin)?;
    let mut binds = vec![Bind::same(dir)];
    binds.extend(program_binds(&tools.node, dir)?);
    Ok(Installed {
        version: installed_version,
        registry_digest: integrity,
        packages: every,
        python: None,
        tree: dir.to_path_buf(),
        argv: vec![tools.node.clone().into(), script.into()],
        note: None,
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
        jail.map(|_| dir),
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
pub(super) fn pick_bin(manifest: &Value<'_>, name: &str) -> Result<String, String> {
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
pub(super) fn inside(root: &Path, rel: &str) -> Result<PathBuf, String> {
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
