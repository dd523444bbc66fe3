//! What one sandboxed server, and one install, may use; and the words that record which of
//! those caps were in force for a look (docs/OPERATIONS.md, "Caps").

use std::fmt;

/// The caps, each enforced by a cgroup where the host gives the crawler one, by rlimits or
/// bubblewrap otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Memory of all the server's processes together (an rlimit on each one's data without a
    /// cgroup).
    pub memory_bytes: u64,
    /// Processes and threads at once.
    pub processes: u64,
    /// CPU time of each process.
    pub cpu_seconds: u64,
    /// The size of each tmpfs (`/tmp` and the home).
    pub tmpfs_bytes: u64,
    /// The size of any one file written.
    pub file_bytes: u64,
    /// What one install may unpack, all files together.
    pub unpacked_bytes: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            memory_bytes: 1 << 30,
            processes: 256,
            cpu_seconds: 60,
            tmpfs_bytes: 256 << 20,
            file_bytes: 128 << 20,
            unpacked_bytes: 512 << 20,
        }
    }
}

/// What enforces the memory and process caps of a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforcer {
    CgroupV1,
    CgroupV2,
    Rlimit,
}

impl Enforcer {
    pub fn as_str(self) -> &'static str {
        match self {
            Enforcer::CgroupV1 => "cgroup-v1",
            Enforcer::CgroupV2 => "cgroup-v2",
            Enforcer::Rlimit => "rlimit",
        }
    }
}

/// The caps a look ran under, and its seccomp filter, as recorded in `crawl_looks.caps`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InForce {
    pub limits: Limits,
    pub by: Enforcer,
}

impl fmt::Display for InForce {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = &self.limits;
        let by = self.by.as_str();
        write!(
            f,
            "memory-bytes={}/{by} processes={}/{by} cpu-seconds={}/rlimit file-bytes={}/rlimit \
             tmpfs-bytes={}/bubblewrap seccomp=on/bubblewrap",
            l.memory_bytes, l.processes, l.cpu_seconds, l.file_bytes, l.tmpfs_bytes
        )
    }
}
