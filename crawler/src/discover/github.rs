//! GitHub topic search (only with a token): repositories tagged `mcp-server`, each turned into
//! an npm candidate by the `name` in its root `package.json`. A repository without one, or one
//! marked private, is left out: the crawler runs published packages, never a checkout.

use base64::Engine;
use pinlog_core::json::{self, Limits, Value};

use crate::candidate::{Candidate, Launch, SourceKind};
use crate::fetch::{get, join, text, Fetcher};
use crate::names;

const TOPIC: &str = "mcp-server";
const PER_PAGE: usize = 100;
/// GitHub's search gives at most 1,000 results.
const MAX_PAGES: usize = 10;

pub fn discover(fetch: &Fetcher, api: &str, token: &str, out: &mut Vec<Candidate>) -> Vec<String> {
    let auth = format!("Bearer {token}");
    let headers = [
        ("authorization", auth.as_str()),
        ("accept", "application/vnd.github+json"),
        ("x-github-api-version", "2022-11-28"),
    ];
    let mut problems = Vec::new();
    let mut without = 0usize;
    for page in 1..=MAX_PAGES {
        let url = join(
            api,
            &format!("search/repositories?q=topic:{TOPIC}&per_page={PER_PAGE}&page={page}"),
        );
        let answer = match fetch.json(&url, &headers) {
            Ok(a) => a,
            Err(e) => {
                problems.push(e);
                break;
            }
        };
        let Some(items) = get(&answer, "items").and_then(Value::as_array) else {
            problems.push(format!("{url}: the answer has no `items` array"));
            break;
        };
        for repo in items {
            let Some(full) = text(repo, "full_name").filter(|f| is_repo_name(f)) else {
                without += 1;
                continue;
            };
            let url = join(api, &format!("repos/{full}/contents/package.json"));
            match fetch.json(&url, &headers).ok().and_then(|f| npm_name(&f)) {
                Some(name) => match Candidate::new(
                    Launch::Npm {
                        name,
                        version: None,
                    },
                    SourceKind::Github,
                ) {
                    Ok(c) => out.push(c),
                    Err(_) => without += 1,
                },
                None => without += 1,
            }
        }
        if items.len() < PER_PAGE {
            break;
        }
    }
    if without > 0 {
        problems.push(format!("{without} repositories name no public npm package"));
    }
    problems
}

/// The package name a contents-API answer for `package.json` holds, if it is public.
fn npm_name(file: &Value<'_>) -> Option<String> {
    let encoded: String = text(file, "content")?.split_whitespace().collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    let pkg = json::parse(&bytes, Limits::with_max_bytes(1 << 20)).ok()?;
    if matches!(get(&pkg, "private"), Some(Value::Bool(true))) {
        return None;
    }
    let name = text(&pkg, "name")?;
    names::npm_name(name).ok()?;
    Some(name.to_string())
}

/// `owner/repo` as GitHub spells them; no part may start with a dot (`..` would climb the API's
/// path).
fn is_repo_name(s: &str) -> bool {
    matches!(s.split_once('/'), Some((o, r)) if !o.is_empty() && !r.is_empty()
        && s.bytes().filter(|&b| b == b'/').count() == 1
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/'))
        && !o.starts_with('.') && !r.starts_with('.'))
}
