//! Bounds on what a server may make the client read or wait for.

/// Every cap is configurable; the defaults suit a public crawler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// The longest single message, in bytes.
    pub message_bytes: usize,
    /// All bytes read from one server in one session.
    pub total_bytes: u64,
    /// The longest wait for one answer, in milliseconds.
    pub call_ms: u64,
    /// The longest a whole session may take, in milliseconds.
    pub session_ms: u64,
    /// Standard error kept for the report, in bytes.
    pub stderr_bytes: usize,
    /// The most pages one listing may have.
    pub max_pages: usize,
    /// The most items one listing may have: bytes on the wire are capped, but a value read
    /// takes more memory than its text, tiny items most of all.
    pub max_items: usize,
    /// How long a stdio server gets after its input closes, and again after SIGTERM.
    pub shutdown_grace_ms: u64,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            message_bytes: 16 << 20,
            total_bytes: 256 << 20,
            call_ms: 30_000,
            session_ms: 120_000,
            stderr_bytes: 64 << 10,
            max_pages: 1000,
            max_items: 100_000,
            shutdown_grace_ms: 2_000,
        }
    }
}
