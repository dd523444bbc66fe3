//! One module a command.

pub mod canon;
pub mod crawl;
pub mod demo;
pub mod digest;
pub mod export;
pub mod input;
pub mod lock_check;
pub mod log;
pub mod look;
pub mod lookup;
pub mod pins;
pub mod policy;
pub mod probe;
pub mod proxy;
pub mod site;
pub mod verify;
pub mod wrap;
