//! The stdio transport: a server run as a child process, one JSON-RPC message per line on its
//! standard input and output, its standard error kept (up to a cap) for the report.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::caps::Caps;
use crate::error::WireError;
use crate::lines::{self, Lines};

/// How to start a server: an explicit argv, never a shell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Launch {
    pub argv: Vec<OsString>,
    /// Variables set for the server, on top of the inherited environment (or alone, with
    /// `clear_env`).
    pub env: Vec<(OsString, OsString)>,
    pub clear_env: bool,
    pub cwd: Option<PathBuf>,
}

/// Standard error as captured: the first bytes up to the cap, and how many more were dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stderr {
    pub kept: Vec<u8>,
    pub dropped: u64,
}

/// How a server process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
}

impl Exit {
    fn of(status: std::process::ExitStatus) -> Option<Exit> {
        #[cfg(unix)]
        if let Some(n) = std::os::unix::process::ExitStatusExt::signal(&status) {
            return Some(Exit::Signal(n));
        }
        status.code().map(Exit::Code)
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exited {c}"),
            Exit::Signal(n) => write!(f, "killed by signal {n}"),
        }
    }
}

pub struct StdioTransport {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
    stderr: Arc<Mutex<Stderr>>,
    /// The server closed its output or input: it is ending, or ended, on its own.
    gone: bool,
    caps: Caps,
}

impl StdioTransport {
    /// Starts the server. It is killed if this value is dropped without [`Self::shutdown`].
    pub fn spawn(launch: &Launch, caps: Caps) -> Result<StdioTransport, WireError> {
        let (program, args) = launch
            .argv
            .split_first()
            .ok_or_else(|| WireError::Unreachable("no command to run".into()))?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if launch.clear_env {
            cmd.env_clear();
        }
        cmd.envs(launch.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &launch.cwd {
            cmd.current_dir(dir);
        }
        let mut child = cmd.spawn().map_err(|e| {
            WireError::Unreachable(format!("cannot start {}: {e}", program.to_string_lossy()))
        })?;
        let stdin = child.stdin.take();
        // A message must end with its line end: one cut off by the end of the output is not read.
        let stdout = Lines::new(
            BufReader::new(child.stdout.take().expect("stdout is piped")),
            caps.message_bytes,
        )
        .total(caps.total_bytes)
        .whole_lines_only();
        let stderr = Arc::new(Mutex::new(Stderr::default()));
        let mut err_pipe = child.stderr.take().expect("stderr is piped");
        let sink = Arc::clone(&stderr);
        let cap = caps.stderr_bytes;
        tokio::spawn(async move {
            let mut buf = [0u8; 8192];
            while let Ok(n) = err_pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let mut s = sink.lock().expect("stderr lock");
                let room = cap.saturating_sub(s.kept.len()).min(n);
                s.kept.extend_from_slice(&buf[..room]);
                s.dropped += (n - room) as u64;
            }
        });
        Ok(StdioTransport {
            child,
            stdin,
            stdout,
            stderr,
            gone: false,
            caps,
        })
    }

    pub async fn send(&mut self, message: &[u8]) -> Result<(), WireError> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| WireError::Closed("standard input is closed".into()))?;
        let mut line = Vec::with_capacity(message.len() + 1);
        line.extend_from_slice(message);
        line.push(b'\n');
        let written = match stdin.write_all(&line).await {
            Ok(()) => stdin.flush().await,
            Err(e) => Err(e),
        };
        written.map_err(|e| {
            self.gone = true;
            WireError::Closed(format!("the server stopped reading its input ({e})"))
        })
    }

    /// The next line that is not blank, at most `message_bytes` long.
    pub async fn recv(&mut self) -> Result<Vec<u8>, WireError> {
        loop {
            let mut line = match self.stdout.next().await {
                Ok(Some(line)) => line,
                Ok(None) => {
                    self.gone = true;
                    return Err(WireError::Closed(
                        "the server closed its output before answering".into(),
                    ));
                }
                Err(lines::Error::Io(e)) => {
                    self.gone = true;
                    return Err(WireError::Closed(format!(
                        "reading the server's output: {e}"
                    )));
                }
                Err(e @ lines::Error::TooLong(_)) => {
                    return Err(WireError::TooLarge(e.to_string()))
                }
                Err(lines::Error::TooMuch(total)) => {
                    return Err(WireError::TooLarge(format!(
                        "more than {total} bytes from the server in all"
                    )))
                }
            };
            // Here a line of whitespace is blank too, and every carriage return before the line
            // end is dropped.
            while line.last() == Some(&b'\r') {
                line.pop();
            }
            if !line.iter().all(u8::is_ascii_whitespace) {
                return Ok(line);
            }
        }
    }

    /// What the server wrote on standard error so far.
    pub fn stderr(&self) -> Stderr {
        self.stderr.lock().expect("stderr lock").clone()
    }

    /// Ends the server as the stdio transport asks: close its input, wait, then SIGTERM, then
    /// SIGKILL. Also how it ended, if it ended on its own: it had exited or closed its output
    /// before its input was closed, and needed no signal.
    pub async fn shutdown(mut self) -> (Stderr, Option<Exit>) {
        let own = self.gone || matches!(self.child.try_wait(), Ok(Some(_)));
        self.stdin = None;
        let grace = Duration::from_millis(self.caps.shutdown_grace_ms);
        let mut exit = None;
        match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(Ok(status)) if own => exit = Exit::of(status),
            Ok(_) => {}
            Err(_) => {
                #[cfg(unix)]
                if let Some(pid) = self.child.id() {
                    if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
                        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
                    }
                }
                if tokio::time::timeout(grace, self.child.wait())
                    .await
                    .is_err()
                {
                    let _ = self.child.kill().await;
                }
            }
        }
        // Let the reader take what the server wrote last.
        tokio::time::sleep(Duration::from_millis(10)).await;
        (self.stderr(), exit)
    }
}
