//! The lookup tools: read-only answers about a public server's history (from a verified local
//! copy of the log), this machine's pins and pending changes, and how to protect a client.
//!
//! Every answer is an [`Out`](crate::safe::Out): names through `safe_name`, dates, counts,
//! digests, keys and fixed labels, and pinlog's own text. No description, schema, instruction or
//! other text a server wrote is ever returned: a tool's answer goes straight to the model. Nor is
//! the question echoed: every name in an answer is one the log or the pin store holds.

mod answer;
mod pins;
mod protect;
mod public;
mod search;
mod status;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pinlog_core::json::Object;
use pinlog_mcp::server::{CallError, Json, McpServer, ServerInfo, ToolDef, ToolResult, Tools};

use pinlog_verifier::public_log::PublicLog;

use crate::history::{self, LogIndex, LogProblem};
use crate::safe::SiteUrl;
use pinlog_clients::guide as clients;

pub const SERVER_STATUS: &str = "pinlog_server_status";
pub const SEARCH_SERVERS: &str = "pinlog_search_servers";
pub const MY_SERVERS: &str = "pinlog_my_servers";
pub const CHANGE_SUMMARY: &str = "pinlog_change_summary";
pub const HOW_TO_PROTECT: &str = "pinlog_how_to_protect";
pub const PIN_VS_PUBLIC_RECORD: &str = "pinlog_pin_vs_public_record";

/// Where this machine's pins are, for the tools that read them.
#[derive(Debug, Clone)]
pub enum Pins {
    /// The pin store's home directory (`Store::home()`).
    Home(PathBuf),
    /// No data directory could be found.
    NoHome,
    /// Not offered (Streamable HTTP: this machine's pins are never served to a network peer);
    /// the tools that read pins are not listed.
    Off,
}

/// The lookup tools' state: where the log and the pins are, and the last verified index.
pub struct LookupTools {
    log: Option<PublicLog>,
    pins: Pins,
    index: Mutex<Option<Arc<LogIndex>>>,
    /// Where the log's site is, to link a server's page.
    site: Option<SiteUrl>,
}

fn schema(properties: Json, required: &[&str]) -> Json {
    Json::obj([
        ("type", Json::str("object")),
        ("properties", properties),
        ("required", Json::strs(required.iter().copied())),
        ("additionalProperties", Json::Bool(false)),
    ])
}

fn string_property(description: &str, max: i64) -> Json {
    Json::obj([
        ("type", Json::str("string")),
        ("minLength", Json::Int(1)),
        ("maxLength", Json::Int(max)),
        ("description", Json::str(description)),
    ])
}

impl LookupTools {
    pub fn new(log: Option<PublicLog>, pins: Pins) -> LookupTools {
        LookupTools {
            log,
            pins,
            index: Mutex::new(None),
            site: None,
        }
    }

    /// Links each server's page on the log's site at `site`.
    pub fn with_site(mut self, site: Option<SiteUrl>) -> LookupTools {
        self.site = site;
        self
    }

    /// Starts from a log already verified, if there is one.
    pub fn opened(self, index: Option<LogIndex>) -> LookupTools {
        *self.index.lock().unwrap_or_else(|e| e.into_inner()) = index.map(Arc::new);
        self
    }

    /// Whether the tools that read this machine's pins are offered.
    pub fn offers_pins(&self) -> bool {
        !matches!(self.pins, Pins::Off)
    }

    /// Whether the tool that compares a pin with the public record is offered: it needs both.
    pub fn offers_pin_vs_public(&self) -> bool {
        self.offers_pins() && self.log.is_some()
    }

    /// The verified index of the log: the one verified last, while the log still serves the
    /// checkpoint it verified; else the log is verified and indexed again. `None` when no log is
    /// configured.
    pub fn index(&self) -> Option<Result<Arc<LogIndex>, LogProblem>> {
        let config = self.log.as_ref()?;
        let mut cached = self.index.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(index) = cached.as_ref() {
            if index.record.served_note().as_deref() == Some(index.record.note()) {
                return Some(Ok(index.clone()));
            }
        }
        *cached = None;
        Some(history::load(config).map(|index| {
            let index = Arc::new(index);
            *cached = Some(index.clone());
            index
        }))
    }
}

impl Tools for LookupTools {
    fn list(&self) -> Vec<ToolDef> {
        let mut tools = vec![ToolDef {
            name: SERVER_STATUS.into(),
            title: Some("Public server history".into()),
            description: "Whether a public MCP server's surface (its tools, prompts and \
                instructions) changed, when, and how many tools it has, from a local copy of \
                pinlog's public log verified against its pinned key. Answers hold dates, counts, \
                digests and fixed change labels only, never the server's own text."
                .into(),
            input_schema: schema(
                Json::obj([(
                    "server",
                    string_property(
                        "The server's identity in the log, kind:name (npm:@scope/name, \
                         pypi:name, oci:image, remote:URL, registry:name), or its name alone",
                        520,
                    ),
                )]),
                &["server"],
            ),
            read_only: true,
        }];
        tools.push(ToolDef {
            name: SEARCH_SERVERS.into(),
            title: Some("Search the public log".into()),
            description: "The servers pinlog's public log (a local copy verified against its \
                pinned key) holds whose identity contains a part of a name, ignoring case \
                (memory, git, @scope/): their exact identities (kind:name), best matches first, \
                at most 25, and whether more match. Ask pinlog_server_status about one."
                .into(),
            input_schema: schema(
                Json::obj([(
                    "query",
                    string_property("A part of the server's name, e.g. memory", 200),
                )]),
                &["query"],
            ),
            read_only: true,
        });
        if self.offers_pins() {
            tools.push(ToolDef {
                name: MY_SERVERS.into(),
                title: Some("Pinned servers on this machine".into()),
                description: "The MCP servers pinned on this machine by pinlog's proxy: key, \
                    label, tool and prompt counts, when pinned, and whether a change waits for \
                    review (with its fixed change labels)."
                    .into(),
                input_schema: schema(Json::obj([]), &[]),
                read_only: true,
            });
            tools.push(ToolDef {
                name: CHANGE_SUMMARY.into(),
                title: Some("Pending change summary".into()),
                description: "What kind of change waits for review on a pinned server: fixed \
                    change labels (new-instruction, new-field, wording-only, …) and counts of \
                    tools and prompts changed, added and removed. Never the changed text; the \
                    user reviews and approves in a terminal."
                    .into(),
                input_schema: schema(
                    Json::obj([(
                        "server",
                        string_property(
                            "The pinned server: its key, a key prefix of 6 hex digits or more, \
                             or its label",
                            200,
                        ),
                    )]),
                    &["server"],
                ),
                read_only: true,
            });
        }
        if self.offers_pin_vs_public() {
            tools.push(ToolDef {
                name: PIN_VS_PUBLIC_RECORD.into(),
                title: Some("Pin against the public record".into()),
                description: "Whether a server pinned on this machine matches what pinlog's \
                    public log (a local copy, verified against its pinned key) saw of the \
                    server's public identity: matches, differs from, or not in the public \
                    record, with the log's entry, since when, and for a difference fixed change \
                    labels and counts. Never the server's own text."
                    .into(),
                input_schema: schema(
                    Json::obj([
                        (
                            "pin",
                            string_property(
                                "The pinned server: its key, a key prefix of 6 hex digits or \
                                 more, or its label",
                                200,
                            ),
                        ),
                        (
                            "identity",
                            string_property(
                                "The server's public identity to compare the pin with, \
                                 kind:name (npm:@scope/name, pypi:name, oci:image, remote:URL, \
                                 registry:name)",
                                520,
                            ),
                        ),
                        (
                            "version",
                            string_property(
                                "The package version this machine runs, if known: the log's \
                                 latest entry observed at it is compared, else its latest entry",
                                200,
                            ),
                        ),
                    ]),
                    &["pin", "identity"],
                ),
                read_only: true,
            });
        }
        tools.push(ToolDef {
            name: HOW_TO_PROTECT.into(),
            title: Some("How to protect a client".into()),
            description: "How to put pinlog's proxy in front of a client's local MCP servers: \
                the configuration file, the `pinlog wrap` command, and the snippet to write by \
                hand."
                .into(),
            input_schema: schema(
                Json::obj([(
                    "client",
                    Json::obj([
                        ("type", Json::str("string")),
                        ("enum", Json::strs(clients::names())),
                        ("description", Json::str("The MCP client")),
                    ]),
                )]),
                &["client"],
            ),
            read_only: true,
        });
        tools
    }

    fn call(&self, name: &str, arguments: &Object<'_>) -> Result<ToolResult, CallError> {
        match name {
            SERVER_STATUS => Ok(self.server_status(arguments)),
            SEARCH_SERVERS => Ok(self.search_servers(arguments)),
            MY_SERVERS if self.offers_pins() => Ok(self.my_servers(arguments)),
            CHANGE_SUMMARY if self.offers_pins() => Ok(self.change_summary(arguments)),
            PIN_VS_PUBLIC_RECORD if self.offers_pin_vs_public() => {
                Ok(self.pin_vs_public_record(arguments))
            }
            HOW_TO_PROTECT => Ok(self.how_to_protect(arguments)),
            _ => Err(CallError::UnknownTool),
        }
    }
}

/// The lookup server: its tools and who it says it is.
pub fn server(tools: LookupTools) -> McpServer<LookupTools> {
    let instructions = if tools.offers_pin_vs_public() {
        "pinlog lookup: read-only facts about MCP servers. pinlog_server_status and \
         pinlog_search_servers answer from a verified local copy of pinlog's public log; \
         pinlog_my_servers and pinlog_change_summary from this machine's pin store; \
         pinlog_pin_vs_public_record compares a pin with the public log; pinlog_how_to_protect \
         says how to set pinlog up in a client. Answers hold names restricted to a safe \
         character set, dates, counts, digests and fixed labels only: never a server's own \
         descriptions or pending definitions. Nothing here approves or changes anything: the \
         user reviews and approves changes in a terminal."
    } else if tools.offers_pins() {
        "pinlog lookup: read-only facts about MCP servers. pinlog_server_status and \
         pinlog_search_servers answer from a verified local copy of pinlog's public log; \
         pinlog_my_servers and pinlog_change_summary from this machine's pin store; \
         pinlog_how_to_protect says how to set pinlog up in a client. Answers hold names \
         restricted to a safe character set, dates, counts, digests and fixed labels only: never \
         a server's own descriptions or pending definitions. Nothing here approves or changes \
         anything: the user reviews and approves changes in a terminal."
    } else {
        "pinlog lookup: read-only facts about public MCP servers. pinlog_server_status and \
         pinlog_search_servers answer from a verified local copy of pinlog's public log; \
         pinlog_how_to_protect says how to set pinlog up in a client. Answers hold names \
         restricted to a safe character set, dates, counts, digests and fixed labels only: never \
         a server's own text."
    };
    McpServer::new(
        tools,
        ServerInfo {
            name: "pinlog-lookup".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            title: Some("pinlog lookup".into()),
            instructions: Some(instructions.into()),
        },
    )
}
