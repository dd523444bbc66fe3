//! pinlog-proxy: the stdio proxy that holds traffic until the surface matches its pin, the local
//! pin store, and the commands that review and approve what drifted.

pub mod approvers;
pub mod check;
pub mod commands;
pub mod confirm;
pub mod demo;
pub mod events;
pub mod http;
pub mod launch;
pub mod options;
pub mod pins;
pub mod public;
pub mod queue;
pub mod run;
pub mod session;
pub mod stdio;
pub mod store;
