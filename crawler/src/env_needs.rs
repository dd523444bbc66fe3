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
const CUES: [&str; 6] = [
    "env",
    "variable",
    "not set",
    "missing",
    "required",
    "must be set",
];

/// Whether `name` looks like it holds a credential (`GITHUB_TOKEN`, `OPENAI_API_KEY`, …).
pub fn is_credential(name: &str) -> bool {
    name.to_ascii_uppercase().split('_').any(|part| {
        CREDENTIAL_PARTS.contains(&part) || part.ends_with("TOKEN") || part.ends_with("APIKEY")
    })
}

/// The variables a server wanted: those its registry entry marks required, and names the server
/// wrote to standard error on a line that says something is missing. Sorted, without repeats.
pub fn wanted(declared: &[EnvVar], stderr: &[u8]) -> Vec<String> {
    let mut names: Vec<String> = declared
        .iter()
        .filter(|v| v.required)
        .map(|v| v.name.clone())
        .collect();
    let text = String::from_utf8_lossy(stderr);
    for line in text.lines() {
        let lower = line.to_lowercase();
        if !CUES.iter().any(|c| lower.contains(c)) {
            continue;
        }
        for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            let shaped = word.len() >= 3
                && word.contains('_')
                && !word.starts_with('_')
                && !word.starts_with("ERR_")
                && word
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
                && word.as_bytes()[0].is_ascii_uppercase();
            if shaped && is_env_name(word) {
                names.push(word.to_string());
            }
        }
    }
    names.sort();
    names.dedup();
    names.truncate(32);
    names
}

#[cfg(test)]
mod tests {
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
}
