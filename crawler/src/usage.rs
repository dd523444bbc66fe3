//! What a server that stopped with a usage error asked for: the required arguments its
//! command-line parser named (argparse, click, commander, yargs), and what a person would try for
//! each: the `stdio` choice for a transport word, a fresh empty directory for a path, a
//! placeholder for anything else. Only the parsers' own error lines are read, so that a server
//! printing its usage for another reason is not guessed at.

/// The most arguments one usage error may add: past that it is no longer a person's guess.
const MAX_WANTS: usize = 8;

/// What an argument is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fill {
    /// One of the argument's choices, as the parser printed it (`stdio` when it is one).
    Choice(String),
    /// An empty directory the server may write.
    Directory,
    /// A path that does not exist yet, in an empty directory the server may write.
    File,
    /// The crawler's placeholder text.
    Text,
}

/// One required argument: an option by its name, or a positional when `option` is `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Want {
    pub option: Option<String>,
    pub fill: Fill,
}

/// The arguments a usage error on standard error asks for, in the order named; empty when there
/// is no usage error the crawler reads, or it asks for more than a guess should give.
pub fn wanted(stderr: &str) -> Vec<Want> {
    let choices = choice_groups(stderr);
    let mut wants: Vec<Want> = Vec::new();
    let mut stdio_taken = false;
    let named = stderr
        .lines()
        .map(|l| required(l.trim()))
        .chain(std::iter::once(listed(stderr)));
    for found in named {
        for (name, positional) in found {
            let want = match positional {
                false => Want {
                    fill: kind(&name, None),
                    option: Some(name),
                },
                true => {
                    let own = group(&name);
                    // argparse names a subcommand or a positional with choices by its dest, and
                    // shows the choices on its usage line: the transport word is the group with
                    // `stdio` in it.
                    let shown = match own {
                        Some(_) => own,
                        None if !stdio_taken => choices
                            .iter()
                            .find(|g| g.iter().any(|c| c == "stdio"))
                            .cloned(),
                        None => None,
                    };
                    if shown
                        .as_ref()
                        .is_some_and(|g| g.iter().any(|c| c == "stdio"))
                    {
                        stdio_taken = true;
                    }
                    Want {
                        fill: kind(&name, shown.as_deref()),
                        option: None,
                    }
                }
            };
            if !wants.contains(&want) || want.option.is_none() {
                wants.push(want);
            }
        }
    }
    if wants.len() > MAX_WANTS {
        return Vec::new();
    }
    wants
}

/// The required arguments a parser's error line names: (name, whether it is positional).
fn required(line: &str) -> Vec<(String, bool)> {
    let lower = line.to_ascii_lowercase();
    // argparse: `prog: error: the following arguments are required: transport, --db-path`
    if let Some(at) = lower.find("the following arguments are required:") {
        let rest = &line[at + "the following arguments are required:".len()..];
        return rest
            .split(", ")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|item| match item.starts_with('-') {
                // `-d/--db-path`: the long spelling.
                true => (item.rsplit('/').next().unwrap_or(item).to_string(), false),
                false => (item.to_string(), true),
            })
            .collect();
    }
    // click: `Error: Missing option '--db-path'.`, `Error: Missing argument 'TRANSPORT'.`
    for (cue, positional) in [
        ("error: missing option ", false),
        ("error: missing argument ", true),
    ] {
        if let Some(at) = lower.find(cue) {
            let quoted = quoted_words(&line[at + cue.len()..]);
            let name = match positional {
                true => quoted.first().cloned(),
                // `'-d' / '--db-path'`: the long spelling.
                false => quoted.iter().rev().find(|w| w.starts_with('-')).cloned(),
            };
            return name.map(|n| (n, positional)).into_iter().collect();
        }
    }
    // commander: `error: required option '--db-path <path>' not specified`,
    // `error: missing required argument 'dir'`
    if let Some(at) = lower.find("error: required option ") {
        let quoted = quoted_words(&line[at..]);
        return quoted
            .first()
            .and_then(|q| q.split_whitespace().next())
            .map(|n| (n.rsplit(',').next().unwrap_or(n).trim().to_string(), false))
            .into_iter()
            .collect();
    }
    if let Some(at) = lower.find("error: missing required argument ") {
        return quoted_words(&line[at..])
            .first()
            .map(|n| (n.clone(), true))
            .into_iter()
            .collect();
    }
    // yargs: `Missing required argument: db-path`, `Missing required arguments: a, b`
    for cue in [
        "missing required arguments: ",
        "missing required argument: ",
    ] {
        if let Some(at) = lower.find(cue) {
            return line[at + cue.len()..]
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|n| {
                    let dashes = if n.chars().count() == 1 { "-" } else { "--" };
                    (format!("{dashes}{n}"), false)
                })
                .collect();
        }
    }
    // yargs, for a positional with no name: `Not enough non-option arguments: got 0, need at
    // least 1`
    if lower.contains("not enough non-option arguments: got 0, need at least 1") {
        return vec![("argument".to_string(), true)];
    }
    Vec::new()
}

/// The options listed under a line that says required arguments are missing, one per item, each
/// only where the text spells it as an option too:
/// `Error: The following required arguments are missing:`, then `  - token: the API token` and
/// an indented `--token or -t command line argument`.
fn listed(text: &str) -> Vec<(String, bool)> {
    let mut lines = text.lines();
    let header = |l: &str| {
        let lower = l.trim().to_ascii_lowercase();
        lower.ends_with(':')
            && (lower.contains("required arguments are missing")
                || lower.contains("required options are missing")
                || lower.ends_with("missing required arguments:"))
    };
    if lines.by_ref().find(|l| header(l)).is_none() {
        return Vec::new();
    }
    let mut found = Vec::new();
    for line in lines {
        let t = line.trim();
        let Some(item) = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) else {
            // An indented line explains the item above it; anything else ends the list.
            if line.starts_with([' ', '\t']) && !t.is_empty() {
                continue;
            }
            break;
        };
        let name = item
            .split(|c: char| c == ':' || c.is_whitespace())
            .next()
            .unwrap_or("");
        let option = match name.starts_with('-') {
            true => name.to_string(),
            false => format!("--{name}"),
        };
        let spelled = text
            .split(|c: char| c.is_whitespace() || matches!(c, ',' | '\'' | '"' | '`' | '(' | ')'))
            .any(|w| w == option);
        if name.len() > 1 && spelled {
            found.push((option, false));
        }
    }
    found
}

/// The words between single quotes in `s`, in order.
fn quoted_words(s: &str) -> Vec<String> {
    s.split('\'')
        .skip(1)
        .step_by(2)
        .map(|w| w.trim().to_string())
        .filter(|w| !w.is_empty())
        .collect()
}

/// The choices of `{a,b}` (argparse) or `{a|b}` (click), when `word` is such a group.
fn group(word: &str) -> Option<Vec<String>> {
    let inner = word.strip_prefix('{')?.strip_suffix('}')?;
    let items: Vec<String> = inner
        .split([',', '|'])
        .map(|c| c.trim().to_string())
        .collect();
    items
        .iter()
        .all(|c| {
            !c.is_empty()
                && c.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        })
        .then_some(items)
}

/// Every choice group shown in the text, in order.
fn choice_groups(text: &str) -> Vec<Vec<String>> {
    let mut groups = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        if let Some(g) = group(&rest[open..open + close + 1]) {
            groups.push(g);
        }
        rest = &rest[open + close + 1..];
    }
    groups
}

/// What a variable or an argument named `name` is given when nothing shows its choices.
pub fn fill_for(name: &str) -> Fill {
    kind(name, None)
}

/// What an argument named `name` (with `choices`, if shown) is given.
fn kind(name: &str, choices: Option<&[String]>) -> Fill {
    if let Some(c) = choices {
        let pick = c.iter().find(|c| *c == "stdio").unwrap_or(&c[0]);
        return Fill::Choice(pick.clone());
    }
    let lower = name.to_ascii_lowercase();
    let parts: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|p| !p.is_empty())
        .collect();
    let has = |words: &[&str]| parts.iter().any(|p| words.contains(p));
    if has(&["transport"]) {
        Fill::Choice("stdio".to_string())
    } else if has(&["url", "uri", "host", "endpoint", "server"]) {
        // An address: no path stands in for one.
        Fill::Text
    } else if has(&[
        "dir",
        "dirs",
        "directory",
        "directories",
        "folder",
        "folders",
        "root",
        "roots",
        "workspace",
        "repo",
        "repository",
        "vault",
    ]) {
        Fill::Directory
    } else if has(&[
        "path", "paths", "file", "db", "database", "sqlite", "storage", "data",
    ]) {
        Fill::File
    } else {
        Fill::Text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opt(name: &str, fill: Fill) -> Want {
        Want {
            option: Some(name.to_string()),
            fill,
        }
    }

    fn pos(fill: Fill) -> Want {
        Want { option: None, fill }
    }

    #[test]
    fn argparse_transport_words_and_required_options() {
        let excel = "usage: excel-mcp-server [-h] [--version] {stdio,streamable-http} ...\n\
                     excel-mcp-server: error: the following arguments are required: transport\n";
        assert_eq!(wanted(excel), [pos(Fill::Choice("stdio".into()))]);
        let duck = "usage: mcp-server-duckdb [-h] --db-path DB_PATH [--readonly]\n\
                    mcp-server-duckdb: error: the following arguments are required: --db-path\n";
        assert_eq!(wanted(duck), [opt("--db-path", Fill::File)]);
        let both = "usage: s [-h] -a ALLOWED {sse,stdio}\n\
                    s: error: the following arguments are required: {sse,stdio}, -a/--allowed-dirs\n";
        assert_eq!(
            wanted(both),
            [
                pos(Fill::Choice("stdio".into())),
                opt("--allowed-dirs", Fill::Directory)
            ]
        );
    }

    #[test]
    fn click_commander_and_yargs_errors() {
        assert_eq!(
            wanted("Usage: s [OPTIONS] {stdio|sse}\nTry 's --help' for help.\n\nError: Missing argument '{stdio|sse}'.\n"),
            [pos(Fill::Choice("stdio".into()))]
        );
        assert_eq!(
            wanted("Error: Missing option '-r' / '--repository'.\n"),
            [opt("--repository", Fill::Directory)]
        );
        assert_eq!(
            wanted("error: required option '--db-path <path>' not specified\n"),
            [opt("--db-path", Fill::File)]
        );
        assert_eq!(
            wanted("error: missing required argument 'directory'\n"),
            [pos(Fill::Directory)]
        );
        assert_eq!(
            wanted(
                "Options:\n  --help\n\nMissing required arguments: allowed-directories, api-url\n"
            ),
            [
                opt("--allowed-directories", Fill::Directory),
                opt("--api-url", Fill::Text)
            ]
        );
        assert_eq!(
            wanted("Not enough non-option arguments: got 0, need at least 1\n"),
            [pos(Fill::Text)]
        );
    }

    #[test]
    fn a_list_of_missing_options() {
        let monday = "Error: The following required arguments are missing:\n  - token: Monday API token\n    You can provide it using:\n     --token or -t command line argument\n";
        assert_eq!(wanted(monday), [opt("--token", Fill::Text)]);
        let two = "Missing required arguments:\n - --root-dir\n - db-url: where it is\n   (--db-url)\nStarting anyway\n - --not-listed\n";
        assert_eq!(
            wanted(two),
            [
                opt("--root-dir", Fill::Directory),
                opt("--db-url", Fill::Text)
            ]
        );
        // Named only as a word, never as an option: not guessed at.
        assert_eq!(
            wanted("The following required arguments are missing:\n  - token\n"),
            []
        );
    }

    #[test]
    fn variables_by_their_names() {
        assert_eq!(fill_for("ALLOWED_DIR"), Fill::Directory);
        assert_eq!(fill_for("MCP_TRANSPORT"), Fill::Choice("stdio".into()));
        assert_eq!(fill_for("SQLITE_DB_PATH"), Fill::File);
        assert_eq!(fill_for("DATABASE_URL"), Fill::Text);
        assert_eq!(fill_for("ES_HOST"), Fill::Text);
        assert_eq!(fill_for("ORG_NAME"), Fill::Text);
    }

    #[test]
    fn other_text_is_no_usage_error() {
        for text in [
            "usage: server serve --stdio --token *\n",
            "Error: FIXTURE_API_TOKEN environment variable is required\n",
            "fatal: nothing to serve\n",
            "",
        ] {
            assert_eq!(wanted(text), [], "{text}");
        }
        let many: String = (0..9)
            .map(|i| format!("Missing required argument: a{i}\n"))
            .collect();
        assert_eq!(wanted(&many), []);
    }
}
