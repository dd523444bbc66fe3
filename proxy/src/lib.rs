//! pinlog-proxy: the stdio proxy that holds traffic until the surface matches its pin, the local
//! pin store, and the commands that review and approve what drifted.

pub mod check;
pub mod cli;
pub mod commands;
pub mod events;
pub mod launch;
pub mod lines;
pub mod message;
pub mod pins;
pub mod session;
pub mod stdio;
pub mod store;
