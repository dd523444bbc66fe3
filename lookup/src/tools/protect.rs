//! `pinlog_how_to_protect`: how to put the proxy in front of a client's local servers.

use pinlog_clients::guide as clients;
use pinlog_core::json::Object;
use pinlog_mcp::server::ToolResult;

use super::answer::{answer, invalid, obj, s, string_arg};
use super::LookupTools;
use crate::safe::{Out, SafeStr};

impl LookupTools {
    pub(super) fn how_to_protect(&self, arguments: &Object<'_>) -> ToolResult {
        let id = match string_arg(arguments, &["client"], "client") {
            Ok(Some(v)) => v,
            Ok(None) => return invalid("give the client: one of the ids in the input schema"),
            Err(e) => return e,
        };
        let Some(c) = clients::find(id) else {
            let mut m = vec![("status", s("unknown-client"))];
            m.push((
                "clients",
                Out::strs(clients::ids().map(SafeStr::fixed).collect()),
            ));
            return answer(obj(m), true);
        };
        let mut m =
            vec![
            ("status", s("ok")),
            ("client", s(c.id)),
            ("name", s(c.name)),
            (
                "wrap_all",
                Out::Str(SafeStr::format(
                    "pinlog wrap --client {}",
                    &[&SafeStr::fixed(c.id)],
                )),
            ),
            (
                "wrap_all_note",
                s("Run in a terminal: it backs the file up and puts the proxy in front of \
                   every local (command) server of this client (`--dry-run` shows the change \
                   and writes nothing); running it twice changes nothing. Remote (URL) servers \
                   are left as they are. `--project` also wraps the .mcp.json of the current \
                   directory. `pinlog unwrap` undoes it."),
            ),
            (
                "unwrap",
                Out::Str(SafeStr::format(
                    "pinlog unwrap --client {}",
                    &[&SafeStr::fixed(c.id)],
                )),
            ),
            (
                "config_files",
                Out::strs(c.config_files.iter().map(|f| SafeStr::fixed(f)).collect()),
            ),
            ("servers_key", s(c.servers_key)),
            ("format", s(c.format)),
            ("snippet", s(c.snippet)),
            (
                "snippet_note",
                s("By hand: put `pinlog proxy --name NAME` in front of the server's command, \
                   where NAME is what you call the server and COMMAND ARG its command and \
                   arguments as they were (with `--` before COMMAND only if it starts with \
                   `-`)."),
            ),
        ];
        if let Some(alt) = c.alternative {
            m.push(("command_line", s(alt)));
        }
        m.push(("after", s(c.after)));
        m.push((
            "what_happens",
            s(
                "The first session pins what the server serves (its tools, prompts and \
               instructions). Every later session is held until the server serves exactly what \
               was pinned; a change blocks the session and waits for the user's review in a \
               terminal (`pinlog review KEY`, `pinlog approve KEY`). `pinlog pins` lists what is \
               pinned. A pin is not a safety rating: a server malicious from its first use is \
               pinned as it is.",
            ),
        ));
        answer(obj(m), false)
    }
}
