//! What a transport and the pins see of a session: the actions it asks for, how it stands, the
//! error codes it answers with, and the pins it reads and records to.

/// JSON-RPC error codes the proxy answers with (docs/PROXY.md, a contract).
pub mod code {
    /// The server's surface departed from what was approved: the session is blocked.
    pub const BLOCKED: i64 = -32090;
    /// This tool or prompt changed since it was approved, or is new: it is held for review.
    pub const HELD: i64 = -32091;
    /// The server could not be checked, or answered with something that is not strict
    /// JSON-RPC; its own text is never passed on.
    pub const UNCHECKED: i64 = -32092;
}

/// What to do about drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnDrift {
    /// Nothing more reaches the server; every request is answered with an error.
    Block,
    /// Changed and new tools and prompts are hidden and refused; the rest works.
    Hold,
}

/// The approved surface, and where first use and drift are recorded.
pub trait Pins {
    /// The approved surface as a lockfile's bytes, and the server's id in it; `None` when this
    /// server was never approved (first use). `Err` stops the session: a pin that cannot be read
    /// is never replaced by trusting what is served now.
    fn approved(&mut self) -> Result<Option<(Vec<u8>, String)>, String>;
    /// The id the served surface is recorded under for first use and drift.
    fn id(&self) -> String;
    /// Pins `manifest` (first use). Returns the line to show, `None` when another session pinned
    /// this server first (the session then compares with that pin), or why it may not be pinned.
    fn pin_first_use(&mut self, manifest: &[u8]) -> Result<Option<String>, String>;
    fn record_drift(&mut self, manifest: &[u8], labels: &[String]) -> Result<(), String>;
    /// The server serves what was approved again.
    fn release(&mut self) -> Result<(), String>;
    /// The command that reviews a drift, for messages.
    fn review_command(&self) -> String;
    /// Records what the public log said of the served surface (`labels`: the outcome, then any
    /// change labels).
    fn record_public(&mut self, _manifest: &[u8], _labels: &[String]) -> Result<(), String> {
        Ok(())
    }
}

/// What the public log says of a served surface, as the session acts on it.
#[derive(Debug, Clone)]
pub struct PublicVerdict {
    /// What to tell the user, safe to print.
    pub line: String,
    /// The outcome as a fixed token for the local log: `public-matches`, `public-differs`,
    /// `public-absent`, or [`PUBLIC_UNAVAILABLE`].
    pub outcome: &'static str,
    /// For a difference: the public surface as a lockfile's bytes, and the server's id in it.
    pub public_lock: Option<(Vec<u8>, String)>,
}

/// The outcome of a public log that could not be used when the user asked to block on that:
/// the session is blocked.
pub const PUBLIC_UNAVAILABLE: &str = "public-unavailable";

/// The public log, asked about a served surface; `None` when it has nothing to say (the server
/// has no public identity, or the record could not be read, said in a note of its own).
pub trait Public {
    fn compare(
        &mut self,
        served: &crate::check::Served,
        id: &str,
    ) -> (Vec<String>, Option<PublicVerdict>);
}

/// What a difference from the public record does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnPublicMismatch {
    /// Say so, and go on as without the public log.
    #[default]
    Warn,
    /// Hide what differs from the public surface from the client; on first use, pin nothing.
    Hold,
    /// Block the session; on first use, pin nothing.
    Block,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// A message for the server, without a line end: the transport frames it.
    ToServer(Vec<u8>),
    /// A message for the client, likewise.
    ToClient(Vec<u8>),
    /// A line for the proxy's standard error, already safe to print.
    Note(String),
}

/// How the session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Checked and open, or still checking.
    Open,
    /// Blocked on drift.
    Blocked,
    /// The surface could not be checked (the server failed, or the pins could not be read).
    Unchecked,
}
