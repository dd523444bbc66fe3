//! Helpers shared by the end-to-end tests of the binary; each test file uses a part of them.
#![allow(dead_code)]

pub mod crawl;

use std::path::PathBuf;

/// A file `.ci/setup` installs (or one of the repository's), as a path string; a missing one
/// fails the test with what to run.
pub fn installed(rel: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel);
    assert!(
        p.exists(),
        "{} is missing: run `bash .ci/setup`",
        p.display()
    );
    p.to_str().unwrap().to_string()
}

/// Standard output or error as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

/// A server process listening on a loopback port, stopped when dropped.
pub struct Listening {
    child: std::process::Child,
    pub port: u16,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free loopback port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `cmd` (told to listen on `port`) and waits until the port accepts connections.
pub fn listening(mut cmd: std::process::Command, port: u16) -> Listening {
    let child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the server starts");
    let server = Listening { child, port };
    let addr = format!("127.0.0.1:{port}").parse().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_millis(200))
        .is_err()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "nothing listened on {port}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    server
}
