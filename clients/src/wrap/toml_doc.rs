//! Codex's `config.toml`: the `[mcp_servers.NAME]` tables. `toml_edit` reads the file and says
//! where each value is; the edit itself is a splice of the `command` and `args` values, so every
//! other byte (comments, blank lines, line endings, quoting) is left exactly as it was. The
//! inserted arguments take the layout of the array they go into.

use toml_edit::{Document, Item, TableLike, Value};

use super::command::{self, Field, Proxy, UnwrapPlan, View, WrapPlan};
use super::splice::{apply, array_separator, Splice};
use super::{Op, Outcome, Planned, ServerReport};
use crate::wrapped::WrappedCommand;

fn parse(src: &[u8]) -> Result<Document<String>, String> {
    let text = std::str::from_utf8(src).map_err(|e| {
        format!(
            "not UTF-8 (at byte {}); TOML must be UTF-8",
            e.valid_up_to()
        )
    })?;
    Document::parse(text.to_string()).map_err(|e| {
        let msg = e.message().trim_end().replace('\n', " ");
        match e.span() {
            Some(span) => {
                let upto = &text[..span.start.min(text.len())];
                let line = upto.matches('\n').count() + 1;
                let column = upto[upto.rfind('\n').map_or(0, |p| p + 1)..]
                    .chars()
                    .count()
                    + 1;
                format!("line {line}, column {column}: {msg}")
            }
            None => msg,
        }
    })
}

/// A TOML basic string: `"`, with `\` and `"` escaped, and every control character as an
/// escape.
fn toml_string(s: &str) -> Vec<u8> {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out.into_bytes()
}

fn view(t: &dyn TableLike) -> View {
    let mut remote = command::URL_KEYS.iter().any(|k| t.contains_key(k));
    let kind = t
        .get("type")
        .or_else(|| t.get("transport"))
        .and_then(Item::as_str)
        .map(str::to_string);
    remote |= kind.as_deref().is_some_and(command::is_remote_type);
    let command = match t.get("command") {
        None => Field::Absent,
        Some(i) => i.as_str().map_or(Field::Bad, |s| Field::Ok(s.to_string())),
    };
    let args = match t.get("args") {
        None => Field::Absent,
        Some(i) => match i.as_array() {
            Some(a) => a
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .map_or(Field::Bad, Field::Ok),
            None => Field::Bad,
        },
    };
    View {
        remote,
        kind,
        command,
        args,
    }
}

/// The servers: name, the entry as a table (`None` when it is not one), whether it is inline.
fn servers(doc: &Document<String>) -> Vec<(String, Option<&dyn TableLike>, bool)> {
    let Some(map) = doc.get("mcp_servers").and_then(Item::as_table_like) else {
        return Vec::new();
    };
    map.iter()
        .map(|(name, item)| {
            let inline = matches!(item, Item::Value(Value::InlineTable(_)));
            (name.to_string(), item.as_table_like(), inline)
        })
        .collect()
}

/// Every server in the file, and what wrap would do with it.
pub fn plans(src: &[u8], proxy: &Proxy) -> Result<Vec<Planned>, String> {
    let doc = parse(src)?;
    Ok(servers(&doc)
        .into_iter()
        .map(|(name, t, _)| {
            let (plan, argv) = match t {
                Some(t) => {
                    let v = view(t);
                    (command::plan_wrap(&v, proxy), v.argv())
                }
                None => (WrapPlan::Skip("its entry is not a table".into()), None),
            };
            Planned {
                scope: None,
                name,
                plan,
                argv,
            }
        })
        .collect())
}

fn span(v: &Value) -> std::ops::Range<usize> {
    v.span().expect("a parsed document has spans")
}

/// The `args = [...]` line to add after the `command` line of a standard table: the same key
/// path and indentation, `args` in place of `command`.
fn args_line(src: &[u8], command_start: usize, items: &[u8]) -> Vec<u8> {
    let line_start = src[..command_start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let head = &src[line_start..command_start];
    let eq = head.iter().rposition(|&b| b == b'=').unwrap_or(0);
    let key = head[..eq].trim_ascii_end();
    let indent_len = key
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t'))
        .unwrap_or(key.len());
    let mut line = Vec::new();
    let mut replaced = false;
    for (written, args) in [
        (&b"command"[..], &b"args"[..]),
        (b"\"command\"", b"\"args\""),
        (b"'command'", b"'args'"),
    ] {
        if let Some(path) = key.strip_suffix(written) {
            line.extend_from_slice(path);
            line.extend_from_slice(args);
            replaced = true;
            break;
        }
    }
    if !replaced {
        line.extend_from_slice(&key[..indent_len]);
        line.extend_from_slice(b"args");
    }
    line.extend_from_slice(b" = [");
    line.extend_from_slice(items);
    line.push(b']');
    line
}

/// Writes `wrapped` over the entry: its program over `command`, its prefix before the first of
/// `args`; the server's command keeps its bytes as the file has them.
fn wrap_splices(
    src: &[u8],
    t: &dyn TableLike,
    inline: bool,
    wrapped: &WrappedCommand,
) -> Vec<Splice> {
    let command = span(
        t.get("command")
            .and_then(Item::as_value)
            .expect("planned with a command"),
    );
    let mut items: Vec<Vec<u8>> = wrapped.prefix().iter().map(|s| toml_string(s)).collect();
    items.push(src[command.clone()].to_vec());
    let mut splices = vec![Splice {
        start: command.start,
        end: command.end,
        text: toml_string(&wrapped.program),
    }];
    match t.get("args").and_then(Item::as_array) {
        Some(args) => {
            let whole = args.span().expect("a parsed document has spans");
            if let Some(first) = args.get(0) {
                let between = args
                    .get(1)
                    .map(|second| &src[span(first).end..span(second).start]);
                let first = span(first).start;
                let sep = array_separator(&src[whole.start + 1..first], between);
                let mut text = Vec::new();
                for item in items {
                    text.extend_from_slice(&item);
                    text.extend_from_slice(&sep);
                }
                splices.push(Splice {
                    start: first,
                    end: first,
                    text,
                });
            } else {
                splices.push(Splice {
                    start: whole.start + 1,
                    end: whole.start + 1,
                    text: items.join(b", ".as_slice()),
                });
            }
        }
        None if inline => {
            let mut text = b", args = [".to_vec();
            text.extend(items.join(b", ".as_slice()));
            text.push(b']');
            splices.push(Splice {
                start: command.end,
                end: command.end,
                text,
            });
        }
        None => {
            let line = args_line(src, command.start, &items.join(b", ".as_slice()));
            let text;
            let at;
            match src[command.end..].iter().position(|&b| b == b'\n') {
                Some(p) => {
                    at = command.end + p + 1;
                    let crlf = at >= 2 && src[at - 2] == b'\r';
                    text = [
                        line,
                        if crlf {
                            b"\r\n".to_vec()
                        } else {
                            b"\n".to_vec()
                        },
                    ]
                    .concat();
                }
                None => {
                    at = src.len();
                    text = [b"\n".to_vec(), line].concat();
                }
            }
            splices.push(Splice {
                start: at,
                end: at,
                text,
            });
        }
    }
    splices
}

/// Takes `wrapped`'s prefix off the entry: the server's command over `command`, its arguments
/// alone left in `args`.
fn unwrap_splices(src: &[u8], t: &dyn TableLike, wrapped: &WrappedCommand) -> Vec<Splice> {
    let at = wrapped.command_at();
    let command = span(
        t.get("command")
            .and_then(Item::as_value)
            .expect("planned with a command"),
    );
    let args = t
        .get("args")
        .and_then(Item::as_array)
        .expect("planned with args");
    let items: Vec<_> = args.iter().map(span).collect();
    let inner = items[at].clone();
    let end = match items.get(at + 1) {
        Some(next) => next.start,
        None if args.trailing_comma() => args.trailing().span().map_or(inner.end, |s| s.start),
        None => inner.end,
    };
    vec![
        Splice {
            start: command.start,
            end: command.end,
            text: src[inner.clone()].to_vec(),
        },
        Splice {
            start: items[0].start,
            end,
            text: Vec::new(),
        },
    ]
}

/// Wraps or unwraps every local server in the file; the new bytes (the same when nothing
/// changed) and what was done with each server.
pub fn edit(src: &[u8], proxy: &Proxy, op: Op) -> Result<(Vec<ServerReport>, Vec<u8>), String> {
    let doc = parse(src)?;
    let mut reports = Vec::new();
    let mut splices = Vec::new();
    for (name, t, inline) in servers(&doc) {
        let Some(t) = t else {
            reports.push(ServerReport::new(
                None,
                name,
                Outcome::Skipped("its entry is not a table".into()),
                None,
            ));
            continue;
        };
        let v = view(t);
        let (outcome, unpinned) = match op {
            Op::Wrap => match command::plan_wrap(&v, proxy) {
                WrapPlan::Remote => (Outcome::Remote, None),
                WrapPlan::Skip(why) => (Outcome::Skipped(why), None),
                WrapPlan::Already(wrapped) => {
                    (Outcome::AlreadyWrapped, command::unpinned(&wrapped.server))
                }
                WrapPlan::Wrap { argv } => {
                    let wrapped = proxy.wrap(&name, argv);
                    splices.extend(wrap_splices(src, t, inline, &wrapped));
                    (Outcome::Wrapped, command::unpinned(&wrapped.server))
                }
            },
            Op::Unwrap => match command::plan_unwrap(&v, proxy) {
                UnwrapPlan::Remote => (Outcome::Remote, None),
                UnwrapPlan::Skip(why) => (Outcome::Skipped(why), None),
                UnwrapPlan::NotWrapped { argv } => (Outcome::NotWrapped, command::unpinned(&argv)),
                UnwrapPlan::Cannot(why) => (Outcome::CannotUnwrap(why), None),
                UnwrapPlan::Unwrap(wrapped) => {
                    splices.extend(unwrap_splices(src, t, &wrapped));
                    (Outcome::Unwrapped, command::unpinned(&wrapped.server))
                }
            },
        };
        reports.push(ServerReport::new(None, name, outcome, unpinned));
    }
    Ok((reports, apply(src, splices)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxy() -> Proxy {
        Proxy {
            program: "pinlog".into(),
            lock: None,
            others: Vec::new(),
        }
    }

    fn wrap(src: &str) -> String {
        let (_, out) = edit(src.as_bytes(), &proxy(), Op::Wrap).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn tables_inline_tables_and_dotted_keys() {
        assert_eq!(
            wrap("[mcp_servers.a]\ncommand = \"x\"\nenv = { A = \"1\" }\n"),
            "[mcp_servers.a]\ncommand = \"pinlog\"\nargs = [\"proxy\", \"--name\", \"a\", \"x\"]\nenv = { A = \"1\" }\n"
        );
        assert_eq!(
            wrap("mcp_servers = { a = { command = \"x\" } }"),
            "mcp_servers = { a = { command = \"pinlog\", args = [\"proxy\", \"--name\", \"a\", \"x\"] } }"
        );
        assert_eq!(
            wrap("[mcp_servers]\na.command = \"x\" # c"),
            "[mcp_servers]\na.command = \"pinlog\" # c\na.args = [\"proxy\", \"--name\", \"a\", \"x\"]"
        );
        assert_eq!(
            wrap("[mcp_servers.a]\ncommand = \"x\"\nargs = [ \"y\", ] # c\n"),
            "[mcp_servers.a]\ncommand = \"pinlog\"\nargs = [ \"proxy\", \"--name\", \"a\", \"x\", \"y\", ] # c\n"
        );
        let (_, back) = edit(
            wrap("[mcp_servers.a]\ncommand = \"x\"\nargs = [\n  \"y\",\n]\n").as_bytes(),
            &proxy(),
            Op::Unwrap,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(back).unwrap(),
            "[mcp_servers.a]\ncommand = \"x\"\nargs = [\n  \"y\",\n]\n"
        );
        assert_eq!(toml_string("a\"\\\u{1}é"), b"\"a\\\"\\\\\\u0001\xc3\xa9\"");
        assert!(parse(b"[a\nb = 1")
            .unwrap_err()
            .starts_with("line 1, column"));
    }
}
