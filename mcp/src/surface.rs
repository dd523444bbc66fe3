//! A server's surface, read over one session: who it says it is, its instructions, and its tools
//! and prompts, each listing read as many times as asked.

use pinlog_core::json::Value;

use crate::client::Client;
use crate::error::WireError;
use crate::jsonrpc::Out;
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

/// Reads the surface of the server at the other end of `client`.
pub async fn probe(client: &mut Client, options: &ProbeOptions) -> Result<Surface, WireError> {
    let revision = options.revision.unwrap_or(Revision::DEFAULT);
    match revision.era() {
        Era::Handshake => handshake(client, options, revision).await,
        Era::Stateless => Err(WireError::Protocol(
            "the 2026-07-28 era is not spoken by this build yet".into(),
        )),
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
    let capabilities = init.get("capabilities").and_then(Value::as_object);
    let declares = |name: &str| capabilities.is_some_and(|c| c.get(name).is_some());
    let instructions = match init.get("instructions") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.to_string()),
        Some(other) => {
            return Err(WireError::Malformed(format!(
                "instructions is {}, not a string",
                other.kind()
            )))
        }
    };
    let server_info = init.get("serverInfo").cloned().map(Value::into_owned);
    client.notify("notifications/initialized").await?;
    let (tools, tools_agree) = if declares("tools") {
        read_passes(client, options.passes, "tools/list", "tools").await?
    } else {
        (Vec::new(), true)
    };
    let (prompts, prompts_agree) = if declares("prompts") {
        read_passes(client, options.passes, "prompts/list", "prompts").await?
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
) -> Result<(Items, bool), WireError> {
    let first = listing::read_all(client, method, key, None).await?;
    let mut agree = true;
    for _ in 1..passes.max(1) {
        let again = listing::read_all(client, method, key, None).await?;
        agree &= listing::same_items(&first, &again);
    }
    Ok((first, agree))
}
