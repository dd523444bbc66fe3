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

impl Limits {
    /// What a look's cgroup may hold while its installer runs: the processes' memory, and the
    /// three tmpfs of the install (its scratch, its home with the caches, `/tmp`), each bounded
    /// by `unpacked_bytes` on its own. A tmpfs's pages are charged to the cgroup of whoever
    /// wrote them; counted in the processes' cap, a large package would look like a greedy
    /// installer.
    pub fn install_memory(&self) -> u64 {
        self.memory_bytes
            .saturating_add(self.unpacked_bytes.saturating_mul(3))
    }

    /// What a look's cgroup may hold while its server runs: the processes' memory, `/tmp` and
    /// the home (`tmpfs_bytes` each), and `copy` bytes for the copy of the package's tree the
    /// sandbox makes at each start ([`crate::install_cache::tree::footprint`] of it).
    pub fn run_memory(&self, copy: u64) -> u64 {
        self.memory_bytes
            .saturating_add(self.tmpfs_bytes.saturating_mul(2))
            .saturating_add(copy)
    }
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
