//! The command line `pinlog wrap` writes in place of a local server's:
//! `PINLOG proxy --name NAME [--lock LOCK] COMMAND ARGS…`. [`WrappedCommand`] both writes it
//! and reads it back, the way `pinlog proxy` reads its own command line: the server's command is
//! the first argument that is not an option, or follows `--` (as wrap wrote it before 0.2.0, and
//! still writes it for a command that starts with `-`), so that wrap, unwrap, export and policy
//! cannot disagree on its shape. Wrap leaves `--` out because a launcher that appends its own
//! flags to a configuration's args (the MCP Inspector's `--config` mode) reads everything after
//! `--` as the server's.

use std::fmt;

/// The proxy's subcommand, the first of the args.
const PROXY: &str = "proxy";
/// What ends the proxy's options: the server's command line follows it.
const SEPARATOR: &str = "--";
/// The proxy's options that take a value: their values are never the server's command. The
/// binary's tests check that these are exactly the ones its command line defines.
pub const VALUED: [&str; 17] = [
    "--name",
    "--lock",
    "--on-drift",
    "--listen",
    "--upstream",
    "--log",
    "--log-vkey",
    "--vkey",
    "--log-vkey-file",
    "--vkey-file",
    "--log-witness",
    "--log-quorum",
    "--log-witness-policy",
    "--log-state",
    "--log-deadline",
    "--on-public-mismatch",
    "--on-public-unavailable",
];

/// Whether a command's file name is `pinlog` (or `pinlog.exe`), on any platform.
pub fn is_pinlog_name(command: &str) -> bool {
    let base = command.rsplit(['/', '\\']).next().unwrap_or(command);
    base == "pinlog" || base.eq_ignore_ascii_case("pinlog.exe")
}

/// A local server's command line with the proxy in front: the entry's `command` is
/// [`program`](Self::program), its `args` are [`args`](Self::args).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrappedCommand {
    /// The pinlog program that runs the proxy.
    pub program: String,
    /// The proxy's options, between `proxy` and the server's command line, as written;
    /// [`options`] reads them.
    pub options: Vec<String>,
    /// Whether `--` ends the options, as wrap writes it only before a command that starts with
    /// `-`. Without it, the server's command is the first argument that is neither an option nor
    /// an option's value.
    pub separated: bool,
    /// The server's own command line: its command, then its arguments. Never empty.
    pub server: Vec<String>,
}

/// A command line that runs `pinlog proxy` yet gives it no server to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// What follows `proxy` up to `--`, or to the end when there is none; [`options`] reads it.
    pub options: Vec<String>,
    pub why: Malformed,
}

/// What a [`Broken`] command line lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// Options only: no `--`, and no argument that is not an option or an option's value.
    OptionsOnly,
    /// Nothing follows `--`.
    NoCommand,
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Malformed::OptionsOnly => "pinlog proxy runs with its options only, and no command",
            Malformed::NoCommand => "pinlog proxy runs with no command after --",
        })
    }
}

/// One of the proxy's options, as [`options`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProxyOption<'a> {
    Name(&'a str),
    Lock(&'a str),
    /// `--on-drift`, with its value unchecked.
    OnDrift(&'a str),
    OnlyLocked,
    /// `--listen` or `--upstream`, with its value: the proxy in front of an HTTP server, which
    /// runs no command.
    Http(&'static str),
    /// An option that takes a value, last before `--` or the end, without its value.
    NoValue(&'static str),
    /// Anything else, as written: an option the proxy has that wrap never writes, or none it has.
    Other(&'a str),
}

impl WrappedCommand {
    /// `server` behind the proxy run by `program`, under `name`, held to `lock` when one is given;
    /// `--` only where the server's command would otherwise read as an option.
    pub fn new(program: &str, name: &str, lock: Option<&str>, server: Vec<String>) -> Self {
        let mut options = Vec::new();
        option(&mut options, "--name", name);
        if let Some(lock) = lock {
            option(&mut options, "--lock", lock);
        }
        WrappedCommand {
            program: program.to_string(),
            options,
            separated: server.first().is_none_or(|c| c.starts_with('-')),
            server,
        }
    }

    /// Reads an entry's `command` and `args` back, as `pinlog proxy` would. `None` when they are
    /// no wrapped command line: `command` is not pinlog (`is_pinlog` decides which commands are)
    /// or its first argument is not `proxy`. The options end at the first `--`, even where an
    /// option's value is expected, or at the first argument that is neither an option nor an
    /// option's value, which starts the server's command: `pinlog proxy` reads them so.
    pub fn parse(
        command: &str,
        args: &[String],
        is_pinlog: impl Fn(&str) -> bool,
    ) -> Option<Result<Self, Broken>> {
        if !is_pinlog(command) || args.first().map(String::as_str) != Some(PROXY) {
            return None;
        }
        let rest = &args[1..];
        let Some(end) = options_end(rest) else {
            return Some(Err(Broken {
                options: rest.to_vec(),
                why: Malformed::OptionsOnly,
            }));
        };
        let separated = rest[end] == SEPARATOR;
        let server = &rest[end + usize::from(separated)..];
        Some(match server.is_empty() {
            true => Err(Broken {
                options: rest[..end].to_vec(),
                why: Malformed::NoCommand,
            }),
            false => Ok(WrappedCommand {
                program: command.to_string(),
                options: rest[..end].to_vec(),
                separated,
                server: server.to_vec(),
            }),
        })
    }

    /// The args before the server's command line: `proxy`, the options, and `--` when it is
    /// written.
    pub fn prefix(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.options.len() + 2);
        out.push(PROXY.to_string());
        out.extend(self.options.iter().cloned());
        if self.separated {
            out.push(SEPARATOR.to_string());
        }
        out
    }

    /// The entry's `args`: the [`prefix`](Self::prefix), then the server's command line.
    pub fn args(&self) -> Vec<String> {
        let mut out = self.prefix();
        out.extend(self.server.iter().cloned());
        out
    }

    /// The index of the server's command in [`args`](Self::args).
    pub fn command_at(&self) -> usize {
        self.options.len() + 1 + usize::from(self.separated)
    }
}

/// Where the proxy's options end in what follows `proxy`: the index of the first `--` or of the
/// first argument that is neither an option nor an option's value; `None` when there is neither.
fn options_end(rest: &[String]) -> Option<usize> {
    let mut i = 0;
    while let Some(a) = rest.get(i) {
        // `-` alone is an argument, as for most commands (it often names standard input).
        if a == SEPARATOR || !a.starts_with('-') || a == "-" {
            return Some(i);
        }
        if VALUED.contains(&a.as_str()) && rest.get(i + 1).is_some_and(|v| v != SEPARATOR) {
            i += 1;
        }
        i += 1;
    }
    None
}

/// `--flag value`, or `--flag=value` when the value starts with `-` and would read as a flag.
fn option(out: &mut Vec<String>, flag: &str, value: &str) {
    if value.starts_with('-') {
        out.push(format!("{flag}={value}"));
    } else {
        out.push(flag.to_string());
        out.push(value.to_string());
    }
}

/// The proxy's `options` (those of a [`WrappedCommand`] or a [`Broken`]) in order, each with the
/// index in the entry's args where it starts. `--flag=value` is read as `--flag value`.
pub fn options(options: &[String]) -> Vec<(usize, ProxyOption<'_>)> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(a) = options.get(i) {
        let at = i + 1;
        let (flag, glued) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v)),
            _ => (a.as_str(), None),
        };
        let read = if let Some(&name) = VALUED.iter().find(|&&n| n == flag) {
            let value = match glued {
                Some(v) => Some(v),
                None => {
                    i += 1;
                    options.get(i).map(String::as_str)
                }
            };
            match (name, value) {
                (_, None) => ProxyOption::NoValue(name),
                ("--name", Some(v)) => ProxyOption::Name(v),
                ("--lock", Some(v)) => ProxyOption::Lock(v),
                ("--on-drift", Some(v)) => ProxyOption::OnDrift(v),
                (_, Some(_)) => ProxyOption::Http(name),
            }
        } else if flag == "--only-locked" && glued.is_none() {
            ProxyOption::OnlyLocked
        } else {
            ProxyOption::Other(a)
        };
        out.push((at, read));
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn written_then_read(program: &str, name: &str, lock: Option<&str>, server: &[&str]) {
        let w = WrappedCommand::new(program, name, lock, v(server));
        let args = w.args();
        // `--` only before a command that would read as an option.
        assert_eq!(w.separated, server[0].starts_with('-'), "{args:?}");
        assert_eq!(args[w.command_at() - 1] == "--", w.separated, "{args:?}");
        assert_eq!(args[w.command_at()..], w.server);
        let read = WrappedCommand::parse(&w.program, &args, is_pinlog_name);
        assert_eq!(read, Some(Ok(w.clone())), "{args:?}");
        let mut expected = vec![(1, ProxyOption::Name(name))];
        if let Some(lock) = lock {
            let at = if name.starts_with('-') { 2 } else { 3 };
            expected.push((at, ProxyOption::Lock(lock)));
        }
        assert_eq!(options(&w.options), expected, "{args:?}");
    }

    #[test]
    fn what_is_written_reads_back_the_same() {
        let lock = Some("/srv/team/mcp.lock.json");
        written_then_read("/usr/local/bin/pinlog", "time", lock, &["uvx", "x==1"]);
        written_then_read("pinlog", "plain", None, &["/usr/bin/plain-mcp"]);
        written_then_read(
            r"C:\Program Files\pinlog\pinlog.exe",
            "files server",
            Some(r"C:\Users\Zoë\team lock.json"),
            &[
                r"C:\Program Files\nodejs\npx.cmd",
                "-y",
                r#"say "hi""#,
                "it's",
                "--",
                "--name",
                "x",
                "--lock=y",
                "proxy",
                "",
                "日本語 ✓",
                "\u{202e}rtl",
            ],
        );
        written_then_read("/opt/pinlog", "-dash", Some("-lock"), &["--", "--"]);
        written_then_read("/opt/pinlog", "--", None, &["node", "a b.js"]);
        written_then_read("/opt/pinlog", "a=b", Some("x=y"), &["node"]);
        written_then_read("/opt/pinlog", "", Some(""), &["node"]);
    }

    #[test]
    fn a_command_pinlog_did_not_write_is_not_read_as_wrapped() {
        for (command, args) in [
            ("npx", &["-y", "server", "--", "proxy"][..]),
            ("node", &["proxy", "--name", "x", "--", "node"]),
            ("/opt/pinlogger", &["proxy", "--name", "x", "--", "node"]),
            ("pinlog", &["verify", "--", "node"]),
            ("pinlog", &["--name", "x", "proxy", "--", "node"]),
            ("pinlog", &[]),
        ] {
            assert_eq!(
                WrappedCommand::parse(command, &v(args), is_pinlog_name),
                None,
                "{command} {args:?}"
            );
        }
    }

    #[test]
    fn a_proxy_with_no_server_is_broken() {
        let parse = |args: &[&str]| WrappedCommand::parse("pinlog", &v(args), is_pinlog_name);
        for options in [&["--name", "x"][..], &["--on-drift=hold", "--name"], &[]] {
            let mut args = vec!["proxy"];
            args.extend(options);
            assert_eq!(
                parse(&args),
                Some(Err(Broken {
                    options: v(options),
                    why: Malformed::OptionsOnly
                })),
                "{args:?}"
            );
        }
        // The values of the HTTP mode's options are no command either.
        let http = [
            "--listen",
            "127.0.0.1:8080",
            "--upstream",
            "http://127.0.0.1:9/mcp",
        ];
        let Some(Err(broken)) = parse(&[&["proxy"][..], &http].concat()) else {
            panic!()
        };
        assert_eq!(broken.options, v(&http));
        assert_eq!(
            options(&broken.options),
            vec![
                (1, ProxyOption::Http("--listen")),
                (3, ProxyOption::Http("--upstream"))
            ]
        );
        assert_eq!(
            parse(&["proxy", "--name", "x", "--"]),
            Some(Err(Broken {
                options: v(&["--name", "x"]),
                why: Malformed::NoCommand
            }))
        );
        // As `pinlog proxy` reads it: `--` ends the options even where a value is expected.
        let Some(Ok(w)) = parse(&["proxy", "--name", "--", "--", "node"]) else {
            panic!()
        };
        assert_eq!(w.server, v(&["--", "node"]));
        assert_eq!(
            options(&w.options),
            vec![(1, ProxyOption::NoValue("--name"))]
        );
    }

    #[test]
    fn the_servers_command_may_follow_the_options_without_dash_dash() {
        let parse = |args: &[&str]| WrappedCommand::parse("pinlog", &v(args), is_pinlog_name);
        for (args, options, server) in [
            (
                &["proxy", "--name", "x", "server-cmd", "--its-flag"][..],
                &["--name", "x"][..],
                &["server-cmd", "--its-flag"][..],
            ),
            // Each value is the option's, even one that looks like a command; after the command
            // everything is the server's, the proxy's own options and `--` included.
            (
                &[
                    "proxy",
                    "--on-drift",
                    "hold",
                    "--lock",
                    "node",
                    "--only-locked",
                    "npx",
                    "-y",
                    "pkg",
                    "--name",
                    "y",
                    "--",
                    "z",
                ],
                &["--on-drift", "hold", "--lock", "node", "--only-locked"],
                &["npx", "-y", "pkg", "--name", "y", "--", "z"],
            ),
            (
                &["proxy", "--name=-x", "--bogus", "node"],
                &["--name=-x", "--bogus"],
                &["node"],
            ),
            (&["proxy", "uvx", "tool"], &[], &["uvx", "tool"]),
            (
                &["proxy", "--name", "x", "-", "y"],
                &["--name", "x"],
                &["-", "y"],
            ),
        ] {
            let Some(Ok(w)) = parse(args) else {
                panic!("{args:?}")
            };
            assert_eq!(
                (&w.options[..], &w.server[..]),
                (&v(options)[..], &v(server)[..])
            );
            assert!(!w.separated, "{args:?}");
            // Read back, it is written as it was found: unwrap splices at the command.
            assert_eq!(w.args(), v(args));
            assert_eq!(w.args()[w.command_at()], server[0]);
        }
        // The two spellings name the same server behind the same options.
        let bare = parse(&["proxy", "--name", "x", "node", "s.js"])
            .unwrap()
            .unwrap();
        let dashed = parse(&["proxy", "--name", "x", "--", "node", "s.js"])
            .unwrap()
            .unwrap();
        assert_eq!(
            (&bare.options, &bare.server),
            (&dashed.options, &dashed.server)
        );
        assert!(dashed.separated);
        // Wrap writes the form without `--`.
        assert_eq!(
            bare,
            WrappedCommand::new("pinlog", "x", None, v(&["node", "s.js"]))
        );
    }

    #[test]
    fn options_are_read_as_the_proxy_reads_them() {
        let o = v(&[
            "--on-drift=hold",
            "--only-locked",
            "--only-locked=true",
            "--lock",
            "l",
            "-x=y",
            "node",
            "--on-drift",
        ]);
        assert_eq!(
            options(&o),
            vec![
                (1, ProxyOption::OnDrift("hold")),
                (2, ProxyOption::OnlyLocked),
                (3, ProxyOption::Other("--only-locked=true")),
                (4, ProxyOption::Lock("l")),
                (6, ProxyOption::Other("-x=y")),
                (7, ProxyOption::Other("node")),
                (8, ProxyOption::NoValue("--on-drift")),
            ]
        );
    }

    #[test]
    fn pinlog_is_recognised_by_file_name() {
        assert!(is_pinlog_name("pinlog"));
        assert!(is_pinlog_name("/usr/local/bin/pinlog"));
        assert!(is_pinlog_name(r"C:\Tools\PINLOG.EXE"));
        assert!(!is_pinlog_name("pinlog-other"));
        assert!(!is_pinlog_name("/opt/bin/pinlogger"));
        assert!(!is_pinlog_name("npx"));
    }
}
