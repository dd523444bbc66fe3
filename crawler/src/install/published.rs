//! What a registry publishes for a package: the version an install would take and the digests the
//! registry gives for that version's files. The install cache is keyed by them, and `lock --check`
//! compares a lockfile with them.

use pinlog_core::json::Value;

use crate::candidate::{pypi_normalized, Launch};
use crate::fetch::{get, join, text, Fetcher};

/// A version as its registry publishes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    pub version: String,
    /// npm: the hashes of the version's `dist.integrity`; PyPI: `sha256:<hex>` of each of the
    /// version's wheels that is not yanked.
    pub digests: Vec<String>,
}

/// The npm packument's integrity hashes for `version`, `None` when the version is not published.
pub fn npm_digests(packument: &Value<'_>, version: &str) -> Option<Vec<String>> {
    let entry = get(packument, "versions").and_then(|v| get(v, version))?;
    Some(
        get(entry, "dist")
            .and_then(|d| text(d, "integrity"))
            .map(|i| i.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
    )
}

/// The files of `project`'s `version` on a PEP 691 project page: each file's name, `sha256:<hex>`
/// and whether it is yanked.
pub fn pypi_files<'d>(
    page: &'d Value<'_>,
    project: &str,
    version: &str,
) -> Vec<(&'d str, String, bool)> {
    // A distribution's file name starts `<name>-<version>-` (wheels) or `<name>-<version>.`
    // (sdists), with the name's separators as `_` in wheels.
    let prefix = format!(
        "{}_{}",
        pypi_normalized(project).replace('-', "_"),
        version.to_ascii_lowercase().replace('-', "_")
    );
    let of_version = |filename: &str| {
        let lowered = filename.to_ascii_lowercase().replace('-', "_");
        lowered
            .strip_prefix(&prefix)
            .is_some_and(|rest| rest.starts_with('_') || rest.starts_with('.'))
    };
    get(page, "files")
        .and_then(Value::as_array)
        .unwrap_or_default()
        .iter()
        .filter_map(|f| {
            let name = text(f, "filename").filter(|n| of_version(n))?;
            let sha = get(f, "hashes").and_then(|h| text(h, "sha256"))?;
            // PEP 592: `yanked` is true or a reason; false or absent is not yanked.
            let yanked = matches!(
                get(f, "yanked"),
                Some(Value::Bool(true)) | Some(Value::String(_))
            );
            Some((name, format!("sha256:{sha}"), yanked))
        })
        .collect()
}

/// What the registry publishes for the version `launch` names (its latest when it names none),
/// or why that cannot be told: then the package is installed without the cache.
pub fn published(
    fetcher: &Fetcher,
    npm_registry: &str,
    pypi_index: &str,
    launch: &Launch,
) -> Result<Published, String> {
    match launch {
        Launch::Npm { name, version } => {
            let url = join(npm_registry, &name.replace('/', "%2f"));
            // The abbreviated packument: the versions and their dist, without every readme.
            let doc = fetcher.json(
                &url,
                &[(
                    "accept",
                    "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8",
                )],
            )?;
            let wanted = version.as_deref().unwrap_or("latest");
            let exact = npm_digests(&doc, wanted).map(|d| (wanted.to_string(), d));
            let (version, digests) = match exact {
                Some(found) => found,
                None => {
                    let tagged = get(&doc, "dist-tags")
                        .and_then(|t| text(t, wanted))
                        .ok_or_else(|| format!("{url} publishes no version or tag {wanted}"))?;
                    let digests = npm_digests(&doc, tagged).ok_or_else(|| {
                        format!("{url} tags {wanted} as {tagged}, which it does not publish")
                    })?;
                    (tagged.to_string(), digests)
                }
            };
            if digests.is_empty() {
                return Err(format!("{url} gives no integrity for {version}"));
            }
            Ok(Published { version, digests })
        }
        Launch::Pypi { name, version } => {
            let project = pypi_normalized(name);
            let url = join(pypi_index, &format!("{project}/"));
            let doc = fetcher.json(&url, &[("accept", "application/vnd.pypi.simple.v1+json")])?;
            let version = match version {
                Some(v) => v.clone(),
                None => newest_release(&doc).ok_or_else(|| {
                    format!("{url}: cannot tell for certain which version pip would take")
                })?,
            };
            let digests: Vec<String> = pypi_files(&doc, &project, &version)
                .into_iter()
                .filter(|(name, _, yanked)| !yanked && name.ends_with(".whl"))
                .map(|(_, d, _)| d)
                .collect();
            if digests.is_empty() {
                return Err(format!("{url} publishes no wheel of {version}"));
            }
            Ok(Published { version, digests })
        }
        Launch::Oci { .. } | Launch::Remote { .. } => Err("not a package".into()),
    }
}

/// The newest final release in a PEP 700 `versions` list, when every version there is one this
/// reading understands: a final release (`1.2.3`) or a pre-release (`1.2.3rc1`, `1.3.0.dev2`),
/// which pip passes over while a final release exists. Anything else (a post release, an epoch, a
/// local version) gives `None`, and the package is installed without the cache rather than
/// looked at in a version pip would not take.
fn newest_release(page: &Value<'_>) -> Option<String> {
    let versions = get(page, "versions")?.as_array()?;
    let mut newest: Option<(Vec<u64>, &str)> = None;
    for v in versions {
        let v = v.as_str()?;
        match release(v)? {
            Release::Final(parts) => {
                if newest.as_ref().is_none_or(|(n, _)| parts > *n) {
                    newest = Some((parts, v));
                }
            }
            Release::Pre => {}
        }
    }
    newest.map(|(_, v)| v.to_string())
}

enum Release {
    /// Its numbers with trailing zeros taken off, so that `1.0` and `1.0.0` compare equal.
    Final(Vec<u64>),
    Pre,
}

fn release(v: &str) -> Option<Release> {
    // The release numbers run up to the first character that is neither a digit nor a dot.
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let (numbers, tail) = v.split_at(split);
    // `1.0.dev1` has a dot before `dev`; `1.0rc1` none before `rc`.
    let (numbers, dotted) = match numbers.strip_suffix('.') {
        Some(n) => (n, true),
        None => (numbers, false),
    };
    let mut parts = Vec::new();
    for p in numbers.split('.') {
        if p.is_empty() || p.len() > 18 || (p.len() > 1 && p.starts_with('0')) {
            return None;
        }
        parts.push(p.parse::<u64>().ok()?);
    }
    if tail.is_empty() {
        if dotted {
            return None;
        }
        while parts.len() > 1 && parts.last() == Some(&0) {
            parts.pop();
        }
        return Some(Release::Final(parts));
    }
    let tagged = |tag: &str| {
        tail.strip_prefix(tag)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let pre = if dotted {
        tagged("dev")
    } else {
        ["a", "b", "rc"].into_iter().any(tagged)
    };
    pre.then_some(Release::Pre)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pinlog_core::json::{self, Limits};

    fn newest(versions: &str) -> Option<String> {
        let doc = format!(r#"{{"versions":{versions}}}"#);
        newest_release(&json::parse(doc.as_bytes(), Limits::default()).unwrap())
    }

    #[test]
    fn the_newest_final_release_is_taken_and_anything_unclear_gives_none() {
        assert_eq!(
            newest(r#"["0.9.0","0.10.0","0.2.1"]"#).as_deref(),
            Some("0.10.0")
        );
        // Pre-releases are passed over while a final release exists, as pip does.
        assert_eq!(
            newest(r#"["1.0.0","1.1.0rc1","1.1.0.dev3","1.1.0b2"]"#).as_deref(),
            Some("1.0.0")
        );
        // Only pre-releases: pip would take one; which is not decided here.
        assert_eq!(newest(r#"["1.0a1"]"#), None);
        // A post release, an epoch, a local version, a leading zero: not understood.
        for v in [
            r#"["1.0","1.0.post1"]"#,
            r#"["1!1.0"]"#,
            r#"["1.0+local"]"#,
            r#"["01.0"]"#,
            r#"["1..0"]"#,
            r#"["1.0rc"]"#,
        ] {
            assert_eq!(newest(v), None, "{v}");
        }
        assert_eq!(newest(r#"[]"#), None);
        assert_eq!(newest(r#"["1", 2]"#), None);
    }
}
