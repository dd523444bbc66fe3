//! The stdio proxy: the client talks to this process's standard input and output, and the server
//! runs as its child. Lines go through a [`Session`]; the server's standard error is passed on a
//! line at a time, rendered safe.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pinlog_core::render::{quoted, safe};
use pinlog_mcp::lines::Lines;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

use crate::queue::Budget;
use crate::session::{
    Action, OnDrift, OnPublicMismatch, Outcome, Pins, Public, ServerEnd, Session,
};

/// How many of the server's last standard error lines are kept to say why it ended, and how many
/// characters of each.
const LAST_LINES: usize = 8;
const LAST_LINE_CHARS: usize = 200;

/// Set (by the `pinlog` binary) when it started the proxy again with [`LEAN_OPTIONS`] in the
/// environment: the server must inherit neither those options nor this marker.
pub const LEAN_MARKER: &str = "PINLOG_PROXY_LEAN";

/// The allocator options the proxy runs with: memory committed as it is used, and given back to
/// the system as soon as it is freed, so that what is resident follows what the queues hold
/// (docs/PROXY.md, "Memory") rather than what they once held.
pub const LEAN_OPTIONS: [(&str, &str); 2] = [
    ("MIMALLOC_ARENA_EAGER_COMMIT", "0"),
    ("MIMALLOC_PURGE_DELAY", "0"),
];

/// The longest line either side may send, in bytes.
pub const MAX_MESSAGE: usize = 16 << 20;

pub struct StdioOptions {
    /// The server's command and arguments, run without a shell.
    pub argv: Vec<OsString>,
    /// What people see the server called.
    pub label: String,
    pub on_drift: OnDrift,
    /// The public log the session compares with, and what a difference does.
    pub public: Option<(Box<dyn Public + Send>, OnPublicMismatch)>,
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
        command.env_remove(LEAN_MARKER);
        for (name, _) in LEAN_OPTIONS {
            command.env_remove(name);
        }
    }
    let mut child = command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| {
            format!(
                "cannot start {}: {e}; the server was not started. Check its command in the \
                 client's configuration: is it installed, and on the PATH the client gives its \
                 servers? (A full path to the program works everywhere.)",
                quoted(&program.to_string_lossy(), 200)
            )
        })?;
    // Each direction is written by a task of its own, so that a side slow to read never stops
    // the proxy from reading the other (two pipes both full would otherwise deadlock) until its
    // queue is full: then neither side is read until it drains (backpressure), as what is read
    // from either side may be answered to both.
    let mut to_server = Some(writer(child.stdin.take().expect("piped")));
    let to_client = writer(tokio::io::stdout());
    let mut server_out = lines(child.stdout.take().expect("piped"), MAX_MESSAGE);
    let mut server_err = lines(child.stderr.take().expect("piped"), 64 << 10);
    let label = options.label.clone();
    let last_lines = Arc::new(Mutex::new(VecDeque::new()));
    let kept = last_lines.clone();
    let mut stderr_task = tokio::spawn(async move {
        // The server's standard error is shown as text, never as bytes a terminal would obey;
        // it is drained to the end, as a server whose stderr pipe closes dies of SIGPIPE.
        loop {
            let shown = match server_err.next().await {
                Ok(Some(line)) => safe(&String::from_utf8_lossy(&line)).into_owned(),
                Ok(None) => break,
                Err(_) => "(a line over 64 KiB, not shown)".to_string(),
            };
            eprintln!("[{}] {shown}", safe(&label));
            keep_last(&kept, &shown);
        }
    });
    let mut client_in = lines(tokio::io::stdin(), MAX_MESSAGE);
    let mut session = Session::new(pins, &options.label, options.on_drift, MAX_MESSAGE);
    if let Some((public, on)) = options.public {
        session = session.with_public(public, on);
    }
    let (mut client_open, mut server_open) = (true, true);
    loop {
        let deadline = session.deadline();
        let to_server_room = to_server.as_ref().is_none_or(Queue::has_room);
        let room = to_client.has_room() && to_server_room;
        let actions = tokio::select! {
            line = client_in.next(), if client_open && room && session.takes_from_client() => {
                match line {
                    Ok(Some(line)) => session.from_client(line),
                    Ok(None) => {
                        client_open = false;
                        session.client_gone();
                        Vec::new()
                    }
                    // The rest of the line cannot be told from a message: the client is done.
                    Err(e) => {
                        client_open = false;
                        session.client_gone();
                        vec![Action::Note(format!(
                            "the client's input cannot be read ({e}); its side is closed"
                        ))]
                    }
                }
            }
            line = server_out.next(), if server_open && room => match line {
                Ok(Some(line)) => session.from_server(line),
                Ok(None) => {
                    server_open = false;
                    Vec::new()
                }
                Err(e) => {
                    server_open = false;
                    session.server_broken(&e.to_string())
                }
            },
            _ = sleep_until(deadline), if deadline.is_some() => session.timed_out(),
            () = to_client.budget.room(), if !to_client.has_room() => Vec::new(),
            () = room_in(&to_server), if !to_server_room => Vec::new(),
        };
        apply(actions, &mut to_server, &to_client);
        if session.outcome() != Outcome::Open && to_server.is_some() {
            // Blocked: the server gets nothing more, and is not left running.
            to_server = None;
            let _ = child.start_kill();
        }
        if !client_open {
            break;
        }
        if !server_open && session.outcome() == Outcome::Open {
            if session.is_unchecked_yet() {
                // What it said last is read to its end, and its status taken, before it is told.
                let _ = tokio::time::timeout(Duration::from_secs(1), &mut stderr_task).await;
                let status = tokio::time::timeout(Duration::from_secs(1), child.wait())
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .map(status_code);
                let end = ServerEnd {
                    status,
                    last_lines: last_lines
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .iter()
                        .cloned()
                        .collect(),
                };
                let actions = session.server_gone(&end);
                apply(actions, &mut to_server, &to_client);
                continue;
            }
            break;
        }
    }
    if session.refused() > 0 {
        eprintln!(
            "pinlog: refused {} message(s) that are not strict JSON-RPC",
            session.refused()
        );
    }
    drop(to_server);
    drop(to_client);
    let status = finish(&mut child).await;
    Ok(match session.outcome() {
        Outcome::Open => Ended::Served(status),
        Outcome::Blocked => Ended::Blocked,
        Outcome::Unchecked => Ended::Unchecked,
    })
}

/// Keeps `line` (already safe) among the last [`LAST_LINES`], cut to [`LAST_LINE_CHARS`].
fn keep_last(kept: &Mutex<VecDeque<String>>, line: &str) {
    let mut cut: String = line.chars().take(LAST_LINE_CHARS).collect();
    if cut.len() < line.len() {
        cut.push('…');
    }
    let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
    if kept.len() == LAST_LINES {
        kept.pop_front();
    }
    kept.push_back(cut);
}

/// The lines of `input`, read through a buffer of 64 KiB.
fn lines<R: AsyncRead + Unpin>(input: R, max: usize) -> Lines<BufReader<R>> {
    Lines::new(BufReader::with_capacity(64 << 10, input), max)
}

/// A deadline as a sleep; never ends without one (the branch is disabled then).
async fn sleep_until(deadline: Option<std::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d.into()).await,
        None => std::future::pending().await,
    }
}

/// What is waiting to be written to one side, bounded by its [`Budget`].
struct Queue {
    tx: tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
    budget: Budget,
}

impl Queue {
    fn has_room(&self) -> bool {
        self.budget.has_room()
    }

    fn send(&self, bytes: Vec<u8>) -> Result<(), ()> {
        self.budget.add(bytes.len());
        self.tx.send(bytes).map_err(|_| ())
    }
}

async fn room_in(queue: &Option<Queue>) {
    if let Some(q) = queue {
        q.budget.room().await;
    }
}

/// A task writing what it is sent to `out`, in order, until every sender is dropped (closing
/// `out`). Once `out` fails, what is sent is dropped, so that a side gone never holds the other.
fn writer<W: AsyncWrite + Unpin + Send + 'static>(mut out: W) -> Queue {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let budget = Budget::default();
    let written = budget.clone();
    tokio::spawn(async move {
        let mut open = true;
        while let Some(bytes) = rx.recv().await {
            open = open && out.write_all(&bytes).await.is_ok() && out.flush().await.is_ok();
            written.remove(bytes.len());
        }
    });
    Queue { tx, budget }
}

/// A message as a line of the stdio transport.
fn line(mut message: Vec<u8>) -> Vec<u8> {
    message.push(b'\n');
    message
}

fn apply(actions: Vec<Action>, server: &mut Option<Queue>, client: &Queue) {
    for action in actions {
        match action {
            Action::ToServer(message) => {
                if let Some(s) = server.as_ref() {
                    if s.send(line(message)).is_err() {
                        *server = None;
                    }
                }
            }
            // A client that went away is noticed when its input ends.
            Action::ToClient(message) => {
                let _ = client.send(line(message));
            }
            Action::Note(text) => eprintln!("pinlog: {text}"),
        }
    }
}

/// Waits for the server to end once its input is closed, then ends it; its exit status, 128 +
/// the signal for one that a signal ended (as shells report it).
async fn finish(child: &mut Child) -> i32 {
    let status = match tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
        Ok(Ok(status)) => status,
        _ => {
            let _ = child.kill().await;
            return 0;
        }
    };
    status_code(status)
}

/// An exit status as shells report it: 128 + the signal for one that a signal ended.
fn status_code(status: std::process::ExitStatus) -> i32 {
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return 128 + signal;
    }
    status.code().unwrap_or(1)
}
