//! Which environment variables a server that stopped early seemed to want, and which of those
//! are credentials. Only names are ever kept, never values.

use crate::candidate::EnvVar;
use crate::discover::is_env_name;

/// Name parts that make a variable a credential.
const CREDENTIAL_PARTS: [&str; 14] = [
    "TOKEN",
    "SECRET",
    "KEY",
    "APIKEY",
    "PASSWORD",
    "PASSWD",
    "PWD",
    "PASS",
    "CREDENTIAL",
    "CREDENTIALS",
    "AUTH",
    "PAT",
    "COOKIE",
    "SESSION",
];

/// Words near a variable's name in a message that says the server wants it.
const CUES: [&str; 15] = [
    "env",
    "variable",
    "not set",
    "missing",
    "required",
    "must be set",
    "please set",
    "please provide",
    "not provided",
    "not defined",
    "undefined",
    "keyerror",
    "os.environ",
    "process.env",
    "getenv",
];

/// Words right after a bare name (one with no underscore, `APIKEY`) that make it a variable's:
/// such a name is taken only where the message says so of it alone.
const AFTER_BARE: [&str; 6] = [
    "is not set",
    "is required",
    "must be set",
    "is missing",
    "environment variable",
    "env var",
];

/// Words right before a bare name that make it a variable's.
const BEFORE_BARE: [&str; 5] = [
    "please set",
    "environment variable",
    "env var",
    "variable:",
    "keyerror:",
];

/// Whether `name` looks like it holds a credential (`GITHUB_TOKEN`, `OPENAI_API_KEY`, …).
pub fn is_credential(name: &str) -> bool {
    name.to_ascii_uppercase().split('_').any(|part| {
        CREDENTIAL_PARTS.contains(&part) || part.ends_with("TOKEN") || part.ends_with("APIKEY")
    })
}

/// The variables a server wanted: those its registry entry marks required, and names the server
/// wrote (on standard error, or as text on its output) on a line that says something is
/// missing, or listed under such a line that ends with a colon. Sorted, without repeats.
pub fn wanted(declared: &[EnvVar], said: &[u8]) -> Vec<String> {
    let mut names: Vec<String> = declared
        .iter()
        .filter(|v| v.required)
        .map(|v| v.name.clone())
        .collect();
    let text = without_colours(&String::from_utf8_lossy(said));
    // Lines of a list under "Missing environment variables:" still to read.
    let mut listed = 0;
    for line in text.lines() {
        let lower = line.to_lowercase();
        let cued = CUES.iter().any(|c| lower.contains(c));
        let item = listed > 0 && is_list_item(line);
        listed = match (cued, line.trim_end().ends_with(':')) {
            (true, true) => 16,
            _ if item => listed - 1,
            _ => 0,
        };
        if !(cued || item) {
            continue;
        }
        for (start, end) in words(line) {
            let word = &line[start..end];
            let shaped = word.len() >= 3
                && !word.starts_with('_')
                && !word.starts_with("ERR_")
                && word
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
                && word.as_bytes()[0].is_ascii_uppercase();
            if !shaped || !is_env_name(word) {
                continue;
            }
            // A bare upper-case word is more often an acronym than a variable.
            let bare = !word.contains('_');
            if bare && !((item && starts_item(line, start)) || said_alone(line, start, end)) {
                continue;
            }
            names.push(word.to_string());
        }
    }
    names.sort();
    names.dedup();
    names.truncate(32);
    names
}

/// Where each word of ASCII letters, digits and `_` starts and ends in `line`.
/// `text` without its terminal control sequences (ESC `[` parameters and one final letter):
/// loggers colour a variable's name, and the colour's `36m` would otherwise join the name.
fn without_colours(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for p in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&p) {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

fn words(line: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c.is_ascii_alphanumeric() || c == '_', start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    out.extend(start.map(|s| (s, line.len())));
    out
}

/// A line of a list: `- NAME`, `* NAME`, `• NAME`, or the name alone.
fn is_list_item(line: &str) -> bool {
    let t = line.trim();
    let rest = t.trim_start_matches(['-', '*', '•']).trim();
    !rest.is_empty() && (rest.len() < t.len() || !rest.contains(' '))
}

/// Whether the word at `start` is the first of its list item: a bare word later in an item
/// (`- token: the API token`) is part of a description.
fn starts_item(line: &str, start: usize) -> bool {
    line[..start]
        .trim_start()
        .trim_start_matches(['-', '*', '•'])
        .trim()
        .is_empty()
}

/// Whether the words right around `line[start..end]` say that it is a variable.
fn said_alone(line: &str, start: usize, end: usize) -> bool {
    let quotes: &[char] = &['"', '\'', '`', ' ', '$'];
    let after = line[end..].to_lowercase();
    let after = after.trim_start_matches(quotes);
    let before = line[..start].to_lowercase();
    let before = before.trim_end_matches(quotes);
    AFTER_BARE.iter().any(|a| after.starts_with(a))
        || BEFORE_BARE.iter().any(|b| before.ends_with(b))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_coloured_name_is_read() {
        let said =
            b"\x1b[31mERROR\x1b[39m [17:12:13.720] (2): \x1b[36mGITLAB_PERSONAL_ACCESS_TOKEN \
                     environment variable is not set\x1b[39m";
        assert_eq!(
            super::wanted(&[], said),
            ["GITLAB_PERSONAL_ACCESS_TOKEN".to_string()]
        );
    }

    use super::*;

    #[test]
    fn credentials_by_name_parts() {
        for c in [
            "GITHUB_PERSONAL_ACCESS_TOKEN",
            "OPENAI_API_KEY",
            "DB_PASSWORD",
            "CLIENT_SECRET",
            "SLACK_BOT_TOKEN",
            "HF_TOKEN",
            "APIKEY",
            "NOTION_AUTH",
        ] {
            assert!(is_credential(c), "{c}");
        }
        for c in [
            "DATABASE_URL",
            "ALLOWED_DIRS",
            "LOG_LEVEL",
            "MONKEY_MODE",
            "TOKENIZER_DIR",
        ] {
            assert!(!is_credential(c), "{c}");
        }
    }

    #[test]
    fn names_from_stderr_lines_that_say_something_is_missing() {
        let stderr = b"Starting...\nError: BRAVE_API_KEY environment variable is required\n\
            node:internal ERR_MODULE_NOT_FOUND missing\nThe variable DATABASE_URL is not set\n\
            at Object.<anonymous> (SOME_FILE.js)\n";
        let declared = [
            EnvVar {
                name: "REGION".into(),
                required: true,
                secret: false,
            },
            EnvVar {
                name: "OPTIONAL_X".into(),
                required: false,
                secret: false,
            },
        ];
        assert_eq!(
            wanted(&declared, stderr),
            ["BRAVE_API_KEY", "DATABASE_URL", "REGION"]
        );
    }

    #[test]
    fn common_phrasings_are_read_and_bare_acronyms_are_not() {
        let said = b"Please set EXAMPLE_API_KEY to use this server\n\
            APIKEY is not set\n\
            Error: the JSON API returned HTTP 500; a required field is missing\n\
            Missing required environment variables:\n  - ACME_ORG\n  * TOKEN\n  - token: a Monday API key\n\
            Starting server on PORT 8080\n  - NOT_LISTED\n\
            KeyError: 'OPENAI_API_KEY'\n\
            Missing required environment variable: SERVICE_URL\n\
            The environment variable `SECRET` must be set\n";
        assert_eq!(
            wanted(&[], said),
            [
                "ACME_ORG",
                "APIKEY",
                "EXAMPLE_API_KEY",
                "OPENAI_API_KEY",
                "SECRET",
                "SERVICE_URL",
                "TOKEN"
            ]
        );
    }
}
