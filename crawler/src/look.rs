//! One look at one candidate: install it if it is a package, run it in the sandbox (or connect
//! through the SSRF guard), read its surface, and say what happened.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pinlog_mcp::caps::Caps;
use pinlog_mcp::guard::NetGuard;
use pinlog_mcp::noise::Noise;
use pinlog_mcp::probe::{self, Target};
use pinlog_mcp::stdio::Exit;
use pinlog_mcp::surface::{ProbeOptions, Surface};

use crate::candidate::{Candidate, Launch, Remote};
use crate::cgroup::{Cgroups, Group, Hit};
use crate::confine::Confinement;
use crate::env_needs;
use crate::fetch::Fetcher;
use crate::install::published::published;
use crate::install::{self, InstallError, Installed, Installers, Jail};
use crate::install_cache::{tree, Cache, Key, Lease, Reservation, Taken};
use crate::limits::{Enforcer, InForce, Limits};
use crate::outcome::{LookFailure, Reason};
use crate::sandbox::{Isolation, PLACEHOLDER};
use crate::start::Start;
use crate::usage::{self, Fill};

/// How the crawler looks at servers.
#[derive(Debug, Clone)]
pub struct Looker {
    /// The sandbox for stdio probes, or why there is none.
    pub isolation: Result<Isolation, String>,
    pub installers: Installers,
    pub guard: NetGuard,
    pub caps: Caps,
    pub options: ProbeOptions,
    /// Scratch space; each look uses its own directory below it and removes it after.
    pub work: PathBuf,
    /// The caps of every sandboxed server.
    pub limits: Limits,
    /// The crawler's cgroups, where the host gives it some; rlimits stand in otherwise.
    pub cgroups: Option<Arc<Cgroups>>,
    /// The `pinlog` binary, whose `sandbox-exec` applies the caps and starts bubblewrap.
    pub sandbox_exec: PathBuf,
    /// Installed packages kept for later looks; `None` installs every package afresh.
    pub kept: Option<Kept>,
}

/// The install cache, and how to ask the registries what a look would install.
#[derive(Debug, Clone)]
pub struct Kept {
    pub cache: Cache,
    fetcher: Fetcher,
}

impl Kept {
    /// `cache`, asking the registries with requests bounded by `timeout`.
    pub fn new(cache: Cache, timeout: Duration) -> Result<Kept, String> {
        Ok(Kept {
            cache,
            fetcher: Fetcher::new(timeout)?,
        })
    }
}

/// How a look came by its package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Install {
    /// A kept tree, checked, without installing.
    Kept,
    /// Installed and kept for later looks.
    Installed,
    /// Installed again, and why the kept tree was not used.
    Reinstalled(String),
    /// Installed for this look only, and why it is not kept.
    NotKept(String),
    /// Not installed: the same bytes under the same caps were refused for their size then.
    RefusedBefore(String),
}

impl Install {
    /// The text [`Install`]'s `Display` writes, read back.
    pub fn parse(s: &str) -> Option<Install> {
        match s {
            "kept" => return Some(Install::Kept),
            "installed" => return Some(Install::Installed),
            _ => {}
        }
        let (kind, rest) = s.split_once(": ")?;
        let rest = rest.to_string();
        match kind {
            "reinstalled" => Some(Install::Reinstalled(rest)),
            "not kept" => Some(Install::NotKept(rest)),
            "refused before" => Some(Install::RefusedBefore(rest)),
            _ => None,
        }
    }
}

impl std::fmt::Display for Install {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Install::Kept => f.write_str("kept"),
            Install::Installed => f.write_str("installed"),
            Install::Reinstalled(why) => write!(f, "reinstalled: {why}"),
            Install::NotKept(why) => write!(f, "not kept: {why}"),
            Install::RefusedBefore(at) => write!(f, "refused before: {at}"),
        }
    }
}

/// What holds an installed tree for the length of a look: dropped, it lets the tree go.
enum Held {
    /// The look's scratch directory, removed with it.
    Scratch,
    Lease {
        _lease: Lease,
    },
    /// A fresh install not kept: removed when this is dropped.
    Fresh {
        _reservation: Reservation,
    },
}

/// What a look found.
#[derive(Debug)]
pub struct Look {
    pub outcome: Result<Surface, LookFailure>,
    /// The package version or image digest looked at.
    pub version: Option<String>,
    pub registry_digest: Option<String>,
    /// `stdio`, `streamable-http` or `sse`.
    pub transport: &'static str,
    /// Variables the server wanted (names only).
    pub env_wanted: Vec<String>,
    /// Variables filled with the placeholder for the look that succeeded.
    pub env_placeholders: Vec<String>,
    /// Variables given real values (a seed's or the registry's), names only.
    pub env_supplied: Vec<String>,
    /// Arguments filled with a placeholder, by name or `$position`.
    pub arg_placeholders: Vec<String>,
    /// The caps the server ran under, when it ran in the sandbox.
    pub caps: Option<InForce>,
    /// How the package came to be there, with an install cache.
    pub install: Option<Install>,
    /// What else the look did to read the server, beyond how it was asked to start it: each a
    /// sentence safe to print (docs/OPERATIONS.md, "Looking at one server").
    pub notes: Vec<String>,
    /// The Python a PyPI package ran on: its version and interpreter.
    pub python: Option<String>,
    pub took: Duration,
}

impl Look {
    /// A look that failed before anything was learnt.
    pub fn failed(f: LookFailure) -> Look {
        Look {
            outcome: Err(f),
            version: None,
            registry_digest: None,
            transport: "stdio",
            env_wanted: Vec::new(),
            env_placeholders: Vec::new(),
            env_supplied: Vec::new(),
            arg_placeholders: Vec::new(),
            caps: None,
            install: None,
            notes: Vec::new(),
            python: None,
            took: Duration::ZERO,
        }
    }
}

impl Looker {
    pub fn look(&self, c: &Candidate, slot: usize) -> Look {
        let start = Instant::now();
        let mut look = Look::failed(LookFailure::new(Reason::Unsupported, "not looked at"));
        look.outcome = match &c.launch {
            Launch::Remote { url, transport } => self.remote(url, *transport, &mut look),
            Launch::Oci { digest, .. } => {
                look.version = Some(digest.clone());
                Err(LookFailure::new(
                    Reason::Unsupported,
                    "OCI images need a container runtime; this crawler does not run them",
                ))
            }
            Launch::Npm { .. } | Launch::Pypi { .. } => {
                let dir = self.work.join(format!("look-{slot}"));
                let found = self.package(c, &dir, &mut look);
                let _ = std::fs::remove_dir_all(&dir);
                found
            }
        };
        look.took = start.elapsed();
        look
    }

    fn remote(
        &self,
        url: &str,
        transport: Remote,
        look: &mut Look,
    ) -> Result<Surface, LookFailure> {
        let target = match transport {
            Remote::StreamableHttp => {
                look.transport = "streamable-http";
                Target::Http {
                    url,
                    headers: &[],
                    guard: Some(&self.guard),
                }
            }
            Remote::Sse => {
                look.transport = "sse";
                Target::SseLegacy {
                    url,
                    headers: &[],
                    guard: Some(&self.guard),
                }
            }
        };
        let found = probe::probe(target, &self.options, self.caps);
        found
            .outcome
            .map_err(|e| LookFailure::from_wire(&e))
            .and_then(complete)
    }

    fn package(&self, c: &Candidate, dir: &Path, look: &mut Look) -> Result<Surface, LookFailure> {
        let isolation = match &self.isolation {
            Ok(i) => i,
            Err(why) => return Err(LookFailure::new(Reason::SandboxUnavailable, why.clone())),
        };
        let _ = std::fs::remove_dir_all(dir);
        let home = dir.join("home");
        std::fs::create_dir_all(&home).map_err(|e| {
            LookFailure::new(
                Reason::InstallFailed,
                format!("scratch {}: {e}", dir.display()),
            )
        })?;
        let group = match &self.cgroups {
            Some(c) => {
                // Unique for the crawler's life: a group that could not be removed is not reused.
                static GROUPS: AtomicU64 = AtomicU64::new(0);
                let name = format!("look-{}", GROUPS.fetch_add(1, Ordering::Relaxed));
                let g = c
                    .group(&name, &self.limits, self.limits.install_memory())
                    .map_err(|e| {
                        LookFailure::new(
                            Reason::SandboxUnavailable,
                            format!("the look's cgroup: {e}"),
                        )
                    })?;
                Some(g)
            }
            None => None,
        };
        // The installers run in the look's cgroup with its caps, but for CPU: an install's time
        // is already bounded by --install-timeout.
        let jail = match isolation {
            Isolation::Bubblewrap(bwrap) => Some(Jail {
                bwrap: bwrap.clone(),
                confine: Confinement::new(
                    &Limits {
                        cpu_seconds: self.installers.timeout.as_secs(),
                        ..self.limits
                    },
                    group.as_ref(),
                )
                .prefix(&self.sandbox_exec),
                unpacked_bytes: self.limits.unpacked_bytes,
            }),
            Isolation::None => None,
        };
        let (installed, _held) = self.obtain(c, dir, jail.as_ref(), look);
        let installed = installed.map_err(|e| {
            if let Err(f) = capped(group.as_ref(), None, &self.limits) {
                f
            } else if let Some(filled) = &e.filled {
                LookFailure::new(
                    Reason::ScratchFull,
                    format!(
                        "the install ran out of room on {filled}, not at the cap of {} bytes: {}",
                        self.limits.unpacked_bytes, e.message
                    ),
                )
            } else if e.too_large {
                LookFailure::new(
                    Reason::PackageTooLarge,
                    format!(
                        "the package unpacks past the cap of {} bytes (or has a file past {}): {}",
                        self.limits.unpacked_bytes, self.limits.file_bytes, e.message
                    ),
                )
            } else {
                LookFailure::new(Reason::InstallFailed, e.message)
            }
        })?;
        look.version = Some(installed.version.clone());
        look.registry_digest = installed.registry_digest.clone();
        look.notes.extend(installed.note.clone());
        look.python = installed.python.clone();
        // The tree and what the server writes beside it share the tmpfs of the copy.
        let installed = writable(
            installed,
            self.limits
                .unpacked_bytes
                .saturating_add(self.limits.tmpfs_bytes),
        );
        if let (Some(g), Isolation::Bubblewrap(_)) = (&group, isolation) {
            // The copy's pages are charged to the look's cgroup; the server's own cap is not
            // theirs to spend.
            let copy = tree::footprint(&installed.tree).map_err(|e| {
                LookFailure::new(
                    Reason::InstallFailed,
                    format!("cannot measure {}: {e}", installed.tree.display()),
                )
            })?;
            g.set_memory(self.limits.run_memory(copy)).map_err(|e| {
                LookFailure::new(
                    Reason::SandboxUnavailable,
                    format!("the look's cgroup: {e}"),
                )
            })?;
        }

        if let Isolation::Bubblewrap(_) = isolation {
            look.caps = Some(InForce {
                limits: self.limits,
                by: self
                    .cgroups
                    .as_ref()
                    .map_or(Enforcer::Rlimit, |c| c.version()),
            });
        }

        // Started as its registry entry or seed line says, from the first run.
        let start = &c.start;
        let given = start.env_values();
        (look.env_supplied, look.env_placeholders) = start.env_names();
        look.arg_placeholders = start.arg_placeholders().to_vec();
        let first = self.run(
            isolation,
            &installed,
            start.args(),
            &given,
            &home,
            group.as_ref(),
        );
        capped(group.as_ref(), first.exit, &self.limits)?;
        let stderr = first.stderr.kept.clone();
        let err = match first.outcome {
            Ok(s) => {
                look.notes.extend(noise_note(&first.noise));
                return complete(s);
            }
            Err(e) => e,
        };
        // Only a server that stopped on its own may have stopped for want of an argument or a
        // variable; it may have said which variable on either of its outputs.
        let stopped = matches!(err, pinlog_mcp::error::WireError::Closed(_));
        if stopped {
            if let Some(again) = asked_for(start, &stderr, &isolation.scratch(&home)) {
                // The one retry of this look: the arguments the usage error asked for.
                let second = self.run(
                    isolation,
                    &installed,
                    again.args(),
                    &given,
                    &home,
                    group.as_ref(),
                );
                capped(group.as_ref(), second.exit, &self.limits)?;
                look.notes.extend(noise_note(&second.noise));
                look.arg_placeholders = again.arg_placeholders().to_vec();
                let tail = stderr_tail(&second.stderr.kept);
                return match second.outcome {
                    Ok(s) => complete(s),
                    Err(e) => {
                        let mut f = exit_failure(&e, second.exit);
                        f.detail = format!(
                            "started again as its usage error asked, with {}: {}{tail}",
                            again.arg_placeholders().join(" "),
                            f.detail
                        );
                        Err(f)
                    }
                };
            }
        }
        let mut wanted = if stopped {
            let mut said = stderr.clone();
            said.extend_from_slice(&first.noise.kept);
            env_needs::wanted(&c.env, &said)
        } else {
            Vec::new()
        };
        // What it was already given, it still lacked for another reason.
        wanted.retain(|n| !given.iter().any(|(g, _)| g == n));
        look.env_wanted = wanted.clone();
        if wanted.is_empty() {
            look.notes.extend(noise_note(&first.noise));
            let mut f = exit_failure(&err, first.exit);
            f.detail.push_str(&stderr_tail(&stderr));
            return Err(f);
        }
        // One retry, every wanted variable filled with a harmless placeholder of its kind.
        let names = wanted.join(", ");
        let scratch = isolation.scratch(&home);
        let mut env = given.clone();
        env.extend(
            wanted
                .iter()
                .map(|n| (n.clone(), env_placeholder(n, &scratch))),
        );
        let second = self.run(
            isolation,
            &installed,
            start.args(),
            &env,
            &home,
            group.as_ref(),
        );
        capped(group.as_ref(), second.exit, &self.limits)?;
        look.notes.extend(noise_note(&second.noise));
        match second.outcome {
            Ok(s) => {
                look.env_placeholders.extend(wanted);
                look.env_placeholders.sort();
                complete(s)
            }
            Err(e) => {
                let (reason, what) = match wanted.iter().any(|n| env_needs::is_credential(n)) {
                    true => (Reason::NeedsCredentials, "placeholder credentials"),
                    false => (Reason::NeedsEnv, "placeholders"),
                };
                Err(LookFailure::new(
                    reason,
                    format!("the server wants {names}; with {what}: {e}"),
                ))
            }
        }
    }

    /// The package installed, from the cache when it keeps what the registry publishes for the
    /// version, else installed now (and kept); with what holds the tree while the look runs.
    fn obtain(
        &self,
        c: &Candidate,
        dir: &Path,
        jail: Option<&Jail>,
        look: &mut Look,
    ) -> (Result<Installed, InstallError>, Held) {
        let tools = &self.installers;
        let (registry, name, asked) = match &c.launch {
            Launch::Npm { name, version } => ("npm", name, version.as_deref()),
            Launch::Pypi { name, version } => ("pypi", name, version.as_deref()),
            _ => unreachable!("only packages are installed"),
        };
        let install_into = |into: &Path, version: Option<&str>| match registry {
            "npm" => install::npm(tools, name, version, into, jail),
            _ => install::pypi(tools, name, version, into, jail),
        };
        let Some(kept) = &self.kept else {
            return (install_into(dir, asked), Held::Scratch);
        };
        let not_kept = |look: &mut Look, why: String| {
            look.install = Some(Install::NotKept(why));
            (install_into(dir, asked), Held::Scratch)
        };
        let published = match published(
            &kept.fetcher,
            &tools.npm_registry,
            &tools.pypi_index,
            &c.launch,
        ) {
            Ok(p) => p,
            Err(why) => return not_kept(look, why),
        };
        let key = Key {
            registry,
            source: match registry {
                "npm" => tools.npm_registry.clone(),
                _ => tools.pypi_index.clone(),
            },
            name: name.clone(),
            version: published.version.clone(),
        };
        // The size refusal depends on the bytes and on these caps alone.
        let caps = format!("{}/{}", self.limits.unpacked_bytes, self.limits.file_bytes);
        if let Some(r) = kept.cache.refused(&key, &published, &caps) {
            look.install = Some(Install::RefusedBefore(r.refused.clone()));
            let message = format!("as on {}: {}", r.refused, r.reason);
            return (
                Err(InstallError {
                    message,
                    too_large: true,
                    filled: None,
                }),
                Held::Scratch,
            );
        }
        // An install under way for the same package is waited for, as long as an install may take.
        let wait = tools.timeout + Duration::from_secs(30);
        let (reservation, stale) = match kept.cache.take(&key, &published, wait) {
            Err(why) => return not_kept(look, why),
            // A tree kept under larger caps is over this look's: refused as an install would be.
            Ok(Taken::Hit(_, record)) if record.bytes > self.limits.unpacked_bytes => {
                return (
                    Err(InstallError {
                        message: format!(
                            "the kept tree unpacks to {} bytes, past this crawler's cap",
                            record.bytes
                        ),
                        too_large: true,
                        filled: None,
                    }),
                    Held::Scratch,
                );
            }
            Ok(Taken::Hit(lease, _)) => {
                let tree = match registry {
                    "npm" => install::npm_tree(tools, name, lease.dir()),
                    _ => install::pypi_tree(tools, name, lease.dir()),
                };
                return match tree {
                    Ok(installed) => {
                        look.install = Some(Install::Kept);
                        (Ok(installed), Held::Lease { _lease: lease })
                    }
                    Err(e) => {
                        drop(lease);
                        not_kept(look, format!("the kept tree cannot be run: {}", e.message))
                    }
                };
            }
            Ok(Taken::Install(reservation, stale)) => (reservation, stale),
        };
        // The version the key names, not a tag that may have moved since the registry was asked.
        let installed = match install_into(reservation.dir(), Some(&published.version)) {
            Ok(i) => i,
            Err(e) => {
                // Only a refusal for the package's own size is kept: a disk without room for the
                // cap (the copy out of the installer's tmpfs failing) says nothing of the package.
                if e.too_large && kept.cache.has_room(self.limits.unpacked_bytes) {
                    kept.cache.refuse(&key, &published, &caps, &e.message);
                }
                return (
                    Err(e),
                    Held::Fresh {
                        _reservation: reservation,
                    },
                );
            }
        };
        let digest = installed
            .registry_digest
            .clone()
            .filter(|d| published.digests.contains(d));
        let Some(digest) = digest else {
            look.install = Some(Install::NotKept(format!(
                "the installer took {} for {}, which the registry does not give for it",
                installed
                    .registry_digest
                    .as_deref()
                    .unwrap_or("a package with no digest"),
                published.version
            )));
            return (
                Ok(installed),
                Held::Fresh {
                    _reservation: reservation,
                },
            );
        };
        let mut reservation = reservation;
        match reservation.commit(&digest, &installed.packages) {
            Ok(lease) => {
                look.install = Some(match stale {
                    Some(why) => Install::Reinstalled(why.to_string()),
                    None => Install::Installed,
                });
                (Ok(installed), Held::Lease { _lease: lease })
            }
            Err(why) => {
                look.install = Some(Install::NotKept(why));
                (
                    Ok(installed),
                    Held::Fresh {
                        _reservation: reservation,
                    },
                )
            }
        }
    }

    /// Runs the installed program with `args` after it (an argument vector: no shell reads
    /// them) and `env`, and reads its surface.
    fn run(
        &self,
        isolation: &Isolation,
        installed: &Installed,
        args: &[String],
        env: &[(String, String)],
        home: &Path,
        group: Option<&Group>,
    ) -> probe::ProbeReport {
        let confine = Confinement::new(&self.limits, group).prefix(&self.sandbox_exec);
        let mut argv = installed.argv.clone();
        argv.extend(args.iter().map(Into::into));
        let launch = isolation.launch(
            &argv,
            &installed.binds,
            env,
            home,
            self.limits.tmpfs_bytes,
            confine,
        );
        probe::probe_stdio(&launch, &self.options, self.caps)
    }
}

/// The failure of a server that ran into a cap: its cgroup counted a memory kill or a refused
/// fork, or it ended by the signal of its CPU rlimit (written as a shell writes it: bubblewrap
/// passes its server's death on as 128 + the signal).
fn capped(group: Option<&Group>, exit: Option<Exit>, limits: &Limits) -> Result<(), LookFailure> {
    let status = exit.map(|x| match x {
        Exit::Code(c) => c,
        Exit::Signal(s) => 128 + s,
    });
    let (reason, what) = match (group.and_then(Group::hit), status) {
        (Some(Hit::Memory), _) => (
            Reason::MemoryCap,
            format!(
                "{} bytes of memory (with its tmpfs counted apart)",
                limits.memory_bytes
            ),
        ),
        (Some(Hit::Processes), _) => (
            Reason::ProcessCap,
            format!("{} processes", limits.processes),
        ),
        (None, Some(c)) if c == 128 + rustix::process::Signal::XCPU.as_raw() => (
            Reason::CpuCap,
            format!("{} s of CPU time", limits.cpu_seconds),
        ),
        _ => return Ok(()),
    };
    Err(LookFailure::new(
        reason,
        format!("the look's processes ran into their cap of {what} and were stopped"),
    ))
}

/// `installed` with its tree writable by the server, which may write into its own package at
/// start (a `chmod` of a bundled binary, a state file): the sandbox copies the tree at every start
/// onto a tmpfs of `bytes` at the tree's own place, where every path inside it points, so a kept
/// tree never changes and nothing the server writes reaches the host's disk. bubblewrap's overlay
/// (`--overlay-src`) would spare the copy, but bubblewrap 0.8 has none.
fn writable(mut installed: Installed, bytes: u64) -> Installed {
    for b in installed
        .binds
        .iter_mut()
        .filter(|b| b.dest == installed.tree)
    {
        b.copy = Some(bytes);
    }
    installed
}

/// `start` with the required arguments a usage error on `stderr` asked for, each filled as a
/// person would fill it and recorded as a placeholder; `None` when it asked for none, or for one
/// the server was already given.
fn asked_for(start: &Start, stderr: &[u8], scratch: &Path) -> Option<Start> {
    let wants = usage::wanted(&String::from_utf8_lossy(stderr));
    if wants.is_empty() {
        return None;
    }
    let mut again = start.clone();
    for w in wants {
        let value = filled(w.fill, scratch)?;
        if let Some(name) = &w.option {
            if start.args().iter().any(|a| a == name) {
                return None;
            }
        }
        again.made(w.option.as_deref(), value).ok()?;
    }
    Some(again)
}

/// What a person would give an argument or a variable of this kind: the choice, an empty
/// directory the server may write (`scratch`), a path in it, or the placeholder text.
fn filled(fill: Fill, scratch: &Path) -> Option<String> {
    Some(match fill {
        Fill::Choice(c) => c,
        Fill::Directory => scratch.to_str()?.to_string(),
        Fill::File => scratch.join(PLACEHOLDER).to_str()?.to_string(),
        Fill::Text => PLACEHOLDER.to_string(),
    })
}

/// The placeholder of a variable the server named: a credential gets the placeholder text, any
/// other variable what its name says it holds (`ALLOWED_DIR` an empty directory).
fn env_placeholder(name: &str, scratch: &Path) -> String {
    match env_needs::is_credential(name) {
        true => PLACEHOLDER.to_string(),
        false => filled(usage::fill_for(name), scratch).unwrap_or_else(|| PLACEHOLDER.to_string()),
    }
}

/// The last lines the server wrote to standard error, safe to print: often the reason it
/// stopped.
fn stderr_tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let tail = lines[lines.len().saturating_sub(3)..].join(" | ");
    format!(
        "; its standard error ends: {}",
        pinlog_core::render::quoted(&tail, 300)
    )
}

/// What a look says of the lines of a server's output it skipped, if any.
fn noise_note(noise: &Noise) -> Option<String> {
    (noise.lines > 0).then(|| {
        pinlog_core::render::safe(&format!(
            "skipped {} lines ({} bytes) of its standard output that are not JSON-RPC messages, \
             the first {}",
            noise.lines,
            noise.bytes,
            pinlog_core::render::quoted(&noise.first(), 80)
        ))
        .into_owned()
    })
}

/// A surface whose readings disagreed is not one surface: nothing is appended for it.
fn complete(s: Surface) -> Result<Surface, LookFailure> {
    if s.complete {
        Ok(s)
    } else {
        Err(LookFailure::new(
            Reason::Unstable,
            format!("the {} readings of a listing disagreed", s.passes),
        ))
    }
}

/// The failure, with the exit status of a server that ended on its own; a signal is written as
/// a shell writes it, 128 + the signal's number.
fn exit_failure(e: &pinlog_mcp::error::WireError, exit: Option<Exit>) -> LookFailure {
    let mut f = LookFailure::from_wire(e);
    if f.reason == Reason::Exited {
        f.exit_code = exit.map(|x| match x {
            Exit::Code(c) => c,
            Exit::Signal(s) => 128 + s,
        });
    }
    f
}
