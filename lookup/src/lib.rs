//! pinlog-lookup: pinlog as an MCP server (`pinlog lookup`), with read-only tools that answer from a verified
//! local copy of the public log and from this machine's pin store (docs/LOOKUP.md).
//!
//! Its answers reach a model unread, so they never hold text someone else wrote: see [`safe`].

pub mod history;
pub mod http;
pub mod safe;
pub mod serve;
pub mod tools;

pub use safe::safe_name;
pub use tools::{server, LookupTools, Pins};
