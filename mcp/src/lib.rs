//! pinlog-mcp: the MCP wire, JSON-RPC over stdio and HTTP in both protocol eras.
//!
//! Everything a server sends is read with the core strict reader and held to caps on size and
//! time. The client lists; it never calls a tool.

pub mod caps;
pub mod client;
pub mod error;
pub mod guard;
pub mod http;
pub mod jsonrpc;
pub mod lines;
pub mod listing;
pub mod loopback;
pub mod message;
pub mod noise;
pub mod probe;
pub mod revision;
pub mod server;
pub mod sse_legacy;
pub mod stdio;
pub mod surface;

pub use caps::Caps;
pub use error::WireError;
pub use guard::NetGuard;
