//! Helpers shared by the HTTP tests: paths `.ci/setup` installs, and servers on loopback ports.
#![allow(dead_code)]

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A file `.ci/setup` installs (or one of the repository's); a missing one fails the test with
/// what to run.
pub fn installed(rel: &str) -> String {
    let p = repo().join(rel);
    assert!(
        p.exists(),
        "{} is missing: run `bash .ci/setup`",
        p.display()
    );
    p.to_str().unwrap().to_string()
}

/// A server process on a loopback port, stopped when dropped.
pub struct Running {
    child: Child,
    pub port: u16,
    /// Its Streamable HTTP endpoint, `http://127.0.0.1:<port>/mcp` unless a test says otherwise.
    pub url: String,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `cmd` and waits until its port accepts connections.
pub fn start(mut cmd: Command, port: u16) -> Running {
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    let running = Running {
        child,
        port,
        url: format!("http://127.0.0.1:{port}/mcp"),
    };
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the server never listened on {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    running
}

/// The reference server `server-everything` over HTTP: `streamableHttp` (at `/mcp`) or the
/// 2024-11-05 `sse` transport (at `/sse`).
pub fn everything(transport: &str) -> Running {
    let port = free_port();
    let mut cmd = Command::new("node");
    cmd.arg(installed(
        ".ci/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    ))
    .arg(transport)
    .env("PORT", port.to_string());
    let mut r = start(cmd, port);
    if transport == "sse" {
        r.url = format!("http://127.0.0.1:{port}/sse");
    }
    r
}
