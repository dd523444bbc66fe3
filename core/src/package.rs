//! What a server runs, when it is known: a package at a version, and the digest its registry
//! published for it. The manifest records it and the lockfile pins it; the surface digest does not
//! cover it (the same package can serve different surfaces, and the same surface come from
//! another package).

use std::fmt;

use crate::format::Rules;
use crate::json::{self, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Registry {
    Npm,
    Pypi,
    Oci,
}

impl Registry {
    pub fn as_str(self) -> &'static str {
        match self {
            Registry::Npm => "npm",
            Registry::Pypi => "pypi",
            Registry::Oci => "oci",
        }
    }

    /// Whether two names are one package in this registry: PyPI compares names as PEP 503
    /// normalises them, the others byte for byte.
    pub fn same_name(self, a: &str, b: &str) -> bool {
        match self {
            Registry::Pypi => pypi_normalized(a) == pypi_normalized(b),
            Registry::Npm | Registry::Oci => a == b,
        }
    }
}

/// `{"digest": …, "name": …, "registry": "npm"|"pypi"|"oci", "version": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Package {
    pub registry: Registry,
    /// The package or image name.
    pub name: String,
    /// The exact version; none for an image pinned by digest only.
    pub version: Option<String>,
    /// What the registry published for that version: npm's `integrity` (`sha512-…`), PyPI's
    /// `sha256:<hex>` of the file, or the OCI manifest digest (`sha256:<hex>`).
    pub digest: Option<String>,
}

impl fmt::Display for Package {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.registry.as_str(), self.name)?;
        if let Some(v) = &self.version {
            write!(f, "@{v}")?;
        }
        Ok(())
    }
}

/// A PyPI name as PEP 503 normalises it: lowercase, runs of `-`, `_`, `.` as one `-`.
pub fn pypi_normalized(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
        } else {
            if sep && !out.is_empty() {
                out.push('-');
            }
            sep = false;
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// Package fields are identifiers, never prose: printable ASCII without spaces, bounded.
fn plain(s: &str, max: usize) -> bool {
    !s.is_empty() && s.len() <= max && s.bytes().all(|b| b.is_ascii_graphic())
}

impl Package {
    pub(crate) fn read(
        v: &Value<'_>,
        what: &str,
        rules: Rules,
    ) -> Result<Package, crate::format::FormatError> {
        let what = format!("{what}.package");
        let o = rules.object(v, &what, &["digest", "name", "registry", "version"])?;
        let registry = match rules.text(o, "registry", &what)? {
            "npm" => Registry::Npm,
            "pypi" => Registry::Pypi,
            "oci" => Registry::Oci,
            _ => return Err(rules.field(format!("{what}.registry must be npm, pypi or oci"))),
        };
        let name = rules.text(o, "name", &what)?.to_string();
        let version = rules.text_or_null(o, "version", &what)?;
        let digest = rules.text_or_null(o, "digest", &what)?;
        if !plain(&name, 512)
            || !version.as_deref().is_none_or(|v| plain(v, 128))
            || !digest.as_deref().is_none_or(|d| plain(d, 256))
        {
            return Err(rules.field(format!(
                "{what}: name, version and digest are printable ASCII without spaces (name at \
                 most 512 bytes, version 128, digest 256)"
            )));
        }
        Ok(Package {
            registry,
            name,
            version,
            digest,
        })
    }

    /// Appends the package as canonical JSON.
    pub fn write(&self, out: &mut Vec<u8>) {
        let opt = |out: &mut Vec<u8>, s: Option<&str>| match s {
            Some(s) => json::write_string(out, s),
            None => out.extend_from_slice(b"null"),
        };
        out.extend_from_slice(b"{\"digest\":");
        opt(out, self.digest.as_deref());
        out.extend_from_slice(b",\"name\":");
        json::write_string(out, &self.name);
        out.extend_from_slice(b",\"registry\":");
        json::write_string(out, self.registry.as_str());
        out.extend_from_slice(b",\"version\":");
        opt(out, self.version.as_deref());
        out.push(b'}');
    }
}
