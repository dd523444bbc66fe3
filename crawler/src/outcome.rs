//! What one look at one server came to. The reason tokens are recorded in the store and printed
//! in run summaries: they are part of the crawler's contract (docs/OPERATIONS.md).

use std::fmt;

use pinlog_log::surface_blob::BlobError;
use pinlog_mcp::error::WireError;

/// Why a server could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    OptOut,
    SandboxUnavailable,
    Unsupported,
    InstallFailed,
    NeedsCredentials,
    NeedsEnv,
    Exited,
    Timeout,
    Unreachable,
    UrlRefused,
    HttpStatus,
    ErrorAnswer,
    MalformedAnswer,
    PaginationLoop,
    ProtocolError,
    TooLarge,
    Unstable,
    Undecidable,
    Refused,
    Internal,
    MemoryCap,
    ProcessCap,
    CpuCap,
    PackageTooLarge,
    ScratchFull,
    WorkerGaveUp,
    ResultRefused,
    NoResult,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::OptOut => "opt-out",
            Reason::SandboxUnavailable => "sandbox-unavailable",
            Reason::Unsupported => "unsupported",
            Reason::InstallFailed => "install-failed",
            Reason::NeedsCredentials => "needs-credentials",
            Reason::NeedsEnv => "needs-env",
            Reason::Exited => "exited",
            Reason::Timeout => "timeout",
            Reason::Unreachable => "unreachable",
            Reason::UrlRefused => "url-refused",
            Reason::HttpStatus => "http-status",
            Reason::ErrorAnswer => "error-answer",
            Reason::MalformedAnswer => "malformed-answer",
            Reason::PaginationLoop => "pagination-loop",
            Reason::ProtocolError => "protocol-error",
            Reason::TooLarge => "too-large",
            Reason::Unstable => "unstable-listing",
            Reason::Undecidable => "undecidable",
            Reason::Refused => "entry-refused",
            Reason::Internal => "internal-error",
            Reason::MemoryCap => "memory-cap",
            Reason::ProcessCap => "process-cap",
            Reason::CpuCap => "cpu-cap",
            Reason::PackageTooLarge => "package-too-large",
            Reason::ScratchFull => "scratch-full",
            Reason::WorkerGaveUp => "worker-gave-up",
            Reason::ResultRefused => "result-refused",
            Reason::NoResult => "no-result",
        }
    }

    /// Every reason, in the order declared.
    pub const ALL: [Reason; 28] = [
        Reason::OptOut,
        Reason::SandboxUnavailable,
        Reason::Unsupported,
        Reason::InstallFailed,
        Reason::NeedsCredentials,
        Reason::NeedsEnv,
        Reason::Exited,
        Reason::Timeout,
        Reason::Unreachable,
        Reason::UrlRefused,
        Reason::HttpStatus,
        Reason::ErrorAnswer,
        Reason::MalformedAnswer,
        Reason::PaginationLoop,
        Reason::ProtocolError,
        Reason::TooLarge,
        Reason::Unstable,
        Reason::Undecidable,
        Reason::Refused,
        Reason::Internal,
        Reason::MemoryCap,
        Reason::ProcessCap,
        Reason::CpuCap,
        Reason::PackageTooLarge,
        Reason::ScratchFull,
        Reason::WorkerGaveUp,
        Reason::ResultRefused,
        Reason::NoResult,
    ];

    /// The reason a token names.
    pub fn parse(token: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.as_str() == token)
    }

    /// Whether only the coordinator of a queue records this reason: a look never ends in it, so
    /// a worker's result that claims it is refused.
    pub fn coordinator_only(self) -> bool {
        matches!(
            self,
            Reason::OptOut | Reason::WorkerGaveUp | Reason::ResultRefused | Reason::NoResult
        )
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed look: the reason, and a detail safe to print (already rendered).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookFailure {
    pub reason: Reason,
    pub detail: String,
    /// The exit status for [`Reason::Exited`].
    pub exit_code: Option<i32>,
}

impl LookFailure {
    pub fn new(reason: Reason, detail: impl Into<String>) -> LookFailure {
        LookFailure {
            reason,
            detail: pinlog_core::render::safe(&detail.into()).into_owned(),
            exit_code: None,
        }
    }

    /// The failure a wire error means.
    pub fn from_wire(e: &WireError) -> LookFailure {
        let reason = match e {
            WireError::Unreachable(_) => Reason::Unreachable,
            WireError::Malformed(_) => Reason::MalformedAnswer,
            WireError::TooLarge(_) => Reason::TooLarge,
            WireError::Timeout(_) => Reason::Timeout,
            WireError::Closed(_) => Reason::Exited,
            WireError::Rpc { .. } => Reason::ErrorAnswer,
            WireError::HttpStatus(..) => Reason::HttpStatus,
            WireError::NeedsCredentials(_) => Reason::NeedsCredentials,
            WireError::Refused(_) => Reason::UrlRefused,
            WireError::Pagination(_) => Reason::PaginationLoop,
            WireError::Protocol(_) => Reason::ProtocolError,
        };
        LookFailure::new(reason, e.to_string())
    }

    /// The failure a surface that cannot be committed to means.
    pub fn from_blob(e: BlobError) -> LookFailure {
        match e {
            BlobError::Malformed(m) => LookFailure::new(Reason::MalformedAnswer, m),
            BlobError::Undecidable(m) => LookFailure::new(Reason::Undecidable, m),
            BlobError::TooLarge(m) => LookFailure::new(Reason::TooLarge, m),
        }
    }
}

impl fmt::Display for LookFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.exit_code {
            Some(code) => write!(f, "{} {code}: {}", self.reason, self.detail),
            None => write!(f, "{}: {}", self.reason, self.detail),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_has_one_token_that_names_it() {
        let mut tokens: Vec<&str> = Reason::ALL.iter().map(|r| r.as_str()).collect();
        for r in Reason::ALL {
            assert_eq!(Reason::parse(r.as_str()), Some(r));
        }
        tokens.sort();
        tokens.dedup();
        assert_eq!(tokens.len(), Reason::ALL.len());
        assert_eq!(Reason::parse("new"), None);
    }
}
