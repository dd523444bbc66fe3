//! The step between the crawler and bubblewrap. The crawler starts `pinlog sandbox-exec`, which
//! joins the look's cgroups and sets its rlimits, then becomes bubblewrap (handing it the
//! seccomp filters): everything the sandbox starts inherits all of them from its first
//! instruction, with no moment outside them.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

use crate::cgroup::Group;
use crate::limits::Limits;

/// What `pinlog sandbox-exec` does before it runs its command.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Confinement {
    /// `cgroup.procs` files to write this process's id to.
    pub join: Vec<PathBuf>,
    pub cpu_seconds: u64,
    pub file_bytes: u64,
    /// Per-process data and process-count rlimits, for a host without cgroups.
    pub data_bytes: Option<u64>,
    pub processes: Option<u64>,
    /// The command is bubblewrap, to be given the seccomp filters.
    pub seccomp: bool,
}

impl Confinement {
    /// The confinement for `limits`, in `group` when the host has cgroups.
    pub fn new(limits: &Limits, group: Option<&Group>) -> Confinement {
        Confinement {
            join: group.map(Group::procs_files).unwrap_or_default(),
            cpu_seconds: limits.cpu_seconds,
            file_bytes: limits.file_bytes,
            data_bytes: group.is_none().then_some(limits.memory_bytes),
            processes: group.is_none().then_some(limits.processes),
            seccomp: true,
        }
    }

    /// `exe sandbox-exec …flags… --`, to put before the command.
    pub fn prefix(&self, exe: &std::path::Path) -> Vec<OsString> {
        let mut a: Vec<OsString> = vec![exe.into(), "sandbox-exec".into()];
        for j in &self.join {
            a.extend(["--join".into(), j.clone().into_os_string()]);
        }
        let mut num = |flag: &str, v: u64| a.extend([flag.into(), v.to_string().into()]);
        num("--cpu-seconds", self.cpu_seconds);
        num("--file-bytes", self.file_bytes);
        if let Some(v) = self.data_bytes {
            num("--data-bytes", v);
        }
        if let Some(v) = self.processes {
            num("--processes", v);
        }
        if self.seccomp {
            a.push("--seccomp".into());
        }
        a.push("--".into());
        a
    }

    /// Joins the groups, sets the rlimits and runs `argv` in place of this process; returns
    /// only on failure, having run nothing.
    pub fn exec(&self, argv: &[OsString]) -> String {
        let pid = std::process::id().to_string();
        for file in &self.join {
            if let Err(e) = std::fs::write(file, &pid) {
                return format!("cannot join the cgroup {}: {e}", file.display());
            }
        }
        // The CPU cap is soft, so the process gets SIGXCPU; a process that ignores it is
        // killed a second later.
        let mut limits = vec![
            (Resource::Cpu, self.cpu_seconds, self.cpu_seconds + 1),
            (Resource::Fsize, self.file_bytes, self.file_bytes),
        ];
        limits.extend(self.data_bytes.map(|v| (Resource::Data, v, v)));
        limits.extend(self.processes.map(|v| (Resource::Nproc, v, v)));
        for (resource, soft, hard) in limits {
            // Never above the limit the operator already set: that cannot be raised.
            let ceiling = getrlimit(resource).maximum.unwrap_or(u64::MAX);
            let set = setrlimit(
                resource,
                Rlimit {
                    current: Some(soft.min(ceiling)),
                    maximum: Some(hard.min(ceiling)),
                },
            );
            if let Err(e) = set {
                return format!("cannot set the rlimit {resource:?}: {e}");
            }
        }
        let Some((program, args)) = argv.split_first() else {
            return "no command to run".into();
        };
        let mut args = args.to_vec();
        if self.seccomp {
            let filters = match crate::seccomp::filters() {
                Ok(f) => f,
                Err(e) => return e,
            };
            for (i, filter) in filters.iter().enumerate() {
                match inherited(filter) {
                    Ok(fd) => args.splice(
                        i * 2..i * 2,
                        ["--add-seccomp-fd".into(), fd.to_string().into()],
                    ),
                    Err(e) => return format!("cannot hand bubblewrap its seccomp filter: {e}"),
                };
            }
        }
        let e = std::process::Command::new(program).args(args).exec();
        format!("cannot run {}: {e}", program.to_string_lossy())
    }
}

/// A file descriptor holding `bytes` from its start, left open across `exec` (bubblewrap reads
/// a filter from one).
fn inherited(bytes: &[u8]) -> std::io::Result<i32> {
    use std::io::{Seek, Write};
    use std::os::fd::IntoRawFd;
    let fd = rustix::fs::memfd_create("pinlog-seccomp", rustix::fs::MemfdFlags::empty())?;
    let mut file = std::fs::File::from(fd);
    file.write_all(bytes)?;
    file.rewind()?;
    Ok(file.into_raw_fd())
}
