//! Seed files: one server per line, `#` comments.
//!
//! ```text
//! npm:<package>[@<version>]
//! pypi:<project>[==<version>]
//! oci:<image>@sha256:<64 hex>
//! remote:<url>
//! ```
//!
//! A bad line is reported with its number and the rule it breaks; the other lines still count.

use crate::candidate::{Candidate, Launch, Remote, SourceKind};
use crate::names;

/// The candidates of a seed file, and a message for every line that was refused.
pub fn parse(text: &str, file: &str) -> (Vec<Candidate>, Vec<String>) {
    let mut found = Vec::new();
    let mut refused = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        match line_launch(line).and_then(|l| Candidate::new(l, SourceKind::Seeds)) {
            Ok(c) => found.push(c),
            Err(why) => refused.push(format!(
                "{file}:{}: {}: {why}",
                n + 1,
                pinlog_core::render::quoted(line, 80)
            )),
        }
    }
    (found, refused)
}

fn line_launch(line: &str) -> Result<Launch, String> {
    let (kind, rest) = line
        .split_once(':')
        .ok_or("a seed is <kind>:<name>, with kind npm, pypi, oci or remote")?;
    match kind {
        "npm" => {
            // The version follows the last `@` that is not the scope's.
            let (name, version) = match rest.get(1..).and_then(|r| r.rfind('@')) {
                Some(i) => (&rest[..i + 1], Some(&rest[i + 2..])),
                None => (rest, None),
            };
            names::npm_name(name)?;
            version.map(names::version).transpose()?;
            Ok(Launch::Npm {
                name: name.to_string(),
                version: version.map(str::to_string),
            })
        }
        "pypi" => {
            let (name, version) = match rest.split_once("==") {
                Some((n, v)) => (n, Some(v)),
                None => (rest, None),
            };
            names::pypi_name(name)?;
            version.map(names::version).transpose()?;
            Ok(Launch::Pypi {
                name: name.to_string(),
                version: version.map(str::to_string),
            })
        }
        "oci" => {
            let (image, digest) = rest
                .split_once('@')
                .ok_or("an oci seed names its image by digest: oci:<image>@sha256:<hex>")?;
            names::oci_image(image)?;
            names::oci_digest(digest)?;
            Ok(Launch::Oci {
                image: image.to_string(),
                digest: digest.to_string(),
            })
        }
        "remote" => Ok(Launch::Remote {
            url: names::remote_url(rest)?,
            transport: Remote::StreamableHttp,
        }),
        other => Err(format!(
            "unknown kind {}; use npm, pypi, oci or remote",
            pinlog_core::render::quoted(other, 20)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_kind_and_reports_bad_lines_by_number() {
        let text = "# seeds\n\
            npm:@modelcontextprotocol/server-everything@2026.8.31\n\
            npm:plain   # trailing comment\n\
            pypi:mcp-server-time==2026.10.19\n\
            oci:ghcr.io/acme/srv@sha256:0000000000000000000000000000000000000000000000000000000000000000\n\
            remote:https://mcp.example.com/mcp\n\
            \n\
            npm:-rf\n\
            gem:rails\n\
            remote:https://u:p@example.com/\n";
        let (found, refused) = parse(text, "seeds.txt");
        let ids: Vec<_> = found.iter().map(|c| c.id.to_string()).collect();
        assert_eq!(
            ids,
            [
                "npm:@modelcontextprotocol/server-everything",
                "npm:plain",
                "pypi:mcp-server-time",
                "oci:ghcr.io/acme/srv",
                "remote:https://mcp.example.com/mcp"
            ]
        );
        assert_eq!(
            found[0].launch,
            Launch::Npm {
                name: "@modelcontextprotocol/server-everything".into(),
                version: Some("2026.8.31".into())
            }
        );
        assert_eq!(
            found[1].launch,
            Launch::Npm {
                name: "plain".into(),
                version: None
            }
        );
        assert_eq!(refused.len(), 3, "{refused:?}");
        assert!(refused[0].starts_with("seeds.txt:8: "), "{}", refused[0]);
        assert!(refused[1].starts_with("seeds.txt:9: ") && refused[1].contains("unknown kind"));
        assert!(refused[2].contains("credentials"));
    }

    #[test]
    fn scoped_npm_name_without_version() {
        let (found, refused) = parse("npm:@scope/name\n", "f");
        assert!(refused.is_empty(), "{refused:?}");
        assert_eq!(
            found[0].launch,
            Launch::Npm {
                name: "@scope/name".into(),
                version: None
            }
        );
    }
}
