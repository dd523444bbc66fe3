//! Discovery: every source asked in turn, its candidates merged by server identity. A source
//! that fails is reported and the crawl goes on with the others.

mod github;
mod npm;
mod registry;
pub mod seeds;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use pinlog_core::ServerId;

use crate::candidate::{Candidate, SourceKind};
use crate::fetch::Fetcher;

pub use registry::is_env_name;

/// Where each source lives: defaults are the public services; tests and mirrors override them.
#[derive(Debug, Clone)]
pub struct Sources {
    pub kinds: Vec<SourceKind>,
    pub registry_url: String,
    pub npm_registry: String,
    pub github_api: String,
    pub github_token: Option<String>,
    pub seeds: PathBuf,
}

impl Default for Sources {
    fn default() -> Self {
        Sources {
            kinds: SourceKind::ALL.to_vec(),
            registry_url: "https://registry.modelcontextprotocol.io".into(),
            npm_registry: "https://registry.npmjs.org".into(),
            github_api: "https://api.github.com".into(),
            github_token: None,
            seeds: PathBuf::from("data/seeds.txt"),
        }
    }
}

/// What one source gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceReport {
    pub source: SourceKind,
    /// Candidates it named (before merging).
    pub found: usize,
    /// Why it failed or what it left out; empty when all went well.
    pub problems: Vec<String>,
    /// Whether it was skipped (GitHub without a token).
    pub skipped: bool,
}

#[derive(Debug, Default)]
pub struct Discovery {
    /// Every candidate once, in the order first found.
    pub candidates: Vec<Candidate>,
    pub reports: Vec<SourceReport>,
}

/// Asks every source in `sources.kinds`.
pub fn discover(sources: &Sources) -> Discovery {
    let fetch = Fetcher::new(Duration::from_secs(30));
    let mut all: Vec<Candidate> = Vec::new();
    let mut reports = Vec::new();
    for &kind in &sources.kinds {
        let mut found = Vec::new();
        let mut skipped = false;
        let problems = match (&fetch, kind) {
            (_, SourceKind::Seeds) => match std::fs::read(&sources.seeds) {
                Ok(bytes) => match String::from_utf8(bytes) {
                    Ok(text) => {
                        let (c, refused) =
                            seeds::parse(&text, &sources.seeds.display().to_string());
                        found = c;
                        refused
                    }
                    Err(_) => vec![format!("{} is not UTF-8", sources.seeds.display())],
                },
                Err(e) => vec![format!("cannot read {}: {e}", sources.seeds.display())],
            },
            (Err(e), _) => vec![e.clone()],
            (Ok(f), SourceKind::Registry) => {
                registry::discover(f, &sources.registry_url, &mut found)
            }
            (Ok(f), SourceKind::Npm) => npm::discover(f, &sources.npm_registry, &mut found),
            (Ok(f), SourceKind::Github) => match &sources.github_token {
                Some(token) => github::discover(f, &sources.github_api, token, &mut found),
                None => {
                    skipped = true;
                    vec!["skipped: set GITHUB_TOKEN to search GitHub topics".into()]
                }
            },
        };
        reports.push(SourceReport {
            source: kind,
            found: found.len(),
            problems,
            skipped,
        });
        all.extend(found);
    }
    Discovery {
        candidates: merge(all),
        reports,
    }
}

/// One candidate per identity, in first-found order.
pub fn merge(all: Vec<Candidate>) -> Vec<Candidate> {
    let mut at: HashMap<ServerId, usize> = HashMap::new();
    let mut out: Vec<Candidate> = Vec::new();
    for c in all {
        match at.get(&c.id) {
            Some(&i) => out[i].merge(c),
            None => {
                at.insert(c.id.clone(), out.len());
                out.push(c);
            }
        }
    }
    out
}
