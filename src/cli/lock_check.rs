//! `pinlog lock --check`: each locked package's digest against what its registry publishes now.

use std::time::Duration;

use pinlog_core::exit::{Exit, Failure};
use pinlog_core::lockfile::Lockfile;
use pinlog_core::render::safe;
use pinlog_crawler::registry_check::{check, Registries, Verdict};
use pinlog_gate::cli::LockArgs;

pub fn run(args: LockArgs) -> Result<Exit, Failure> {
    let path = &args.output;
    let bytes = pinlog_core::files::read_bounded(path, 64 << 20).map_err(|e| {
        Failure::unreadable(format!("cannot read the lockfile {}: {e}", path.display()))
    })?;
    let lock = Lockfile::read(&bytes)
        .map_err(|e| Failure::unreadable(format!("the lockfile {}: {e}", path.display())))?;
    let registries = Registries {
        npm: args.npm_registry,
        pypi: args.pypi_index,
    };
    let found = check(&lock, &registries, Duration::from_secs(30)).map_err(Failure::unreadable)?;
    let (mut changed, mut unchecked) = (0, 0);
    for c in &found {
        let what = format!("{} ({})", safe(&c.package.to_string()), safe(&c.server));
        match &c.verdict {
            Verdict::Same => println!("{what}: the registry publishes the locked digest"),
            Verdict::Changed { published } => {
                changed += 1;
                println!(
                    "CHANGED {what}: the registry publishes {} for this version, and the lock pins {}",
                    safe(&published.join(" ")),
                    safe(c.package.digest.as_deref().unwrap_or_default())
                );
            }
            Verdict::Gone => {
                changed += 1;
                println!("GONE {what}: the registry no longer publishes this version");
            }
            Verdict::Unchecked(why) => {
                unchecked += 1;
                println!("NOT CHECKED {what}: {}", safe(why));
            }
        }
        if let Some(newer) = &c.newer {
            println!(
                "  note: the registry's latest is {}; the lock stays on what was approved",
                safe(newer)
            );
        }
    }
    println!(
        "{} package(s): {} as locked, {changed} changed or gone, {unchecked} not checked",
        found.len(),
        found.len() - changed - unchecked
    );
    Ok(if changed > 0 {
        Exit::Bad
    } else if unchecked > 0 {
        Exit::Undecidable
    } else {
        Exit::Ok
    })
}
