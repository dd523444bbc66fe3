//! One module a command.

pub mod canon;
pub mod digest;
pub mod log;
pub mod probe;
