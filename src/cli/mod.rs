//! One module a command.

pub mod canon;
pub mod crawl;
pub mod digest;
pub mod export;
pub mod lock_check;
pub mod log;
pub mod policy;
pub mod probe;
pub mod site;
pub mod wrap;
