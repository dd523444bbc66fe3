//! `pinlog lock --check`: whether what a lockfile pins is still what its registry publishes for
//! that version. A digest that changed is a departure (a version re-published, or a registry
//! serving other bytes); a newer version is only noted: the lock pins what was approved.

use pinlog_core::lockfile::Lockfile;
use pinlog_core::package::{pypi_normalized, Package, Registry};
use pinlog_core::Value;

use crate::fetch::{get, join, text, Fetcher};
use crate::install::published::{npm_digests, pypi_files};

/// Where the registries are.
pub struct Registries {
    /// npm's registry, e.g. `https://registry.npmjs.org`.
    pub npm: String,
    /// A PyPI simple index (PEP 691 JSON), e.g. `https://pypi.org/simple/`.
    pub pypi: String,
}

/// What was found for one locked package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The registry publishes the locked digest for the locked version.
    Same,
    /// It publishes other bytes for that version (or none): the digests it has.
    Changed { published: Vec<String> },
    /// The version is not published (any more).
    Gone,
    /// Not checked, and why: no digest or version in the lock, an image, a registry that could
    /// not be read.
    Unchecked(String),
}

#[derive(Debug, Clone)]
pub struct Checked {
    pub server: String,
    pub package: Package,
    pub verdict: Verdict,
    /// The registry's latest version, when it is not the locked one.
    pub newer: Option<String>,
}

/// Checks every package the lockfile pins, each request bounded by `timeout`.
pub fn check(
    lock: &Lockfile<'_>,
    registries: &Registries,
    timeout: std::time::Duration,
) -> Result<Vec<Checked>, String> {
    let fetcher = Fetcher::new(timeout)?;
    let fetcher = &fetcher;
    let mut out = Vec::new();
    for s in &lock.servers {
        let Some(p) = &s.package else { continue };
        let (verdict, newer) = match (&p.version, &p.digest, p.registry) {
            (_, _, Registry::Oci) => (
                Verdict::Unchecked("image digests are not checked".into()),
                None,
            ),
            (None, _, _) => (
                Verdict::Unchecked("the lock records no version".into()),
                None,
            ),
            (_, None, _) => (
                Verdict::Unchecked("the lock records no digest".into()),
                None,
            ),
            (Some(v), Some(d), Registry::Npm) => npm(fetcher, &registries.npm, &p.name, v, d),
            (Some(v), Some(d), Registry::Pypi) => pypi(fetcher, &registries.pypi, &p.name, v, d),
        };
        out.push(Checked {
            server: s.id.clone(),
            package: p.clone(),
            verdict,
            newer,
        });
    }
    Ok(out)
}

/// npm: the packument's `versions[v].dist.integrity` (an SRI list; any hash of it may match).
fn npm(
    f: &Fetcher,
    base: &str,
    name: &str,
    version: &str,
    digest: &str,
) -> (Verdict, Option<String>) {
    let url = join(base, &name.replace('/', "%2f"));
    let doc = match f.json(&url, &[]) {
        Ok(d) => d,
        Err(e) => return (Verdict::Unchecked(e), None),
    };
    let newer = get(&doc, "dist-tags")
        .and_then(|t| text(t, "latest"))
        .filter(|l| *l != version)
        .map(str::to_string);
    let Some(published) = npm_digests(&doc, version) else {
        return (Verdict::Gone, newer);
    };
    let wanted: Vec<&str> = digest.split_whitespace().collect();
    let verdict = if published.iter().any(|p| wanted.contains(&p.as_str())) {
        Verdict::Same
    } else {
        Verdict::Changed { published }
    };
    (verdict, newer)
}

/// PyPI: the PEP 691 JSON page of the project; the version's files and their `sha256`.
fn pypi(
    f: &Fetcher,
    base: &str,
    name: &str,
    version: &str,
    digest: &str,
) -> (Verdict, Option<String>) {
    let project = pypi_normalized(name);
    let url = join(base, &format!("{project}/"));
    let doc = match f.json(&url, &[("accept", "application/vnd.pypi.simple.v1+json")]) {
        Ok(d) => d,
        Err(e) => return (Verdict::Unchecked(e), None),
    };
    // PEP 700's `versions`, in the index's order; the last is taken as the latest.
    let newer = get(&doc, "versions")
        .and_then(Value::as_array)
        .and_then(|v| v.last())
        .and_then(Value::as_str)
        .filter(|l| *l != version)
        .map(str::to_string);
    let published: Vec<String> = pypi_files(&doc, &project, version)
        .into_iter()
        .map(|(_, digest, _)| digest)
        .collect();
    let verdict = if published.is_empty() {
        Verdict::Gone
    } else if published.iter().any(|p| p == digest) {
        Verdict::Same
    } else {
        Verdict::Changed { published }
    };
    (verdict, newer)
}
