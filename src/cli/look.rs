//! How a server is looked at, as `probe`, `export` and `crawl` take it: the protocol revision, the
//! passes, and the caps on time and size.

use clap::Args;

/// How a server is looked at: by `probe` and by `export`.
#[derive(Args)]
pub struct LookArgs {
    /// The protocol revision to ask for: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25,
    /// 2026-07-28, or auto (try the stateless era, fall back to the handshake as the
    /// specification says)
    #[arg(long, value_name = "REV", default_value = "2025-11-25", value_parser = parse_protocol)]
    pub protocol: Protocol,
    /// How many times each listing is read; the manifest is complete only if all agree
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=10))]
    pub passes: u32,
    /// The longest wait for one answer, in milliseconds (a server's whole look gets four times
    /// this)
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub timeout_ms: u64,
    /// The longest single message a server may send, in bytes
    #[arg(long, value_name = "BYTES", default_value_t = 16 << 20)]
    pub max_message_bytes: usize,
    /// All bytes one server may send in one look
    #[arg(long, value_name = "BYTES", default_value_t = 256 << 20)]
    pub max_total_bytes: u64,
    /// The most items one listing may hold
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    pub max_items: usize,
}

impl LookArgs {
    pub fn options(&self) -> pinlog_mcp::surface::ProbeOptions {
        pinlog_mcp::surface::ProbeOptions {
            revision: self.protocol.0,
            passes: self.passes,
            ..pinlog_mcp::surface::ProbeOptions::default()
        }
    }

    pub fn caps(&self) -> pinlog_mcp::Caps {
        pinlog_mcp::Caps {
            call_ms: self.timeout_ms,
            session_ms: self.timeout_ms.saturating_mul(4),
            message_bytes: self.max_message_bytes,
            total_bytes: self.max_total_bytes,
            max_items: self.max_items,
            ..pinlog_mcp::Caps::default()
        }
    }
}

/// A revision to ask for, or none for auto.
#[derive(Clone, Copy)]
pub struct Protocol(pub Option<pinlog_mcp::revision::Revision>);

fn parse_protocol(s: &str) -> Result<Protocol, String> {
    match s {
        "auto" => Ok(Protocol(None)),
        rev => rev
            .parse()
            .map(|r| Protocol(Some(r)))
            .map_err(|e| format!("{e}, or auto")),
    }
}
