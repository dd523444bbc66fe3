//! Servers a test starts on loopback ports: any command, and the MCP reference server.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::repo::installed;

/// A server process listening on a loopback port, stopped when dropped.
pub struct Listening {
    child: Child,
    pub port: u16,
    /// Its Streamable HTTP endpoint, `http://127.0.0.1:<port>/mcp` unless a test says otherwise.
    pub url: String,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free loopback port.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `cmd` (told to listen on `port`) and waits until the port accepts connections.
pub fn listening(mut cmd: Command, port: u16) -> Listening {
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    let server = Listening {
        child,
        port,
        url: format!("http://127.0.0.1:{port}/mcp"),
    };
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        assert!(Instant::now() < deadline, "nothing listened on {port}");
        std::thread::sleep(Duration::from_millis(100));
    }
    server
}

/// The reference server `server-everything` over HTTP: `streamableHttp` (at `/mcp`) or the
/// 2024-11-05 `sse` transport (at `/sse`).
pub fn everything(transport: &str) -> Listening {
    let port = free_port();
    let mut cmd = Command::new("node");
    cmd.arg(installed(
        ".ci/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    ))
    .arg(transport)
    .env("PORT", port.to_string());
    let mut server = listening(cmd, port);
    if transport == "sse" {
        server.url = format!("http://127.0.0.1:{port}/sse");
    }
    server
}
