//! OPTOUT.txt: servers whose owners asked not to be crawled. Applied before any probe.
//!
//! One name per line, `#` starts a comment, compared without regard to case. A line is a log
//! identity (`npm:<pkg>`, `pypi:<pkg>`, `oci:<image>`, `remote:<url>`), a bare package or
//! registry name (matching every kind), or `host:<name>` (every remote on that host or below).

use crate::candidate::{pypi_normalized, Candidate, Launch};

#[derive(Debug, Default, Clone)]
pub struct OptOut {
    names: Vec<String>,
    hosts: Vec<String>,
}

impl OptOut {
    pub fn parse(text: &str) -> OptOut {
        let mut out = OptOut::default();
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim().to_lowercase();
            if line.is_empty() {
                continue;
            }
            match line.strip_prefix("host:") {
                Some(h) => out.hosts.push(h.trim_end_matches('.').to_string()),
                None => out.names.push(line),
            }
        }
        out
    }

    /// Whether the candidate opted out.
    pub fn covers(&self, c: &Candidate) -> bool {
        let id = c.id.as_str().to_lowercase();
        let bare = c.id.name().to_lowercase();
        let mut names = vec![id, bare];
        if let Launch::Pypi { name, .. } = &c.launch {
            names.push(pypi_normalized(name));
        }
        names.extend(c.aliases.iter().map(|a| a.to_lowercase()));
        let pypi = matches!(c.launch, Launch::Pypi { .. });
        if self.names.iter().any(|n| {
            names.contains(n)
                || (pypi && names.contains(&pypi_normalized(n.strip_prefix("pypi:").unwrap_or(n))))
        }) {
            return true;
        }
        let Launch::Remote { url, .. } = &c.launch else {
            return false;
        };
        let host = reqwest::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(|h| h.trim_end_matches('.').to_lowercase()));
        host.is_some_and(|h| {
            self.hosts
                .iter()
                .any(|o| h == *o || h.strip_suffix(o.as_str()).is_some_and(|p| p.ends_with('.')))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::{Remote, SourceKind};

    fn cand(l: Launch) -> Candidate {
        Candidate::new(l, SourceKind::Seeds).unwrap()
    }

    #[test]
    fn matches_identities_bare_names_aliases_and_hosts() {
        let o = OptOut::parse("# owners asked\nNPM:@Acme/Server\nlonely-name\npypi:Friendly_Bard\nhost:Example.com\nio.github.acme/thing\n");
        let npm = |n: &str| {
            cand(Launch::Npm {
                name: n.into(),
                version: None,
            })
        };
        assert!(o.covers(&npm("@acme/server")));
        assert!(o.covers(&npm("lonely-name")));
        assert!(!o.covers(&npm("lonely-name2")));
        let bare = OptOut::parse("Friendly_Bard\n");
        assert!(bare.covers(&cand(Launch::Pypi {
            name: "friendly-bard".into(),
            version: None
        })));
        assert!(
            !bare.covers(&npm("friendly-bard")),
            "npm names are not normalised as PyPI's"
        );
        assert!(o.covers(&cand(Launch::Pypi {
            name: "friendly.bard".into(),
            version: None
        })));
        let remote = |u: &str| {
            cand(Launch::Remote {
                url: u.into(),
                transport: Remote::StreamableHttp,
            })
        };
        assert!(o.covers(&remote("https://example.com/mcp")));
        assert!(o.covers(&remote("https://mcp.example.com/mcp")));
        assert!(!o.covers(&remote("https://notexample.com/mcp")));
        let mut aliased = npm("other");
        aliased.aliases.push("io.github.acme/thing".into());
        assert!(o.covers(&aliased));
        assert_eq!((o.names.len(), o.hosts.len()), (4, 1));
    }
}
