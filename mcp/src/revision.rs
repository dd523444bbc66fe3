//! The protocol revisions this build was written against, and the era each belongs to.

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Revision {
    R2024_11_05,
    R2025_03_26,
    R2025_06_18,
    R2025_11_25,
    R2026_07_28,
}

/// How a session starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `initialize`, then `notifications/initialized`, then requests.
    Handshake,
    /// No handshake: every request carries the protocol version, client info and capabilities
    /// in `_meta`; `server/discover` says who the server is.
    Stateless,
}

impl Revision {
    pub const ALL: [Revision; 5] = [
        Revision::R2024_11_05,
        Revision::R2025_03_26,
        Revision::R2025_06_18,
        Revision::R2025_11_25,
        Revision::R2026_07_28,
    ];

    /// What a client asks for unless told otherwise: what servers in the field speak.
    pub const DEFAULT: Revision = Revision::R2025_11_25;

    pub fn as_str(self) -> &'static str {
        match self {
            Revision::R2024_11_05 => "2024-11-05",
            Revision::R2025_03_26 => "2025-03-26",
            Revision::R2025_06_18 => "2025-06-18",
            Revision::R2025_11_25 => "2025-11-25",
            Revision::R2026_07_28 => "2026-07-28",
        }
    }

    pub fn era(self) -> Era {
        match self {
            Revision::R2026_07_28 => Era::Stateless,
            _ => Era::Handshake,
        }
    }

    /// The newest revision of the handshake era.
    pub fn newest_handshake() -> Revision {
        Revision::R2025_11_25
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A revision this build does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownRevision(pub String);

impl fmt::Display for UnknownRevision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown protocol revision {:?}; this build knows {}",
            self.0,
            Revision::ALL.map(Revision::as_str).join(", ")
        )
    }
}

impl std::error::Error for UnknownRevision {}

impl FromStr for Revision {
    type Err = UnknownRevision;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Revision::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| UnknownRevision(s.to_string()))
    }
}
