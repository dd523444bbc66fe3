//! A server's surface, read over one session: who it says it is, its instructions, and its tools
//! and prompts, each listing read as many times as asked.

use pinlog_core::json::Value;

use crate::client::Client;
use crate::error::WireError;
use crate::jsonrpc::{Out, UNSUPPORTED_VERSION};
use crate::listing::{self, Items};
use crate::revision::{Era, Revision};

/// What to ask for and how often to read.
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    /// The revision to ask for; `None` follows the fallback rules (`auto`).
    pub revision: Option<Revision>,
    /// How many times each listing is read; at least 1.
    pub passes: u32,
    /// The client's name and version as sent to the server.
    pub client_name: String,
    pub client_version: String,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            revision: Some(Revision::DEFAULT),
            passes: 2,
            client_name: "pinlog".into(),
            client_version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// What one session read.
#[derive(Debug, Clone, PartialEq)]
pub struct Surface {
    /// The revision the session ran under.
    pub revision: Revision,
    /// `serverInfo` as the server gave it (self-reported: evidence, not identity).
    pub server_info: Option<Value<'static>>,
    pub instructions: Option<String>,
    pub tools: Items,
    pub prompts: Items,
    /// Readings made of each listing.
    pub passes: u32,
    /// Every reading of each listing held the same items.
    pub complete: bool,
}

impl Surface {
    /// `serverInfo.name`, if the server gave one.
    pub fn reported_name(&self) -> Option<&str> {
        self.server_info
            .as_ref()?
            .as_object()?
            .get("name")?
            .as_str()
    }
}

fn client_info(o: &ProbeOptions) -> Out {
    Out::default()
        .raw("{\"name\":")
        .string(&o.client_name)
        .raw(",\"version\":")
        .string(&o.client_version)
        .raw("}")
}

/// Reads the surface of the server at the other end of `client`, in the era of `revision`.
pub async fn probe(
    client: &mut Client,
    options: &ProbeOptions,
    revision: Revision,
) -> Result<Surface, WireError> {
    match revision.era() {
        Era::Handshake => handshake(client, options, revision).await,
        Era::Stateless => stateless(client, options, revision).await,
    }
}

/// The `_meta` every stateless request carries.
fn request_meta(options: &ProbeOptions, revision: Revision) -> Vec<u8> {
    Out::default()
        .raw("{\"io.modelcontextprotocol/clientCapabilities\":{},\"io.modelcontextprotocol/clientInfo\":")
        .raw(std::str::from_utf8(&client_info(options).into_bytes()).expect("UTF-8"))
        .raw(",\"io.modelcontextprotocol/protocolVersion\":")
        .string(revision.as_str())
        .raw("}")
        .into_bytes()
}

/// What `server/discover` said.
#[derive(Debug, Clone, PartialEq)]
pub struct Discovered {
    server_info: Option<Value<'static>>,
    instructions: Option<String>,
    tools: bool,
    prompts: bool,
}

/// `server/discover`: who the server is and what it offers, in the stateless era.
pub async fn discover(
    client: &mut Client,
    options: &ProbeOptions,
    revision: Revision,
) -> Result<Discovered, WireError> {
    let mut params = b"{\"_meta\":".to_vec();
    params.extend_from_slice(&request_meta(options, revision));
    params.push(b'}');
    client.settle(revision);
    let found = match client.call("server/discover", &params).await {
        // "Unsupported protocol version" naming the revision asked for: the specification's
        // retry, once (a server may refuse a first request it cannot place).
        Err(WireError::Rpc { error, .. })
            if error.code == UNSUPPORTED_VERSION
                && error.supported.iter().any(|v| v == revision.as_str()) =>
        {
            client.call("server/discover", &params).await?
        }
        other => other?,
    };
    let found = found.as_object().ok_or_else(|| {
        WireError::Malformed("the server/discover result is not an object".into())
    })?;
    check_result_type(found, "server/discover")?;
    let supported = found
        .get("supportedVersions")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            WireError::Malformed("the server/discover result has no supportedVersions array".into())
        })?;
    if !supported
        .iter()
        .any(|v| v.as_str() == Some(revision.as_str()))
    {
        return Err(WireError::Protocol(format!(
            "the server supports {}, not {revision}",
            supported
                .iter()
                .map(|v| v.as_str().unwrap_or("?"))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    // serverInfo travels in the result's _meta; a top-level one is taken too.
    let server_info = found
        .get("_meta")
        .and_then(Value::as_object)
        .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"))
        .or_else(|| found.get("serverInfo"))
        .cloned()
        .map(Value::into_owned);
    let capabilities = found.get("capabilities").and_then(Value::as_object);
    let declares = |name: &str| capabilities.is_some_and(|c| c.get(name).is_some());
    Ok(Discovered {
        server_info,
        instructions: instructions_of(found)?,
        tools: declares("tools"),
        prompts: declares("prompts"),
    })
}

/// The stateless era: `server/discover`, then the listings, `_meta` on every request.
async fn stateless(
    client: &mut Client,
    options: &ProbeOptions,
    revision: Revision,
) -> Result<Surface, WireError> {
    let found = discover(client, options, revision).await?;
    list_stateless(client, options, revision, found).await
}

/// The listings of a server that answered `server/discover`.
pub async fn list_stateless(
    client: &mut Client,
    options: &ProbeOptions,
    revision: Revision,
    found: Discovered,
) -> Result<Surface, WireError> {
    let meta = request_meta(options, revision);
    let (tools, tools_agree) = if found.tools {
        read_passes(client, options.passes, "tools/list", "tools", Some(&meta)).await?
    } else {
        (Vec::new(), true)
    };
    let (prompts, prompts_agree) = if found.prompts {
        read_passes(
            client,
            options.passes,
            "prompts/list",
            "prompts",
            Some(&meta),
        )
        .await?
    } else {
        (Vec::new(), true)
    };
    Ok(Surface {
        revision,
        server_info: found.server_info,
        instructions: found.instructions,
        tools,
        prompts,
        passes: options.passes.max(1),
        complete: tools_agree && prompts_agree && options.passes >= 2,
    })
}

/// A stateless result is `complete` (or says nothing, as older servers do); a server asking for
/// more input cannot be listed without answering it.
pub(crate) fn check_result_type(
    result: &pinlog_core::json::Object<'_>,
    method: &str,
) -> Result<(), WireError> {
    match result.get("resultType") {
        None => Ok(()),
        Some(Value::String(t)) if t == "complete" => Ok(()),
        Some(other) => Err(WireError::Protocol(format!(
            "{method} answered with resultType {}, which a listing client cannot follow",
            match other {
                Value::String(t) => pinlog_core::render::quoted(t, 40),
                v => v.kind().to_string(),
            }
        ))),
    }
}

fn instructions_of(result: &pinlog_core::json::Object<'_>) -> Result<Option<String>, WireError> {
    match result.get("instructions") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.to_string())),
        Some(other) => Err(WireError::Malformed(format!(
            "instructions is {}, not a string",
            other.kind()
        ))),
    }
}

async fn handshake(
    client: &mut Client,
    options: &ProbeOptions,
    asked: Revision,
) -> Result<Surface, WireError> {
    let params = Out::default()
        .raw("{\"capabilities\":{},\"clientInfo\":")
        .raw(std::str::from_utf8(&client_info(options).into_bytes()).expect("UTF-8"))
        .raw(",\"protocolVersion\":")
        .string(asked.as_str())
        .raw("}")
        .into_bytes();
    let init = client.call("initialize", &params).await?;
    let init = init
        .as_object()
        .ok_or_else(|| WireError::Malformed("the initialize result is not an object".into()))?;
    let answered = init
        .get("protocolVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            WireError::Malformed("the initialize result has no protocolVersion string".into())
        })?;
    // A server may answer another revision; one this build does not know is refused, and so is
    // one of the other era, which no handshake can lead to.
    let revision: Revision = answered
        .parse()
        .map_err(|e: crate::revision::UnknownRevision| WireError::Protocol(e.to_string()))?;
    if revision.era() != Era::Handshake {
        return Err(WireError::Protocol(format!(
            "the server answered initialize with {revision}, a revision without a handshake"
        )));
    }
    client.settle(revision);
    let capabilities = init.get("capabilities").and_then(Value::as_object);
    let declares = |name: &str| capabilities.is_some_and(|c| c.get(name).is_some());
    let instructions = instructions_of(init)?;
    let server_info = init.get("serverInfo").cloned().map(Value::into_owned);
    client.notify("notifications/initialized").await?;
    let (tools, tools_agree) = if declares("tools") {
        read_passes(client, options.passes, "tools/list", "tools", None).await?
    } else {
        (Vec::new(), true)
    };
    let (prompts, prompts_agree) = if declares("prompts") {
        read_passes(client, options.passes, "prompts/list", "prompts", None).await?
    } else {
        (Vec::new(), true)
    };
    Ok(Surface {
        revision,
        server_info,
        instructions,
        tools,
        prompts,
        passes: options.passes.max(1),
        complete: tools_agree && prompts_agree && options.passes >= 2,
    })
}

/// Reads a listing `passes` times; the first reading, and whether every other one agreed.
async fn read_passes(
    client: &mut Client,
    passes: u32,
    method: &str,
    key: &str,
    meta: Option<&[u8]>,
) -> Result<(Items, bool), WireError> {
    let first = listing::read_all(client, method, key, meta).await?;
    let mut agree = true;
    for _ in 1..passes.max(1) {
        let again = listing::read_all(client, method, key, meta).await?;
        agree &= listing::same_items(&first, &again);
    }
    Ok((first, agree))
}
