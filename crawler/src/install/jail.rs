//! The installers' sandbox: bubblewrap with the host's network and nothing else of the operator's.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::sandbox::Bind;

/// The variables an installer keeps that name the certificate authorities this machine trusts:
/// files or directories.
pub(super) const CA_ENV: [&str; 7] = [
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "PIP_CERT",
    "GIT_SSL_CAINFO",
];

/// How installers are confined: bubblewrap with the host's network, the look's caps, an empty
/// home, and a tmpfs of `unpacked_bytes` at the scratch directory, whose contents are copied to
/// the real one when the installer succeeds: a package that unpacks past the cap fills the
/// tmpfs, never the disk.
#[derive(Debug, Clone)]
pub struct Jail {
    pub bwrap: PathBuf,
    /// `pinlog sandbox-exec … --`: the look's cgroup, rlimits and seccomp filter.
    pub confine: Vec<OsString>,
    pub unpacked_bytes: u64,
}

/// The home of a confined installer, on a tmpfs of its own.
pub(super) const JAIL_HOME: &str = "/home/installer";
/// Where a confined installer sees the real scratch directory, to copy its work in and out.
pub(super) const JAIL_OUT: &str = "/pinlog-out";
/// What of `/etc` an installer needs to reach the registry, besides what every sandbox shows.
const NETWORK_ETC: [&str; 4] = [
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/gai.conf",
];
/// Run inside the jail as `sh -c COPY <dir> <installer…>`: the scratch directory's earlier work
/// in, the installer, its work out.
const COPY: &str =
    "cp -a -- /pinlog-out/. \"$0\"/ && \"$@\" && exec cp -a -- \"$0\"/. /pinlog-out/";

impl Jail {
    /// `cmd` (an installer with its whole environment set) run confined, with `dir` as its
    /// scratch directory and `binds` readable.
    fn wrap(&self, cmd: &Command, dir: &Path, binds: &[Bind]) -> Command {
        let size = self.unpacked_bytes.to_string();
        let mut a = self.confine.clone();
        a.push(self.bwrap.clone().into());
        a.extend(crate::sandbox::base_args(self.unpacked_bytes));
        a.push("--share-net".into());
        let ca = CA_ENV
            .iter()
            .filter_map(std::env::var_os)
            .map(PathBuf::from);
        for file in NETWORK_ETC.iter().map(PathBuf::from).chain(ca) {
            a.extend(["--ro-bind-try".into(), file.clone().into(), file.into()]);
        }
        for b in binds {
            a.extend([
                "--ro-bind".into(),
                b.source.clone().into_os_string(),
                b.dest.clone().into_os_string(),
            ]);
        }
        a.extend([
            "--size".into(),
            size.clone().into(),
            "--tmpfs".into(),
            dir.into(),
            "--bind".into(),
            dir.into(),
            JAIL_OUT.into(),
            "--size".into(),
            size.into(),
            "--tmpfs".into(),
            "/home".into(),
            "--dir".into(),
            JAIL_HOME.into(),
            "--chdir".into(),
            JAIL_HOME.into(),
        ]);
        for (k, v) in cmd.get_envs() {
            if let Some(v) = v {
                a.extend(["--setenv".into(), k.to_os_string(), v.to_os_string()]);
            }
        }
        a.extend(["--setenv".into(), "TMPDIR".into(), "/tmp".into()]);
        a.extend(["--".into(), "/bin/sh".into(), "-c".into(), COPY.into()]);
        a.push(dir.into());
        a.push(cmd.get_program().to_os_string());
        a.extend(cmd.get_args().map(OsString::from));
        let mut jailed = Command::new(&a[0]);
        jailed.args(&a[1..]).env_clear();
        jailed
    }
}

/// `cmd` in `jail` when there is one, with `dir` its scratch directory and `binds` readable.
pub(super) fn confined(cmd: Command, jail: Option<&Jail>, dir: &Path, binds: &[Bind]) -> Command {
    match jail {
        Some(j) => j.wrap(&cmd, dir, binds),
        None => cmd,
    }
}
