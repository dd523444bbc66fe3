//! A cgroup for each look, below a directory the crawler makes in its own cgroup: the memory
//! and process caps of everything the server starts, counted together, and a way to stop all
//! of it at once. cgroup v2 needs the crawler's cgroup to be delegated (its
//! `cgroup.subtree_control` able to enable `memory` and `pids`); cgroup v1 needs writable
//! `memory` and `pids` hierarchies. Without either the caps fall back to rlimits.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::limits::{Enforcer, Limits};

/// Which cap a look's processes ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    Memory,
    Processes,
}

/// The crawler's directory in each hierarchy it uses; removed when dropped.
#[derive(Debug)]
pub struct Cgroups {
    version: Enforcer,
    /// v2: one directory; v1: the memory one, then the pids one.
    bases: Vec<PathBuf>,
}

/// Where `hierarchy` (a v1 controller, or "" for v2) is mounted and where this process sits in
/// it.
fn own_dir(mountinfo: &str, cgroup: &str, hierarchy: &str) -> Option<PathBuf> {
    let mount = mountinfo.lines().find_map(|line| {
        let (mine, theirs) = line.split_once(" - ")?;
        let fields: Vec<&str> = mine.split(' ').collect();
        let mut rest = theirs.split(' ');
        let fstype = rest.next()?;
        let options = rest.nth(1)?;
        let wanted = if hierarchy.is_empty() {
            fstype == "cgroup2"
        } else {
            fstype == "cgroup" && options.split(',').any(|o| o == hierarchy)
        };
        wanted.then(|| (fields.get(3).copied(), fields.get(4).copied()))
    })?;
    let (Some(root), Some(point)) = mount else {
        return None;
    };
    let path = cgroup.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let wanted = if hierarchy.is_empty() {
            controllers.is_empty()
        } else {
            controllers.split(',').any(|c| c == hierarchy)
        };
        wanted.then_some(path)
    })?;
    let inside = Path::new(path).strip_prefix(root).ok()?;
    Some(Path::new(point).join(inside))
}

/// Removes what crawlers killed before they could clean up left in `own`: each
/// `pinlog-crawl-<pid>` whose process is gone, with its looks' groups, whose processes (a
/// sandbox still dying with its crawler) are killed first.
fn sweep(own: &Path) {
    for e in std::fs::read_dir(own).into_iter().flatten().flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("pinlog-crawl-")) else {
            continue;
        };
        if Path::new("/proc").join(pid).exists() {
            continue;
        }
        for look in std::fs::read_dir(e.path()).into_iter().flatten().flatten() {
            if look.file_type().is_ok_and(|t| t.is_dir()) {
                remove(&[look.path()]);
            }
        }
        let _ = std::fs::remove_dir(e.path());
    }
}

fn write(path: &Path, value: &str) -> Result<(), String> {
    std::fs::write(path, value).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn make_dir(path: &Path) -> Result<(), String> {
    std::fs::create_dir(path).map_err(|e| format!("cannot create {}: {e}", path.display()))
}

impl Cgroups {
    /// The crawler's cgroup directories, made for this process, or why there are none.
    pub fn detect() -> Result<Cgroups, String> {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")
            .map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
        let cgroup = std::fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| format!("/proc/self/cgroup: {e}"))?;
        let name = format!("pinlog-crawl-{}", std::process::id());
        let mut why = Vec::new();
        if let Some(own) = own_dir(&mountinfo, &cgroup, "") {
            match Cgroups::v2(&own, &name) {
                Ok(c) => return Ok(c),
                Err(e) => why.push(e),
            }
        }
        match (
            own_dir(&mountinfo, &cgroup, "memory"),
            own_dir(&mountinfo, &cgroup, "pids"),
        ) {
            (Some(memory), Some(pids)) => {
                sweep(&memory);
                sweep(&pids);
                let bases = vec![memory.join(&name), pids.join(&name)];
                let mut made = Cgroups {
                    version: Enforcer::CgroupV1,
                    bases: Vec::new(),
                };
                for b in bases {
                    make_dir(&b)?;
                    made.bases.push(b);
                }
                Ok(made)
            }
            _ => {
                why.push("no cgroup v1 memory and pids hierarchies".into());
                Err(why.join("; "))
            }
        }
    }

    fn v2(own: &Path, name: &str) -> Result<Cgroups, String> {
        let enabled = |dir: &Path| {
            let c = std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
            c.split_whitespace().any(|w| w == "memory") && c.split_whitespace().any(|w| w == "pids")
        };
        if !enabled(own) {
            write(&own.join("cgroup.subtree_control"), "+memory +pids")?;
        }
        sweep(own);
        let base = own.join(name);
        make_dir(&base)?;
        let made = Cgroups {
            version: Enforcer::CgroupV2,
            bases: vec![base.clone()],
        };
        write(&base.join("cgroup.subtree_control"), "+memory +pids")?;
        Ok(made)
    }

    pub fn version(&self) -> Enforcer {
        self.version
    }

    /// A new group `name`, watched: a process that runs into a cap stops everything in the group.
    /// It holds `memory` bytes (the processes' cap and what their tmpfs may hold: see
    /// [`Limits::install_memory`]) and the process cap of `limits`.
    pub fn group(&self, name: &str, limits: &Limits, memory: u64) -> Result<Group, String> {
        let mut g = Group {
            version: self.version,
            dirs: Vec::new(),
            stop: Arc::new(AtomicBool::new(false)),
            hit: Arc::new(Mutex::new(None)),
            watcher: None,
        };
        for base in &self.bases {
            let dir = base.join(name);
            make_dir(&dir)?;
            g.dirs.push(dir);
        }
        g.set_memory(memory)?;
        let processes = limits.processes.to_string();
        match self.version {
            Enforcer::CgroupV2 => write(&g.dirs[0].join("pids.max"), &processes)?,
            _ => write(&g.dirs[1].join("pids.max"), &processes)?,
        }
        let (dirs, version, stop, hit) = (
            g.dirs.clone(),
            g.version,
            Arc::clone(&g.stop),
            Arc::clone(&g.hit),
        );
        g.watcher = Some(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Some(h) = events(version, &dirs) {
                    hit.lock().expect("hit").get_or_insert(h);
                    kill_all(version, &dirs);
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }));
        Ok(g)
    }
}

impl Drop for Cgroups {
    fn drop(&mut self) {
        for b in &self.bases {
            let _ = std::fs::remove_dir(b);
        }
    }
}

/// One look's cgroup: stopped, emptied and removed when dropped.
#[derive(Debug)]
pub struct Group {
    version: Enforcer,
    dirs: Vec<PathBuf>,
    stop: Arc<AtomicBool>,
    hit: Arc<Mutex<Option<Hit>>>,
    watcher: Option<std::thread::JoinHandle<()>>,
}

impl Group {
    /// The files a process writes its id to, to join the group.
    pub fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.join("cgroup.procs")).collect()
    }

    /// Sets what the group's processes and their tmpfs may hold together, to `bytes`: more while
    /// an installer fills its tmpfs, less once the server runs.
    pub fn set_memory(&self, bytes: u64) -> Result<(), String> {
        let memory = bytes.to_string();
        let d = &self.dirs[0];
        match self.version {
            Enforcer::CgroupV2 => {
                write(&d.join("memory.max"), &memory)?;
                // Swap would let a server go past its memory.
                let _ = std::fs::write(d.join("memory.swap.max"), "0");
            }
            _ => {
                // v1 keeps the memory limit at or below memory+swap: the order that works depends
                // on whether the cap grows, so the pair is written around it.
                let memsw = d.join("memory.memsw.limit_in_bytes");
                let _ = std::fs::write(&memsw, &memory);
                write(&d.join("memory.limit_in_bytes"), &memory)?;
                let _ = std::fs::write(&memsw, &memory);
            }
        }
        Ok(())
    }

    /// The cap the group ran into, if any (the watcher's finding, or the counters now).
    pub fn hit(&self) -> Option<Hit> {
        let seen = *self.hit.lock().expect("hit");
        seen.or_else(|| events(self.version, &self.dirs))
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(w) = self.watcher.take() {
            let _ = w.join();
        }
        remove(&self.dirs);
    }
}

/// Kills every process in the groups `dirs` and removes them, waiting up to a second for the
/// processes to be gone.
fn remove(dirs: &[PathBuf]) {
    let mut dirs = dirs.to_vec();
    for _ in 0..50 {
        for dir in &dirs {
            kill_procs(dir);
        }
        dirs.retain(|d| std::fs::remove_dir(d).is_err());
        if dirs.is_empty() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The value of `key` in a flat-keyed cgroup file.
fn counter(path: &Path, key: &str) -> u64 {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            (k == key).then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0)
}

/// Which cap the group's counters say was run into: the kernel killed a process for memory, or
/// refused a fork for the process count.
fn events(version: Enforcer, dirs: &[PathBuf]) -> Option<Hit> {
    let (memory, pids) = match version {
        Enforcer::CgroupV2 => (dirs[0].join("memory.events"), dirs[0].join("pids.events")),
        _ => (
            dirs[0].join("memory.oom_control"),
            dirs[1].join("pids.events"),
        ),
    };
    if counter(&memory, "oom_kill") > 0 {
        Some(Hit::Memory)
    } else if counter(&pids, "max") > 0 {
        Some(Hit::Processes)
    } else {
        None
    }
}

/// Kills every process in the group.
fn kill_all(version: Enforcer, dirs: &[PathBuf]) {
    if version == Enforcer::CgroupV2 && std::fs::write(dirs[0].join("cgroup.kill"), "1").is_ok() {
        return;
    }
    for dir in dirs {
        kill_procs(dir);
    }
}

/// Kills every process listed in the group `dir`.
fn kill_procs(dir: &Path) {
    let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
    for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
        if let Some(pid) = rustix::process::Pid::from_raw(pid) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_own_cgroup_is_found_below_its_mount() {
        let mountinfo =
            "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                         39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n\
                         41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let cgroup = "8:pids:/\n4:memory:/api/x\n0::/user.slice\n";
        assert_eq!(
            own_dir(mountinfo, cgroup, "memory"),
            Some(PathBuf::from("/sys/fs/cgroup/memory/api/x"))
        );
        assert_eq!(
            own_dir(mountinfo, cgroup, "pids"),
            Some(PathBuf::from("/sys/fs/cgroup/pids"))
        );
        assert_eq!(
            own_dir(mountinfo, cgroup, ""),
            Some(PathBuf::from("/sys/fs/cgroup/unified/user.slice"))
        );
        assert_eq!(own_dir(mountinfo, cgroup, "cpu"), None);
    }
}
