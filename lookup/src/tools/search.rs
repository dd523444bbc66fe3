//! `pinlog_search_servers`: the servers the verified log holds whose identity holds a fragment,
//! as exact identities to ask `pinlog_server_status` about. The fragment is not echoed.

use pinlog_core::json::Object;
use pinlog_core::ServerId;
use pinlog_mcp::server::ToolResult;

use super::answer::{answer, invalid, name_members, obj, s, string_arg};
use super::status::{log_not_configured, log_out, log_problem};
use super::LookupTools;
use crate::safe::Out;

/// The most servers one answer lists.
pub const MAX_FOUND: usize = 25;
/// The most a not-found answer suggests.
pub const MAX_SUGGESTED: usize = 5;

impl LookupTools {
    pub(super) fn search_servers(&self, arguments: &Object<'_>) -> ToolResult {
        let fragment = match string_arg(arguments, &["query"], "query") {
            Ok(Some(v)) => v,
            Ok(None) => return invalid("give a part of the server's name, e.g. memory"),
            Err(e) => return e,
        };
        let index = match self.index() {
            None => return log_not_configured(),
            Some(Ok(i)) => i,
            Some(Err(problem)) => return log_problem(problem),
        };
        let found = index.search(fragment);
        let mut m = vec![
            ("status", s("ok")),
            ("log", log_out(&index)),
            ("matches", Out::Num(found.len() as u64)),
            ("servers", identities(&found, MAX_FOUND)),
            ("more", Out::Bool(found.len() > MAX_FOUND)),
        ];
        m.push((
            "message",
            s(match (found.is_empty(), found.len() > MAX_FOUND) {
                (true, _) => {
                    "No server in the log has that in its identity; try a shorter part of its \
                     name."
                }
                (false, true) => {
                    "The best matches, exact identities first; more servers match than are \
                     listed: ask with a longer part of the name."
                }
                (false, false) => {
                    "Every match, exact identities first; pinlog_server_status tells one's \
                     history."
                }
            }),
        ));
        m.push(("servers_in_log", Out::Num(index.server_count() as u64)));
        answer(obj(m), false)
    }
}

/// The first `max` of `ids`, each `{"server": …}` (and `server_name_altered` when it had to be).
pub(super) fn identities(ids: &[&ServerId], max: usize) -> Out {
    Out::Arr(
        ids.iter()
            .take(max)
            .map(|id| obj(name_members("server", "server_name_altered", id.as_str())))
            .collect(),
    )
}
