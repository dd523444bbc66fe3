//! How a server is started beyond running its program: the arguments after it and the
//! environment it gets from the first run, as the MCP registry declares them or a seed line
//! gives them. Some servers list their tools only when started as their docs say (a database
//! URL, `--stdio`, a subcommand, a token flag).
//!
//! A value the crawler makes up, because it is secret or nobody gave one, is a *placeholder*:
//! the entry names such arguments (by name, or by position as `$N`) and such variables, never
//! the values. Every value is bounded and free of control characters; the command line is an
//! argument vector, never a shell's text.

use crate::discover::is_env_name;
use crate::sandbox::PLACEHOLDER;

/// The most arguments a server is started with.
pub const MAX_ARGS: usize = 32;
/// The most environment variables set from the first run.
const MAX_ENV: usize = 32;
/// The longest argument or variable value, in bytes.
pub const MAX_VALUE_BYTES: usize = 512;
/// Variables the sandbox sets itself.
const RESERVED_ENV: [&str; 4] = ["HOME", "LANG", "PATH", "TMPDIR"];

/// One variable set from the first run.
#[derive(Debug, Clone, PartialEq, Eq)]
struct StartEnv {
    name: String,
    /// `None`: the crawler's placeholder stands in for a secret.
    value: Option<String>,
}

/// The arguments and environment a server starts with; empty for most servers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Start {
    /// The arguments after the program, in order, placeholders already filled in.
    args: Vec<String>,
    /// The arguments that are placeholders, by name (`--token`) or position (`$2`); sorted.
    arg_placeholders: Vec<String>,
    env: Vec<StartEnv>,
}

/// What a placeholder argument stands for, by the registry's `format`: a made-up value of the
/// right kind has the best chance of letting the server start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Number,
    Boolean,
    FilePath,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "string" => Some(Format::Text),
            "number" => Some(Format::Number),
            "boolean" => Some(Format::Boolean),
            "filepath" => Some(Format::FilePath),
            _ => None,
        }
    }

    fn placeholder(self) -> String {
        match self {
            Format::Text => PLACEHOLDER.to_string(),
            Format::Number => "0".to_string(),
            Format::Boolean => "false".to_string(),
            // Writable in the sandbox, and a fresh file for a server that creates one.
            Format::FilePath => format!("/tmp/{PLACEHOLDER}"),
        }
    }
}

/// What an argument or variable is given: text, or a placeholder of some format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Given {
    Text(String),
    Placeholder(Format),
}

impl Start {
    pub fn is_empty(&self) -> bool {
        self.args.is_empty() && self.env.is_empty()
    }

    pub fn args(&self) -> &[String] {
        &self.args
    }

    pub fn arg_placeholders(&self) -> &[String] {
        &self.arg_placeholders
    }

    /// Adds a positional argument.
    pub fn positional(&mut self, value: Given) -> Result<(), String> {
        let position = self.args.len() + 1;
        self.push(None, value, &format!("${position}"))
    }

    /// Adds a named argument: `name` alone for a flag without a value, else `name value` as two
    /// arguments.
    pub fn named(&mut self, name: &str, value: Option<Given>) -> Result<(), String> {
        arg_name(name)?;
        match value {
            None => self.push(None, Given::Text(name.to_string()), name),
            Some(v) => self.push(Some(name), v, name),
        }
    }

    /// Adds a value the crawler made up for this look (a choice, a scratch directory's path),
    /// recorded as a placeholder: after `option` when there is one, else as a positional.
    pub fn made(&mut self, option: Option<&str>, value: String) -> Result<(), String> {
        if let Some(name) = option {
            arg_name(name)?;
        }
        let position = self.args.len() + 1 + usize::from(option.is_some());
        let record = option.map_or_else(|| format!("${position}"), str::to_string);
        arg_value(&value)?;
        self.room(1 + usize::from(option.is_some()))?;
        self.args.extend(option.map(str::to_string));
        self.args.push(value);
        self.mark(&record)
    }

    /// Adds `name=value` as one argument, as some servers want their options written.
    pub fn joined(&mut self, name: &str, value: Given) -> Result<(), String> {
        arg_name(name)?;
        let (text, placeholder) = filled(value);
        self.room(1)?;
        arg_value(&text)?;
        let text = format!("{name}={text}");
        arg_value(&text)?;
        self.args.push(text);
        if placeholder {
            self.mark(name)?;
        }
        Ok(())
    }

    fn push(&mut self, name: Option<&str>, value: Given, record: &str) -> Result<(), String> {
        let (text, placeholder) = filled(value);
        arg_value(&text)?;
        self.room(1 + usize::from(name.is_some()))?;
        self.args.extend(name.map(str::to_string));
        self.args.push(text);
        if placeholder {
            self.mark(record)?;
        }
        Ok(())
    }

    fn room(&self, more: usize) -> Result<(), String> {
        if self.args.len() + more > MAX_ARGS {
            return Err(format!(
                "a server is started with at most {MAX_ARGS} arguments"
            ));
        }
        Ok(())
    }

    fn mark(&mut self, record: &str) -> Result<(), String> {
        match self
            .arg_placeholders
            .binary_search_by(|r| r.as_str().cmp(record))
        {
            Ok(_) => Err(format!(
                "the argument {} is a placeholder twice; the entry could not tell them apart",
                pinlog_core::render::quoted(record, 64)
            )),
            Err(at) => {
                self.arg_placeholders.insert(at, record.to_string());
                Ok(())
            }
        }
    }

    /// Sets a variable from the first run: `None` for the placeholder.
    pub fn set_env(&mut self, name: &str, value: Option<&str>) -> Result<(), String> {
        if !is_env_name(name) {
            return Err(format!(
                "{} is not a variable name ([A-Za-z_][A-Za-z0-9_]*, at most 128 bytes)",
                pinlog_core::render::quoted(name, 64)
            ));
        }
        if RESERVED_ENV.contains(&name) {
            return Err(format!("{name} is set by the sandbox"));
        }
        if self.env.iter().any(|e| e.name == name) {
            return Err(format!("{name} is set twice"));
        }
        if self.env.len() >= MAX_ENV {
            return Err(format!(
                "a server is started with at most {MAX_ENV} variables"
            ));
        }
        if let Some(v) = value {
            arg_value(v)?;
        }
        self.env.push(StartEnv {
            name: name.to_string(),
            value: value.map(str::to_string),
        });
        Ok(())
    }

    /// The variables as set: each name, with its value or `None` for the placeholder.
    pub fn env(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        self.env
            .iter()
            .map(|e| (e.name.as_str(), e.value.as_deref()))
    }

    /// A start read back from its parts (a queued job's), each held to the rules it was made
    /// under: at most 32 arguments of 1 to 512 bytes, placeholders named by an option or a
    /// position within them, sorted and once each, and the variables as [`Start::set_env`] takes
    /// them.
    pub fn from_parts(
        args: Vec<String>,
        arg_placeholders: &[String],
        env: &[(String, Option<String>)],
    ) -> Result<Start, String> {
        let mut s = Start::default();
        s.room(args.len())?;
        for a in &args {
            arg_value(a)?;
        }
        s.args = args;
        for p in arg_placeholders {
            let named_or_placed = match p.strip_prefix('$') {
                Some(n) => n
                    .parse::<usize>()
                    .is_ok_and(|n| n >= 1 && n <= s.args.len() && !p.starts_with("$0")),
                None => arg_name(p).is_ok(),
            };
            if !named_or_placed || s.arg_placeholders.last().is_some_and(|l| l >= p) {
                return Err(format!(
                    "{} is not a placeholder of these arguments, in order",
                    pinlog_core::render::quoted(p, 64)
                ));
            }
            s.arg_placeholders.push(p.clone());
        }
        for (name, value) in env {
            s.set_env(name, value.as_deref())?;
        }
        Ok(s)
    }

    /// The variables with their values, placeholders filled in.
    pub fn env_values(&self) -> Vec<(String, String)> {
        self.env
            .iter()
            .map(|e| {
                let v = e.value.clone().unwrap_or_else(|| PLACEHOLDER.to_string());
                (e.name.clone(), v)
            })
            .collect()
    }

    /// The names of variables given real values, and of those given the placeholder; sorted.
    pub fn env_names(&self) -> (Vec<String>, Vec<String>) {
        let (mut given, mut placeholders): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
        for e in &self.env {
            match e.value {
                Some(_) => given.push(e.name.clone()),
                None => placeholders.push(e.name.clone()),
            }
        }
        given.sort();
        placeholders.sort();
        (given, placeholders)
    }
}

fn filled(value: Given) -> (String, bool) {
    match value {
        Given::Text(t) => (t, false),
        Given::Placeholder(f) => (f.placeholder(), true),
    }
}

/// An option's name: `-` or `--`, then a letter or digit, then letters, digits and `._-`; at
/// most 128 bytes. The entry records it as it is.
fn arg_name(name: &str) -> Result<(), String> {
    let body = name.strip_prefix("--").or_else(|| name.strip_prefix('-'));
    let ok = name.len() <= 128
        && body.is_some_and(|b| {
            b.bytes().next().is_some_and(|c| c.is_ascii_alphanumeric())
                && b.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
        });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{} is not an option name (`-` or `--`, a letter or digit, then letters, digits and \
             `._-`, at most 128 bytes)",
            pinlog_core::render::quoted(name, 64)
        ))
    }
}

/// An argument or variable value: 1 to 512 bytes, no control characters.
fn arg_value(v: &str) -> Result<(), String> {
    if v.is_empty() || v.len() > MAX_VALUE_BYTES {
        return Err(format!(
            "a value is 1 to {MAX_VALUE_BYTES} bytes; this one is {}",
            v.len()
        ));
    }
    if v.chars().any(char::is_control) {
        return Err(format!(
            "a value has no control characters: {}",
            pinlog_core::render::quoted(v, 64)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_named_by_option_or_position() {
        let mut s = Start::default();
        s.positional(Given::Text("server".into())).unwrap();
        s.named("--stdio", None).unwrap();
        s.named("--token", Some(Given::Placeholder(Format::Text)))
            .unwrap();
        s.positional(Given::Placeholder(Format::FilePath)).unwrap();
        s.joined("--port", Given::Placeholder(Format::Number))
            .unwrap();
        assert_eq!(
            s.args(),
            [
                "server",
                "--stdio",
                "--token",
                PLACEHOLDER,
                &format!("/tmp/{PLACEHOLDER}"),
                "--port=0"
            ]
        );
        // Position 5 is the path: `--token` and its value are two arguments.
        assert_eq!(s.arg_placeholders(), ["$5", "--port", "--token"]);
    }

    #[test]
    fn hostile_values_names_and_counts_are_refused() {
        let mut s = Start::default();
        assert!(s
            .positional(Given::Text("a\nb".into()))
            .unwrap_err()
            .contains("control"));
        assert!(s
            .positional(Given::Text("x".repeat(513)))
            .unwrap_err()
            .contains("512"));
        assert!(s.positional(Given::Text(String::new())).is_err());
        for bad in ["token", "-", "--", "---x", "--a b", "--a=b", "--\u{e9}"] {
            assert!(s.named(bad, None).is_err(), "{bad}");
        }
        for _ in 0..MAX_ARGS {
            s.positional(Given::Text("a".into())).unwrap();
        }
        assert!(s
            .positional(Given::Text("a".into()))
            .unwrap_err()
            .contains("at most"));
        let mut s = Start::default();
        s.named("--token", Some(Given::Placeholder(Format::Text)))
            .unwrap();
        assert!(s
            .named("--token", Some(Given::Placeholder(Format::Text)))
            .unwrap_err()
            .contains("twice"));
    }

    #[test]
    fn variables_are_checked_and_split_into_given_and_placeholders() {
        let mut s = Start::default();
        s.set_env("SENTRY_HOST", Some("sentry.io")).unwrap();
        s.set_env("API_TOKEN", None).unwrap();
        assert!(s.set_env("API_TOKEN", None).unwrap_err().contains("twice"));
        assert!(s
            .set_env("PATH", Some("/x"))
            .unwrap_err()
            .contains("sandbox"));
        assert!(s.set_env("1X", None).is_err());
        assert!(s.set_env("X", Some("a\u{7f}")).is_err());
        assert_eq!(
            s.env_names(),
            (
                vec!["SENTRY_HOST".to_string()],
                vec!["API_TOKEN".to_string()]
            )
        );
        assert_eq!(
            s.env_values(),
            [
                ("SENTRY_HOST".to_string(), "sentry.io".to_string()),
                ("API_TOKEN".to_string(), PLACEHOLDER.to_string())
            ]
        );
    }
}
