//! The npm registry's search: `GET /-/v1/search?text=keywords:<k>&size=250&from=N` for each
//! keyword, page after page. Every package found is a candidate at its latest version.

use pinlog_core::json::Value;

use crate::candidate::{Candidate, Launch, SourceKind};
use crate::fetch::{get, join, query_value, text, Fetcher};
use crate::names;

pub const KEYWORDS: [&str; 2] = ["mcp-server", "modelcontextprotocol"];
const PAGE: usize = 250;
/// npm's search answers at most this many results for one query.
const MAX_RESULTS: usize = 10_000;

pub fn discover(fetch: &Fetcher, base: &str, out: &mut Vec<Candidate>) -> Vec<String> {
    let mut problems = Vec::new();
    let mut bad_names = 0usize;
    for keyword in KEYWORDS {
        let mut from = 0;
        while from < MAX_RESULTS {
            let url = join(
                base,
                &format!(
                    "-/v1/search?text={}&size={PAGE}&from={from}",
                    query_value(&format!("keywords:{keyword}"))
                ),
            );
            let page = match fetch.json(&url, &[]) {
                Ok(p) => p,
                Err(e) => {
                    problems.push(e);
                    break;
                }
            };
            let Some(objects) = get(&page, "objects").and_then(Value::as_array) else {
                problems.push(format!("{url}: the answer has no `objects` array"));
                break;
            };
            for o in objects {
                let name = get(o, "package").and_then(|p| text(p, "name"));
                match name.map(|n| (n, names::npm_name(n))) {
                    Some((n, Ok(()))) => {
                        let launch = Launch::Npm {
                            name: n.to_string(),
                            version: None,
                        };
                        match Candidate::new(launch, SourceKind::Npm) {
                            Ok(c) => out.push(c),
                            Err(_) => bad_names += 1,
                        }
                    }
                    _ => bad_names += 1,
                }
            }
            let total = match get(&page, "total") {
                Some(Value::Number(n)) => n.literal().parse::<usize>().unwrap_or(0),
                _ => 0,
            };
            from += objects.len();
            if objects.is_empty() || from >= total {
                break;
            }
        }
    }
    if bad_names > 0 {
        problems.push(format!(
            "{bad_names} search results had no valid npm package name"
        ));
    }
    problems
}
