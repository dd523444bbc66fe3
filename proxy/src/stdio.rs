//! The stdio proxy: the client talks to this process's standard input and output, and the server
//! runs as its child. Lines go through a [`Session`]; the server's standard error is passed on a
//! line at a time, rendered safe.

use std::ffi::OsString;
use std::process::Stdio;
use std::time::Duration;

use pinlog_core::render::safe;
use tokio::io::{AsyncWriteExt, Stdout};
use tokio::process::{Child, ChildStdin, Command};

use crate::lines::Lines;
use crate::session::{Action, OnDrift, Outcome, Pins, Session};

/// Set (by the `pinlog` binary) when it started the proxy again with an allocator option of its
/// own in the environment: the server must not inherit that option, nor this marker.
pub const LEAN_MARKER: &str = "PINLOG_PROXY_LEAN";
const LEAN_OPTION: &str = "MIMALLOC_ARENA_EAGER_COMMIT";

/// The longest line either side may send, in bytes.
pub const MAX_MESSAGE: usize = 16 << 20;

pub struct StdioOptions {
    /// The server's command and arguments, run without a shell.
    pub argv: Vec<OsString>,
    /// What people see the server called.
    pub label: String,
    pub on_drift: OnDrift,
}

/// How the proxy ended: the exit status it should have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The session ran; the server exited with this status (0 when it was ended by the proxy).
    Served(i32),
    /// Blocked on drift (exit 1).
    Blocked,
    /// The surface could not be checked (exit 4).
    Unchecked,
}

/// Runs one session until the client closes its side (or the server ends an open session).
pub async fn run<P: Pins>(options: StdioOptions, pins: P) -> Result<Ended, String> {
    let (program, args) = options
        .argv
        .split_first()
        .ok_or("give the server's command after --")?;
    let mut command = Command::new(program);
    if std::env::var_os(LEAN_MARKER).is_some() {
        command.env_remove(LEAN_MARKER).env_remove(LEAN_OPTION);
    }
    let mut child = command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", safe(&program.to_string_lossy())))?;
    let mut server_in = child.stdin.take();
    let mut server_out = Lines::new(child.stdout.take().expect("piped"), MAX_MESSAGE);
    let mut server_err = Lines::new(child.stderr.take().expect("piped"), 64 << 10);
    let label = options.label.clone();
    tokio::spawn(async move {
        // The server's standard error is shown as text, never as bytes a terminal would obey.
        while let Ok(Some(line)) = server_err.next().await {
            eprintln!(
                "[{}] {}",
                safe(&label),
                safe(&String::from_utf8_lossy(&line))
            );
        }
    });
    let mut client_in = Lines::new(tokio::io::stdin(), MAX_MESSAGE);
    let mut client_out = tokio::io::stdout();
    let mut session = Session::new(pins, &options.label, options.on_drift, MAX_MESSAGE);
    let (mut client_open, mut server_open) = (true, true);
    loop {
        let actions = tokio::select! {
            line = client_in.next(), if client_open => match line {
                Ok(Some(line)) => session.from_client(line),
                _ => {
                    client_open = false;
                    Vec::new()
                }
            },
            line = server_out.next(), if server_open => match line {
                Ok(Some(line)) => session.from_server(line),
                _ => {
                    server_open = false;
                    Vec::new()
                }
            },
        };
        apply(actions, &mut server_in, &mut client_out).await;
        if session.outcome() != Outcome::Open && server_in.is_some() {
            // Blocked: the server gets nothing more, and is not left running.
            server_in = None;
            let _ = child.start_kill();
        }
        if !client_open {
            break;
        }
        if !server_open && session.outcome() == Outcome::Open {
            if session.is_checking() {
                let actions = session.server_gone();
                apply(actions, &mut server_in, &mut client_out).await;
                continue;
            }
            break;
        }
    }
    drop(server_in);
    let status = finish(&mut child).await;
    Ok(match session.outcome() {
        Outcome::Open => Ended::Served(status),
        Outcome::Blocked => Ended::Blocked,
        Outcome::Unchecked => Ended::Unchecked,
    })
}

async fn apply(actions: Vec<Action>, server: &mut Option<ChildStdin>, client: &mut Stdout) {
    for action in actions {
        match action {
            Action::ToServer(bytes) => {
                if let Some(s) = server.as_mut() {
                    if s.write_all(&bytes).await.is_err() || s.flush().await.is_err() {
                        *server = None;
                    }
                }
            }
            Action::ToClient(bytes) => {
                // A client that went away is noticed when its input ends.
                let _ = client.write_all(&bytes).await;
                let _ = client.flush().await;
            }
            Action::Note(text) => eprintln!("pinlog: {text}"),
        }
    }
}

/// Waits for the server to end once its input is closed, then ends it; its exit status.
async fn finish(child: &mut Child) -> i32 {
    if let Ok(Ok(status)) = tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
        return status.code().unwrap_or(0);
    }
    let _ = child.kill().await;
    0
}
