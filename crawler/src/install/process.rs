//! An installer run: a deadline, a process group killed whole, and the end of its standard error
//! as the failure.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::InstallError;

/// Runs an installer with a deadline, in a process group of its own that is killed whole
/// afterwards (pip re-executes itself, npm starts git): nothing it started outlives it. Its
/// standard error (the end of it) is the failure.
/// A confined installer that ran out of room ran into the unpacked-size cap: its tmpfs filled
/// (`ENOSPC`), or one file passed the file-size cap (`EFBIG`, or death by `SIGXFSZ`).
pub(super) fn run(
    cmd: Command,
    timeout: Duration,
    what: &str,
    jailed: bool,
) -> Result<(), InstallError> {
    run_to(cmd, timeout, what, Stdio::null(), jailed)
}

/// [`run`], with standard output going to `stdout`.
pub(super) fn run_to(
    mut cmd: Command,
    timeout: Duration,
    what: &str,
    stdout: Stdio,
    jailed: bool,
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
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" | ");
    let too_large = jailed
        && (status.code() == Some(128 + rustix::process::Signal::XFSZ.as_raw())
            || [
                "ENOSPC",
                "No space left on device",
                "EFBIG",
                "File too large",
            ]
            .iter()
            .any(|m| text.contains(m)));
    Err(InstallError {
        message: format!(
            "{what} failed ({status}): {}",
            pinlog_core::render::quoted(&tail, 300)
        ),
        too_large,
    })
}
