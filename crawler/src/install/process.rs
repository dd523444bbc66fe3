//! An installer run: a deadline, a process group killed whole, and the end of its standard error
//! as the failure.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::InstallError;

/// Runs an installer with a deadline, in a process group of its own that is killed whole
/// afterwards (pip re-executes itself, npm starts git): nothing it started outlives it. Its
/// standard error (the end of it) is the failure.
/// A confined installer (`scratch` is its scratch directory) that ran out of room ran into the
/// unpacked-size cap when its scratch tmpfs filled (`ENOSPC` there, or where its message names no
/// place), or one file passed the file-size cap (`EFBIG`, or death by `SIGXFSZ`); `ENOSPC`
/// anywhere else is another file system filling, which says nothing of the package's size.
pub(super) fn run(
    cmd: Command,
    timeout: Duration,
    what: &str,
    scratch: Option<&Path>,
) -> Result<(), InstallError> {
    run_to(cmd, timeout, what, Stdio::null(), scratch)
}

/// [`run`], with standard output going to `stdout`.
pub(super) fn run_to(
    mut cmd: Command,
    timeout: Duration,
    what: &str,
    stdout: Stdio,
    scratch: Option<&Path>,
) -> Result<(), InstallError> {
    use std::os::unix::process::CommandExt;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    let mut stderr = child.stderr.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let _ = (&mut stderr).take(1 << 20).read_to_end(&mut kept);
        // Drain the rest so the installer never blocks on a full pipe.
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
        let _ = tx.send(kept);
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Ok(s),
            Ok(None) if start.elapsed() >= timeout => {
                break Err(format!("{what} took over {} s", timeout.as_secs()))
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => break Err(format!("{what}: {e}")),
        }
    };
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
    // A process that left the group may still hold the pipe: its output is not waited for.
    let kept = rx.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
    let status = status?;
    if status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&kept);
    // pip's list of versions it ignored for their Requires-Python can run to kilobytes and hide
    // the error after it: it is told apart, as the newest version's requirement.
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.contains(IGNORED))
        .collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" | ");
    let ignored = text
        .lines()
        .find_map(newest_ignored)
        .map(|(version, spec)| {
            format!(
                "; pip passed over versions for their Python, the newest, {}, with \
                 Requires-Python {}",
                pinlog_core::render::quoted(&version, 40),
                pinlog_core::render::quoted(&spec, 100)
            )
        })
        .unwrap_or_default();
    let file_cap = passed_file_cap(status.code(), &text);
    let (too_large, filled) = match scratch {
        None => (false, None),
        Some(_) if file_cap => (true, None),
        Some(dir) => match out_of_room(&text) {
            None => (false, None),
            Some(None) => (true, None),
            Some(Some(at)) if Path::new(&at).starts_with(dir) => (true, None),
            Some(Some(at)) => (false, Some(place(&at))),
        },
    };
    Err(InstallError {
        message: format!(
            "{what} failed ({status}): {}{ignored}",
            pinlog_core::render::quoted(&tail, 300)
        ),
        too_large,
        filled,
    })
}

/// Whether an installer, or a process under it, passed the file-size cap: it died by `SIGXFSZ`
/// itself, or says one of its children did (npm: `npm error signal SIGXFSZ`), or a write failed
/// with `EFBIG`.
fn passed_file_cap(code: Option<i32>, text: &str) -> bool {
    code == Some(128 + rustix::process::Signal::XFSZ.as_raw())
        || ["EFBIG", "File too large", "SIGXFSZ"]
            .iter()
            .any(|m| text.contains(m))
}

/// How pip begins the line of versions it passed over for the interpreter it ran for.
const IGNORED: &str = "Ignored the following versions that require a different python version: ";

/// From pip's line of ignored versions (`1.0 Requires-Python >=3.12; 0.9 Requires-Python …`),
/// the newest version and its requirement.
fn newest_ignored(line: &str) -> Option<(String, String)> {
    let at = line.find(IGNORED)? + IGNORED.len();
    let key = |v: &str| -> Vec<u64> {
        v.split(|c: char| !c.is_ascii_digit())
            .filter(|p| !p.is_empty())
            .map(|p| p.parse().unwrap_or(0))
            .collect()
    };
    line[at..]
        .split("; ")
        .filter_map(|pair| {
            let (v, spec) = pair.split_once(" Requires-Python ")?;
            Some((v.trim().to_string(), spec.trim().to_string()))
        })
        .max_by(|a, b| key(&a.0).cmp(&key(&b.0)))
}

/// Whether an installer's standard error says it ran out of room (`ENOSPC`), and where: the
/// first absolute path named on such a line (pip and cp name it there), or on npm's
/// `npm error path` line.
fn out_of_room(text: &str) -> Option<Option<String>> {
    let full = |l: &str| l.contains("ENOSPC") || l.contains("No space left on device");
    if !text.lines().any(full) {
        return None;
    }
    let quoted = |l: &str| {
        l.split(['\'', '"'])
            .skip(1)
            .step_by(2)
            .find(|w| w.starts_with('/'))
            .map(str::to_string)
    };
    let named = text
        .lines()
        .filter(|l| full(l))
        .find_map(quoted)
        .or_else(|| {
            text.lines().find_map(|l| {
                let at = l.trim().strip_prefix("npm error path ")?.trim();
                at.starts_with('/').then(|| at.to_string())
            })
        });
    Some(named)
}

/// Which file system of a confined installer a path lies on, in words.
fn place(at: &str) -> String {
    let at_path = Path::new(at);
    let which = if at_path.starts_with(super::jail::JAIL_OUT) {
        "the disk under the install's scratch directory"
    } else if at_path.starts_with(super::jail::JAIL_HOME) {
        "the installer's home, where its caches are"
    } else if at_path.starts_with("/tmp") {
        "the installer's /tmp"
    } else {
        "a file system outside the install's scratch directory"
    };
    format!(
        "{which} ({})",
        pinlog_core::render::quoted(&pinlog_core::render::safe(at), 120)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_past_its_cap_is_read_from_the_status_or_the_messages() {
        let xfsz = 128 + rustix::process::Signal::XFSZ.as_raw();
        assert!(passed_file_cap(Some(xfsz), ""));
        // npm reports its child's death and exits 1 itself.
        let npm = "npm error process terminated\nnpm error signal SIGXFSZ";
        assert!(passed_file_cap(Some(1), npm));
        assert!(passed_file_cap(
            Some(1),
            "OSError: [Errno 27] File too large"
        ));
        assert!(!passed_file_cap(Some(1), "npm error code E404"));
    }

    #[test]
    fn where_an_installer_ran_out_of_room_is_read_from_its_messages() {
        let pip = "ERROR: Could not install packages due to an OSError: [Errno 28] No space left \
                   on device: '/w/look-0/venv/lib/python3.11/site-packages/numpy/core/x.so'";
        assert_eq!(
            out_of_room(pip),
            Some(Some(
                "/w/look-0/venv/lib/python3.11/site-packages/numpy/core/x.so".into()
            ))
        );
        let cp = "cp: error writing '/pinlog-out/venv/lib/x': No space left on device";
        assert_eq!(out_of_room(cp), Some(Some("/pinlog-out/venv/lib/x".into())));
        let npm = "npm error code ENOSPC\nnpm error syscall write\n\
                   npm error path /home/installer/.npm/_cacache/tmp/abc\n\
                   npm error nospc ENOSPC: no space left on device, write";
        assert_eq!(
            out_of_room(npm),
            Some(Some("/home/installer/.npm/_cacache/tmp/abc".into()))
        );
        assert_eq!(
            out_of_room("npm error nospc ENOSPC: no space left on device, write"),
            Some(None)
        );
        assert_eq!(out_of_room("ERROR: No matching distribution"), None);
        assert!(place("/pinlog-out/venv/x").starts_with("the disk under"));
        assert!(place("/home/installer/pip-cache/x").starts_with("the installer's home"));
        assert!(place("/tmp/pip-unpack-1/x.whl").starts_with("the installer's /tmp"));
    }

    #[test]
    fn the_newest_ignored_version_gives_the_requirement() {
        let line = "ERROR: Ignored the following versions that require a different python \
                    version: 0.0.1 Requires-Python >=3.8.0,<3.12; 0.10.1 Requires-Python \
                    >=3.12.1; 0.9.0 Requires-Python >=3.11";
        assert_eq!(
            newest_ignored(line),
            Some(("0.10.1".into(), ">=3.12.1".into()))
        );
        assert_eq!(newest_ignored("ERROR: No matching distribution"), None);
    }
}
