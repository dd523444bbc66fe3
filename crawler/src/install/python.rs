//! Which Python a PyPI package is installed with: the crawler's own (the first `--python`) when
//! the package's `Requires-Python` lets it, else the newest interpreter on the machine that fits,
//! as `uvx` and `pipx` find one.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// An interpreter the crawler may install with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interpreter {
    /// As the operator named it or the crawler found it.
    pub path: PathBuf,
    /// The interpreter itself, past any shim.
    pub executable: PathBuf,
    pub version: (u32, u32, u32),
}

impl Interpreter {
    /// What a look records: the version and the interpreter.
    pub fn describe(&self) -> String {
        let (a, b, c) = self.version;
        format!("{a}.{b}.{c} {}", self.executable.display())
    }
}

/// Asks `path` what it is, isolated from its environment and its site packages.
pub fn ask(path: &Path) -> Result<Interpreter, String> {
    const ASK: &str = "import sys; print(sys.executable); print('%d %d %d' % sys.version_info[:3])";
    let out = Command::new(path)
        .args(["-I", "-S", "-c", ASK])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", path.display()))?;
    let said = String::from_utf8_lossy(&out.stdout);
    let mut lines = said.lines();
    let executable = PathBuf::from(lines.next().unwrap_or_default().trim());
    let v: Vec<u32> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    match v.as_slice() {
        [a, b, c] if out.status.success() && executable.is_absolute() => Ok(Interpreter {
            path: path.to_path_buf(),
            executable,
            version: (*a, *b, *c),
        }),
        _ => Err(format!("{} did not say what Python it is", path.display())),
    }
}

/// The interpreters on this machine beside `python3`: Debian's `python3.X` on `PATH`, pyenv's
/// versions (`$PYENV_ROOT` or `~/.pyenv`), and uv's managed ones (`~/.local/share/uv/python`).
pub fn discover() -> Vec<PathBuf> {
    let mut found = Vec::new();
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            for minor in 6..=30 {
                let p = dir.join(format!("python3.{minor}"));
                if p.is_file() {
                    found.push(p);
                }
            }
        }
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let pyenv = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".pyenv")));
    let uv = home.map(|h| h.join(".local/share/uv/python"));
    for root in [pyenv.map(|p| p.join("versions")), uv]
        .into_iter()
        .flatten()
    {
        let mut versions: Vec<PathBuf> = std::fs::read_dir(&root)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path().join("bin/python3"))
            .filter(|p| p.is_file())
            .collect();
        versions.sort();
        found.extend(versions);
    }
    found
}

/// The `Requires-Python` a failed pip install says excluded the interpreter: from `Ignored the
/// following versions that require a different python version: 1.0 Requires-Python >=3.12`, or
/// `requires a different Python: 3.11.7 not in '>=3.12'`.
pub fn required(message: &str) -> Option<String> {
    let spec = if let Some(at) = message.find("Requires-Python ") {
        let rest = &message[at + "Requires-Python ".len()..];
        let rest = rest.strip_prefix('"').unwrap_or(rest);
        rest.split(['|', ';', '"', '\n']).next()?.trim()
    } else {
        let at = message.find("requires a different Python: ")?;
        let rest = &message[at..];
        let open = rest.find(" not in '")? + " not in '".len();
        let close = rest[open..].find('\'')?;
        &rest[open..open + close]
    };
    let ok = !spec.is_empty()
        && spec.len() <= 200
        && spec
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b" .,*<>=!~".contains(&b));
    ok.then(|| spec.to_string())
}

/// Whether `version` fits a PEP 440 specifier set such as `>=3.10,<3.13` or `!=3.0.*`.
pub fn fits(spec: &str, version: (u32, u32, u32)) -> bool {
    let have = [version.0, version.1, version.2];
    spec.split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .all(|clause| {
            let op_len = clause
                .find(|c: char| c.is_ascii_digit())
                .unwrap_or(clause.len());
            let (op, v) = clause.split_at(op_len);
            let (v, wildcard) = match v.strip_suffix(".*") {
                Some(v) => (v, true),
                None => (v, false),
            };
            let want: Vec<u32> = v.split('.').map(|n| n.parse().unwrap_or(0)).collect();
            let mut padded = [0u32; 3];
            for (slot, n) in padded.iter_mut().zip(&want) {
                *slot = *n;
            }
            let prefix = |n: usize| have[..n.min(3)] == padded[..n.min(3)];
            match op.trim() {
                "==" | "===" if wildcard => prefix(want.len()),
                "==" | "===" => have == padded,
                "!=" if wildcard => !prefix(want.len()),
                "!=" => have != padded,
                ">=" => have >= padded,
                "<=" => have <= padded,
                ">" => have > padded,
                "<" => have < padded,
                // `~=3.10` is `>=3.10, ==3.*`; `~=3.10.2` is `>=3.10.2, ==3.10.*`.
                "~=" => have >= padded && prefix(want.len().saturating_sub(1).max(1)),
                _ => false,
            }
        })
}

/// The newest of `candidates` that fits `spec`, or why none does (with what there is).
pub fn newest_fitting(candidates: &[PathBuf], spec: &str) -> Result<Interpreter, String> {
    let mut seen: Vec<Interpreter> = Vec::new();
    for p in candidates {
        if let Ok(i) = ask(p) {
            if !seen.iter().any(|s| s.executable == i.executable) {
                seen.push(i);
            }
        }
    }
    seen.sort_by_key(|i| i.version);
    if let Some(i) = seen.iter().rev().find(|i| fits(spec, i.version)) {
        return Ok(i.clone());
    }
    let have: Vec<String> = seen
        .iter()
        .map(|i| format!("{}.{}.{}", i.version.0, i.version.1, i.version.2))
        .collect();
    Err(format!(
        "the package requires Python {spec}, and no interpreter on this machine fits (found: {}); \
         give one with --python",
        if have.is_empty() {
            "none".to_string()
        } else {
            have.join(", ")
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requires_python_is_read_from_pip_and_matched() {
        assert_eq!(
            required("pip install failed (exit status: 1): \"ERROR: Ignored the following versions that require a different python version: 1.0.0 Requires-Python >=3.12 | ERROR: No matching distribution\""),
            Some(">=3.12".into())
        );
        assert_eq!(
            required(
                "ERROR: Package 'x' requires a different Python: 3.11.7 not in '>=3.10,<3.11'"
            ),
            Some(">=3.10,<3.11".into())
        );
        assert_eq!(
            required(
                "pip install failed: \"ERROR: no match\"; pip passed over versions for their \
                 Python, the newest, \"1.0\", with Requires-Python \">=3.12.1\""
            ),
            Some(">=3.12.1".into())
        );
        assert_eq!(
            required("ERROR: No matching distribution found for x"),
            None
        );
        assert!(fits(">=3.12", (3, 12, 1)) && !fits(">=3.12", (3, 11, 7)));
        assert!(fits(">=3.10,<3.13", (3, 12, 0)) && !fits(">=3.10,<3.13", (3, 13, 0)));
        assert!(fits("!=3.0.*,>=2.7", (3, 11, 0)) && !fits("==3.11.*", (3, 12, 0)));
        assert!(fits("~=3.10", (3, 13, 0)) && !fits("~=3.10.2", (3, 11, 0)));
        assert!(fits("", (3, 11, 0)));
    }
}
