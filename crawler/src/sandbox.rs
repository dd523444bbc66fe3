//! Running a probed server in bubblewrap: no network, the system read-only, an empty home, a
//! writable copy of the package's tree on a tmpfs, a minimal environment, every capability dropped, and a PID namespace
//! so that killing the sandbox kills every process the server started.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pinlog_mcp::stdio::Launch;

/// The value a credential-shaped variable gets on the placeholder retry.
pub const PLACEHOLDER: &str = "pinlog-placeholder";
/// The home directory inside the sandbox, empty at every start.
const HOME: &str = "/home/probe";
/// An empty directory inside the sandbox at every start, for a server that must be given one.
const SCRATCH: &str = "/tmp/pinlog-scratch";
/// System directories that are either directories (bound read-only) or links into `/usr`.
const SYSTEM: [&str; 7] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32",
];

/// Whether `path` lies in the system directories every sandbox shows.
pub fn is_system(path: &Path) -> bool {
    SYSTEM.iter().any(|d| path.starts_with(d))
}

/// A file or directory of the host shown in the sandbox: `source` at `dest`, read-only; or with
/// `copy`, a directory copied at every start onto a tmpfs of that many bytes at `dest`, which the
/// server may write while `source` never changes and the host's disk gets nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bind {
    pub source: PathBuf,
    pub dest: PathBuf,
    pub copy: Option<u64>,
}

impl Bind {
    /// `path` shown read-only at its own place.
    pub fn same(path: &Path) -> Bind {
        Bind {
            source: path.to_path_buf(),
            dest: path.to_path_buf(),
            copy: None,
        }
    }
}
/// What of `/etc` a program may need to start; nothing else of it is visible.
const ETC: [&str; 10] = [
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    // Certificates only: /etc/ssl/private holds keys.
    "/etc/ssl/certs",
    "/etc/ssl/openssl.cnf",
    "/etc/ca-certificates",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
];

/// New namespaces of every kind, the server as uid/gid 65534 with no user namespace of its own
/// (it cannot become root in one), and the sandbox dying with the crawler.
const NAMESPACES: [&str; 9] = [
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--uid",
    "65534",
    "--gid",
    "65534",
    "--die-with-parent",
    "--new-session",
];

/// How stdio probes are isolated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Isolation {
    /// bubblewrap at this path, checked to work on this machine.
    Bubblewrap(PathBuf),
    /// No sandbox: the operator said `--unsandboxed`.
    None,
}

impl Isolation {
    /// bubblewrap if it is installed and can make its namespaces here; the reason if not.
    pub fn detect() -> Result<Isolation, String> {
        let bwrap = find_program("bwrap").ok_or(
            "bubblewrap (bwrap) is not installed; install it (Debian: apt-get install bubblewrap)",
        )?;
        let mut check = Command::new(&bwrap);
        check
            // The namespace flags every launch uses: a bubblewrap that lacks one (before 0.8, no
            // --disable-userns) is no sandbox here.
            .args(NAMESPACES)
            .args(["--ro-bind", "/", "/", "true"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let out = check
            .output()
            .map_err(|e| format!("cannot run {}: {e}", bwrap.display()))?;
        if !out.status.success() {
            return Err(format!(
                "bubblewrap cannot create its namespaces here: {}",
                pinlog_core::render::safe(String::from_utf8_lossy(&out.stderr).trim())
            ));
        }
        Ok(Isolation::Bubblewrap(bwrap))
    }

    /// The name written in an entry's `probe.sandbox`.
    pub fn name(&self) -> &'static str {
        match self {
            Isolation::Bubblewrap(_) => "bubblewrap",
            Isolation::None => "none",
        }
    }

    /// An empty directory the server may write, made at every start: inside the sandbox's `/tmp`,
    /// or in `home` when there is no sandbox.
    pub fn scratch(&self, home: &Path) -> PathBuf {
        match self {
            Isolation::Bubblewrap(_) => PathBuf::from(SCRATCH),
            Isolation::None => home.join("pinlog-scratch"),
        }
    }

    /// How to run `argv` under this isolation. `binds` are what of the host the server may read
    /// (its installed package, the interpreter and its library); `env` is its whole environment besides
    /// `PATH`, `HOME`, `LANG` and `TMPDIR`; `home` is an empty directory to use as home when
    /// there is no sandbox to make one. In the sandbox, `/tmp` and the home are tmpfs of
    /// `tmpfs_bytes` each, and `confine` (the `sandbox-exec` step, which sets the other caps)
    /// starts bubblewrap.
    pub fn launch(
        &self,
        argv: &[OsString],
        binds: &[Bind],
        env: &[(String, String)],
        home: &Path,
        tmpfs_bytes: u64,
        confine: Vec<OsString>,
    ) -> Launch {
        let mut base: Vec<(OsString, OsString)> = vec![
            ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
            ("LANG".into(), "C.UTF-8".into()),
        ];
        base.extend(env.iter().map(|(k, v)| (k.into(), v.into())));
        match self {
            Isolation::None => {
                // Without it the server fails as it would have without the argument.
                let _ = std::fs::create_dir_all(self.scratch(home));
                base.push(("HOME".into(), home.into()));
                base.push(("TMPDIR".into(), home.into()));
                Launch {
                    argv: argv.to_vec(),
                    env: base,
                    clear_env: true,
                    cwd: Some(home.to_path_buf()),
                }
            }
            Isolation::Bubblewrap(bwrap) => {
                let mut a = confine;
                a.push(bwrap.into());
                a.extend(base_args(tmpfs_bytes));
                let size = tmpfs_bytes.to_string();
                a.extend(
                    [
                        "--size", &size, "--tmpfs", "/home", "--dir", HOME, "--chdir", HOME,
                        "--dir", SCRATCH,
                    ]
                    .map(OsString::from),
                );
                // Run first, inside the sandbox: each copy made (the seal of a kept tree lifted
                // for the owner, as a fresh install has it), then the server.
                let mut copies = String::new();
                let mut copy_args: Vec<OsString> = Vec::new();
                for (i, b) in binds.iter().enumerate() {
                    let Some(bytes) = b.copy else {
                        a.extend([
                            "--ro-bind".into(),
                            b.source.clone().into_os_string(),
                            b.dest.clone().into_os_string(),
                        ]);
                        continue;
                    };
                    let from = format!("/pinlog-copy-{i}");
                    a.extend([
                        "--ro-bind".into(),
                        b.source.clone().into_os_string(),
                        from.clone().into(),
                        "--size".into(),
                        bytes.to_string().into(),
                        "--tmpfs".into(),
                        b.dest.clone().into_os_string(),
                    ]);
                    let n = copy_args.len() + 1;
                    copies.push_str(&format!(
                        "cp -a -- {from}/. \"${n}\"/ && chmod -R u+w -- \"${n}\" && "
                    ));
                    copy_args.push(b.dest.clone().into_os_string());
                }
                for b in binds.iter().filter(|b| b.copy.is_none()) {
                    // An interpreter's library shows none of the packages installed beside it.
                    if b.source.join("site-packages").is_dir() {
                        a.extend([
                            "--tmpfs".into(),
                            b.dest.join("site-packages").into_os_string(),
                        ]);
                    }
                }
                base.push(("HOME".into(), HOME.into()));
                base.push(("TMPDIR".into(), "/tmp".into()));
                for (k, v) in &base {
                    a.extend(["--setenv".into(), k.clone(), v.clone()]);
                }
                a.push("--".into());
                if !copies.is_empty() {
                    let n = copy_args.len();
                    let script = format!("{copies}shift {n} && exec \"$@\"");
                    a.extend(["/bin/sh".into(), "-c".into(), script.into(), "sh".into()]);
                    a.extend(copy_args);
                }
                a.extend(argv.iter().cloned());
                Launch {
                    argv: a,
                    env: Vec::new(),
                    clear_env: true,
                    cwd: None,
                }
            }
        }
    }
}

/// bubblewrap's options that every sandbox starts with: new namespaces, no capability, no
/// environment, `/proc`, `/dev`, an empty `/tmp` of `tmpfs_bytes`, the system read-only, and
/// what of `/etc` a program needs to start.
pub fn base_args(tmpfs_bytes: u64) -> Vec<OsString> {
    let size = tmpfs_bytes.to_string();
    let mut a: Vec<OsString> = NAMESPACES.iter().map(OsString::from).collect();
    a.extend(
        [
            "--cap-drop",
            "ALL",
            "--clearenv",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--size",
            &size,
            "--tmpfs",
            "/tmp",
        ]
        .map(OsString::from),
    );
    for dir in SYSTEM {
        match std::fs::read_link(dir) {
            Ok(target) => a.extend(["--symlink".into(), target.into_os_string(), dir.into()]),
            Err(_) if Path::new(dir).is_dir() => {
                a.extend(["--ro-bind".into(), dir.into(), dir.into()])
            }
            Err(_) => {}
        }
    }
    for file in ETC {
        a.extend(["--ro-bind-try".into(), file.into(), file.into()]);
    }
    a
}

/// The first `name` on `PATH`.
pub fn find_program(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}
