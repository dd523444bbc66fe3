//! `pinlog demo`: a bundled server changes between two sessions through the proxy. Exit 0 when
//! the demo went as described, 1 otherwise.

use clap::Args;
use pinlog_core::exit::{Exit, Failure};

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Run the bundled server itself (what the demo's proxy starts)
    #[arg(long, hide = true)]
    pub serve: bool,
}

pub fn demo(args: DemoArgs) -> Result<Exit, Failure> {
    if args.serve {
        return Ok(pinlog_proxy::demo::serve());
    }
    pinlog_proxy::demo::demo()
}
