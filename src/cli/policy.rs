//! `pinlog policy PRODUCT --config FILE --lock PATH --out DIR`. Exit codes: 0 written; 2 the
//! command line is wrong (an empty or variable `--lock`, an `--out` a product reads policy from,
//! or `cursor`, which documents no policy file); 4 the configuration could not be read or a
//! server in it is not wrapped and locked, or a file could not be written. Nothing is written
//! unless every server passes.

use std::path::PathBuf;

use clap::Args;
use pinlog_clients::policy::plan::{plan, write, PolicyOptions};
use pinlog_clients::policy::Product;
use pinlog_core::exit::{Exit, Failure};
use pinlog_core::render::safe;

#[derive(Args, Debug, Clone)]
pub struct PolicyArgs {
    /// The product to write managed-policy files for
    #[arg(value_enum, value_name = "PRODUCT")]
    pub product: Product,
    /// The MCP client configuration of the servers to allow (`mcpServers`, or VS Code's
    /// `servers`), each already wrapped by `pinlog wrap`
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// The lockfile every allowed server must run under: its wrapped args must carry exactly
    /// `--lock PATH`
    #[arg(long, value_name = "PATH")]
    pub lock: String,
    /// The directory to write the files to (one subdirectory per product); nothing is installed
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

impl PolicyArgs {
    fn options(&self) -> PolicyOptions {
        PolicyOptions {
            product: self.product,
            config: self.config.clone(),
            lock: self.lock.clone(),
            out: self.out.clone(),
        }
    }
}

/// `policy`: checks everything, then writes.
pub fn policy(args: PolicyArgs) -> Result<Exit, Failure> {
    let plan = plan(&args.options())?;
    for n in &plan.notes {
        eprintln!("pinlog: note: {}", safe(n));
    }
    let paths = write(&args.out, &plan)?;
    for (f, p) in plan.files.iter().zip(&paths) {
        println!(
            "wrote {} (deploy to {})",
            safe(&p.display().to_string()),
            f.deploy
        );
    }
    Ok(Exit::Ok)
}
