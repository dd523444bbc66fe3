//! Tools and prompts by name: which listing, an item's name, a name listed twice, and the approved
//! digests a listing is checked against between full comparisons.

use std::collections::HashMap;

use pinlog_core::digest::value_digest;
use pinlog_core::lockfile::{Lockfile, Pin};
use pinlog_core::{Digest, Value};

use super::Purpose;
use crate::check::Served;

/// The approved server's tool and prompt digests by name: what a listing is checked against
/// between full comparisons.
pub(super) struct Digests {
    tools: HashMap<String, Digest>,
    prompts: HashMap<String, Digest>,
}

impl Digests {
    pub(super) fn of(lock: &Lockfile<'_>, id: &str) -> Digests {
        // An undecidable pin has no digest, so nothing matches it here: the full check decides.
        let map = |pins: &[Pin<'_>]| {
            pins.iter()
                .filter_map(|p| p.digest.as_ref().ok().map(|d| (p.name.clone(), *d)))
                .collect()
        };
        let server = lock.server(id);
        Digests {
            tools: server.map(|s| map(&s.tools)).unwrap_or_default(),
            prompts: server
                .and_then(|s| s.prompts.as_deref())
                .map(map)
                .unwrap_or_default(),
        }
    }

    pub(super) fn all_approved(&self, item: Item, items: &[Value<'_>]) -> bool {
        let map = match item {
            Item::Tools => &self.tools,
            Item::Prompts => &self.prompts,
        };
        items.iter().all(|i| {
            map.get(item_name(i))
                .is_some_and(|d| value_digest(i).is_ok_and(|served| served == *d))
        })
    }
}

/// Which listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Item {
    Tools,
    Prompts,
}

impl Item {
    /// The listing a purpose of the proxy's reads.
    pub(super) fn of(purpose: Purpose) -> Item {
        match purpose {
            Purpose::Prompts => Item::Prompts,
            _ => Item::Tools,
        }
    }

    pub(super) fn method(self) -> &'static str {
        match self {
            Item::Tools => "tools/list",
            Item::Prompts => "prompts/list",
        }
    }

    pub(super) fn member(self) -> &'static str {
        match self {
            Item::Tools => "tools",
            Item::Prompts => "prompts",
        }
    }
}

pub(super) fn item_name<'v>(item: &'v Value<'_>) -> &'v str {
    item.as_object()
        .and_then(|o| o.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// A name two tools (or two prompts) share, equal after NFC, or an item without a string name.
pub(super) fn duplicate_name(served: &Served) -> Option<String> {
    for list in [&served.tools, &served.prompts] {
        let mut seen = std::collections::HashSet::new();
        for item in list {
            let name = item
                .as_object()
                .and_then(|o| o.get("name"))
                .and_then(Value::as_str);
            let Some(name) = name else {
                return Some(String::new());
            };
            if !seen.insert(pinlog_core::format::nfc(name)) {
                return Some(name.to_string());
            }
        }
    }
    None
}
