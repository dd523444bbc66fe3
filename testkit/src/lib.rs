//! Helpers the workspace's tests share, one module a topic. A dev-dependency only.
//!
//! The log's fixtures depend on pinlog-log, whose own integration tests use them: cargo builds
//! one pinlog-log for both, so their types agree. Its unit tests must not use this crate, which
//! would hand them a second, distinct pinlog-log.

pub mod differential;
pub mod fs;
pub mod output;
pub mod repo;
pub mod server;
pub mod vectors;

#[cfg(feature = "crawl")]
pub mod crawl;
#[cfg(feature = "log")]
pub mod log;
