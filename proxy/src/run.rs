//! One session of the proxy, as `pinlog proxy` starts it: the store opened, the pins chosen (a
//! lockfile's, or first use), the server launched (a runner's package pinned to the locked
//! version), and the session run over stdio or HTTP.

use std::ffi::OsString;
use std::path::Path;

use pinlog_core::exit::{Exit, Failure};
use pinlog_core::render::safe;

use pinlog_core::identity::PublicIdentity;
use pinlog_core::package::Package;

use crate::options::ProxyOptions;
use crate::pins::{LockPins, StorePins};
use crate::public::open_public;
use crate::stdio::{self, Ended, StdioOptions};
use crate::store::{ServerKey, Store};
use crate::{approvers, launch};

/// What people see a server called when no --name is given: the command's file name, and for an
/// interpreter or a runner the first argument that is not a flag.
pub fn default_label(argv: &[OsString]) -> String {
    let base = |a: &OsString| {
        Path::new(a).file_name().map_or_else(
            || a.to_string_lossy().into_owned(),
            |f| f.to_string_lossy().into_owned(),
        )
    };
    let Some(program) = argv.first() else {
        return String::new();
    };
    let name = base(program);
    const RUNNERS: [&str; 8] = [
        "node", "python", "python3", "npx", "uvx", "uv", "deno", "bun",
    ];
    if RUNNERS.contains(&name.as_str()) {
        if let Some(arg) = argv[1..]
            .iter()
            .find(|a| !a.to_string_lossy().starts_with('-'))
        {
            return format!("{name} {}", base(arg));
        }
    }
    name
}

/// Who the server is in the public log: the locked package's name and version, else what its
/// command line runs.
fn identity(argv: &[OsString], package: Option<&Package>) -> Option<PublicIdentity> {
    package
        .and_then(PublicIdentity::of_package)
        .or_else(|| PublicIdentity::of_command(argv))
}

fn open_store() -> Result<Store, Failure> {
    let home = Store::home().map_err(|e| Failure::unreadable(e.to_string()))?;
    Store::open(&home).map_err(|e| Failure::unreadable(e.to_string()))
}

/// Runs one session of the proxy: over stdio in front of `command`, or over HTTP in front of
/// `upstream`. The exit code is the server's status when the session ran, 1 when it blocked on
/// drift, 4 when the surface could not be checked (docs/PROXY.md).
pub fn run(args: &ProxyOptions) -> Result<u8, Failure> {
    if let Some(upstream) = &args.upstream {
        return crate::http::run_listener(args, upstream);
    }
    let label = args
        .name
        .clone()
        .unwrap_or_else(|| default_label(&args.command));
    // A store that cannot be read stops the proxy before the server starts: it never re-trusts.
    let store = open_store()?;
    let key = ServerKey::from_argv(&args.command);
    // So does a pin that does not read back.
    if let Err(e) = store.pinned(&key) {
        return Err(Failure::unreadable(format!(
            "{e}; the server was not started (`pinlog forget {key}` drops the pin)"
        )));
    }
    let home = store.home_dir().to_path_buf();
    let store_pins = StorePins {
        store,
        key,
        label: label.clone(),
    };
    let options = StdioOptions {
        argv: args.command.clone(),
        label: label.clone(),
        on_drift: args.on_drift,
        public: None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::unreadable(format!("cannot start the runtime: {e}")))?;
    let ended = match &args.lock {
        Some(path) => {
            let lock = pinlog_core::files::read_bounded(path, 64 << 20).map_err(|e| {
                Failure::unreadable(format!("cannot read the lockfile {}: {e}", path.display()))
            })?;
            let read = pinlog_core::lockfile::Lockfile::read(&lock).map_err(|e| {
                Failure::unreadable(format!("the lockfile {}: {e}", path.display()))
            })?;
            // Where approvals come only from a signed lockfile, it alone decides.
            let only_locked = args.only_locked || approvers::enforce(&home, Some((path, &lock)))?;
            // The lock pins what runs, too: a runner's package goes to the locked version.
            let package = read.server(&label).and_then(|s| s.package.clone());
            let mut options = options;
            options.public = open_public(
                args.public_log.as_ref(),
                args.on_public_mismatch,
                identity(&args.command, package.as_ref()),
            );
            if let Some(package) = package {
                let launch = launch::pinned(&options.argv, &package).map_err(Failure::usage)?;
                if let Some(note) = launch.note {
                    eprintln!("pinlog: {}", safe(&note));
                }
                options.argv = launch.argv;
            }
            // A server the lock does not name is refused before it runs, with --only-locked.
            if only_locked && read.server(&label).is_none() {
                return Err(Failure::unreadable(format!(
                    "the lockfile {} does not name the server {} and --only-locked is set (or \
                     approvals come only from a signed lockfile); the server was not started",
                    path.display(),
                    pinlog_core::render::quoted(&label, 64)
                )));
            }
            let pins = LockPins {
                lock,
                lock_path: path.display().to_string(),
                id: label,
                fallback: (!only_locked).then_some(store_pins),
            };
            runtime.block_on(stdio::run(options, pins))
        }
        None => {
            approvers::enforce(&home, None)?;
            let mut options = options;
            options.public = open_public(
                args.public_log.as_ref(),
                args.on_public_mismatch,
                identity(&args.command, None),
            );
            runtime.block_on(stdio::run(options, store_pins))
        }
    }
    .map_err(Failure::unreadable)?;
    Ok(match ended {
        Ended::Served(status) => u8::try_from(status).unwrap_or(1),
        Ended::Blocked => 1,
        Ended::Unchecked => Exit::Unreadable.code(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_names_the_script_a_runner_runs() {
        let argv = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            default_label(&argv(&["node", "/srv/weather.js", "stdio"])),
            "node weather.js"
        );
        assert_eq!(
            default_label(&argv(&["npx", "-y", "@scope/pkg"])),
            "npx pkg"
        );
        assert_eq!(
            default_label(&argv(&["/usr/bin/mcp-server-time"])),
            "mcp-server-time"
        );
    }
}
