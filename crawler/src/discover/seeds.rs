//! Seed files: one server per line, `#` comments.
//!
//! ```text
//! npm:<package>[@<version>]   [env=NAME | env=NAME=VALUE]…  [-- ARG…]
//! pypi:<project>[==<version>] [env=NAME | env=NAME=VALUE]…  [-- ARG…]
//! oci:<image>@sha256:<64 hex>
//! remote:<url>
//! ```
//!
//! A package may be given how to start it (docs/OPERATIONS.md, "Starting a package"):
//! `env=NAME` sets a variable to the crawler's placeholder, `env=NAME=VALUE` to a value; after
//! `--`, every word is an argument, and the word `<placeholder>` is one the crawler fills in and
//! the entry names (`--token <placeholder>` or `--token=<placeholder>` by the option, else by its
//! position). Words are split at spaces and tabs, with no quoting: what a line says is what the
//! server gets.
//!
//! A bad line is reported with its number and the rule it breaks; the other lines still count.

use crate::candidate::{Candidate, Launch, Remote, SourceKind};
use crate::names;
use crate::start::{Format, Given, Start};

/// The word a seed writes for a value the crawler makes up.
const PLACEHOLDER_WORD: &str = "<placeholder>";

/// The candidates of a seed file, and a message for every line that was refused.
pub fn parse(text: &str, file: &str) -> (Vec<Candidate>, Vec<String>) {
    let mut found = Vec::new();
    let mut refused = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        match line_candidate(line) {
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

fn line_candidate(line: &str) -> Result<Candidate, String> {
    let mut words = line.split([' ', '\t']).filter(|w| !w.is_empty());
    let seed = words.next().unwrap_or_default();
    let launch = line_launch(seed)?;
    let rest: Vec<&str> = words.collect();
    let start = start(&rest)?;
    if !start.is_empty() && !matches!(launch, Launch::Npm { .. } | Launch::Pypi { .. }) {
        return Err(
            "only npm and pypi seeds take `env=` and `-- ARG…`: those are what the \
                    crawler starts"
                .into(),
        );
    }
    let mut c = Candidate::new(launch, SourceKind::Seeds)?;
    c.start = start;
    Ok(c)
}

/// How to start the server, from the words after the seed.
fn start(words: &[&str]) -> Result<Start, String> {
    let mut s = Start::default();
    let mut at = 0;
    while let Some(&w) = words.get(at) {
        at += 1;
        if w == "--" {
            break;
        }
        let Some(var) = w.strip_prefix("env=") else {
            return Err(format!(
                "{} is not `env=NAME`, `env=NAME=VALUE` or `--` before the arguments",
                pinlog_core::render::quoted(w, 40)
            ));
        };
        let (name, value) = match var.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (var, None),
        };
        if let Some(v) = value {
            plain(v)?;
        }
        s.set_env(name, value)
            .map_err(|e| format!("env={name}: {e}"))?;
    }
    let args = &words[at..];
    if at > 0 && words[at - 1] == "--" && args.is_empty() {
        return Err("`--` is followed by the server's arguments; none came".into());
    }
    let mut i = 0;
    while let Some(&w) = args.get(i) {
        i += 1;
        let placeholder = Given::Placeholder(Format::Text);
        if w == PLACEHOLDER_WORD {
            s.positional(placeholder)?;
        } else if w.starts_with('-') && w.len() > 1 {
            match w.split_once('=') {
                Some((name, PLACEHOLDER_WORD)) => s.joined(name, placeholder)?,
                Some((name, v)) => {
                    plain(v)?;
                    s.joined(name, Given::Text(v.to_string()))?
                }
                None if args.get(i) == Some(&PLACEHOLDER_WORD) => {
                    i += 1;
                    s.named(w, Some(placeholder))?
                }
                None => s.named(w, None)?,
            }
        } else {
            plain(w)?;
            s.positional(Given::Text(w.to_string()))?;
        }
    }
    Ok(s)
}

/// A given word: `<placeholder>` is the only one in angle brackets, so that a misspelt one is
/// not passed on as text.
fn plain(w: &str) -> Result<(), String> {
    if w.contains(['<', '>']) {
        return Err(format!(
            "{} has angle brackets; `{PLACEHOLDER_WORD}` is the only word that may",
            pinlog_core::render::quoted(w, 40)
        ));
    }
    Ok(())
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

    #[test]
    fn a_package_seed_says_how_to_start_it() {
        let text = "npm:@modelcontextprotocol/server-postgres -- postgresql://localhost/db\n\
            npm:@azure/mcp@1.0.0 -- server start\n\
            npm:figma-developer-mcp env=FIGMA_API_KEY -- --stdio\n\
            npm:@sentry/mcp-server env=SENTRY_HOST=sentry.io -- --access-token <placeholder>\n\
            pypi:mcp-server-motherduck -- --db-path=:memory: --token=<placeholder> <placeholder>\n\
            npm:plain -- env=X\n";
        let (found, refused) = parse(text, "seeds.txt");
        assert!(refused.is_empty(), "{refused:?}");
        let args: Vec<Vec<&str>> = found
            .iter()
            .map(|c| c.start.args().iter().map(String::as_str).collect())
            .collect();
        assert_eq!(args[0], ["postgresql://localhost/db"]);
        assert_eq!(args[1], ["server", "start"]);
        assert_eq!(args[2], ["--stdio"]);
        assert_eq!(args[3], ["--access-token", "pinlog-placeholder"]);
        assert_eq!(
            args[4],
            [
                "--db-path=:memory:",
                "--token=pinlog-placeholder",
                "pinlog-placeholder"
            ]
        );
        // After `--` every word is an argument, `env=` too.
        assert_eq!(args[5], ["env=X"]);
        let marked: Vec<&[String]> = found.iter().map(|c| c.start.arg_placeholders()).collect();
        assert!(marked[0].is_empty() && marked[1].is_empty() && marked[2].is_empty());
        assert_eq!(marked[3], ["--access-token"]);
        assert_eq!(marked[4], ["$3", "--token"]);
        assert_eq!(
            found[2].start.env_names(),
            (vec![], vec!["FIGMA_API_KEY".to_string()])
        );
        assert_eq!(
            found[3].start.env_names(),
            (vec!["SENTRY_HOST".to_string()], vec![])
        );
        // The version still parses off a seed that carries arguments.
        assert_eq!(
            found[1].launch,
            Launch::Npm {
                name: "@azure/mcp".into(),
                version: Some("1.0.0".into())
            }
        );
    }

    #[test]
    fn every_refusal_of_a_start_names_its_line_and_rule() {
        let long = "x".repeat(513);
        let many = vec!["a"; 33].join(" ");
        let cases = [
            ("npm:a --stdio", "is not `env=NAME`"),
            ("npm:a -- ", "none came"),
            ("npm:a env=PATH=/bin", "set by the sandbox"),
            ("npm:a env=X env=X=1", "set twice"),
            ("npm:a env=1BAD", "not a variable name"),
            ("npm:a env=X=<placeholder>", "angle brackets"),
            ("npm:a -- <placholder>", "angle brackets"),
            ("npm:a -- --t=<placeholder> --t <placeholder>", "placeholder twice"),
            ("npm:a -- ---x", "not an option name"),
            (&format!("npm:a -- {long}"), "1 to 512 bytes"),
            (&format!("npm:a -- {many}"), "at most 32 arguments"),
            ("npm:a -- \u{1b}[31m", "control characters"),
            ("remote:https://mcp.example.com/mcp -- --stdio", "only npm and pypi"),
            (
                "oci:ghcr.io/a/b@sha256:0000000000000000000000000000000000000000000000000000000000000000 env=X",
                "only npm and pypi",
            ),
        ];
        let text: String = cases.iter().map(|(l, _)| format!("{l}\n")).collect();
        let (found, refused) = parse(&text, "seeds.txt");
        assert!(found.is_empty(), "{found:?}");
        assert_eq!(refused.len(), cases.len(), "{refused:?}");
        for (n, ((_, rule), got)) in cases.iter().zip(&refused).enumerate() {
            assert!(
                got.starts_with(&format!("seeds.txt:{}: ", n + 1)) && got.contains(rule),
                "line {}: {got}",
                n + 1
            );
        }
    }
}
