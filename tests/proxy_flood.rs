//! `pinlog proxy` against floods, over stdio and Streamable HTTP, with its peak resident memory
//! (VmHWM) read from /proc. A server that sends 400 messages of 1 MiB while its surface is checked
//! is cut off; one that sends them to a client that does not read (on a POST's stream, or the GET
//! stream) is held back, and the client gets every one once it reads; a client that sends 400
//! requests of 1 MiB while the check runs, or to a server that does not read, is held back, and
//! every request reaches the server once it reads. The proxy stays within 48 MiB throughout. A
//! message over the 16 MiB cap, from either side, is refused by name. The servers are
//! tests/fixtures/flood_server.py and flood_http_server.py; the client is this test, writing and
//! reading the proxy's pipes and sockets itself, so that it can stop reading.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use pinlog_testkit::repo::installed;
use pinlog_testkit::server::{free_port, listening, Listening};
use serde_json::{json, Value as J};

const MIB: u64 = 1 << 20;
/// The most the proxy may take, in any of these floods (docs/PROXY.md).
const PEAK: u64 = 48 * MIB;
const FLOOD: usize = 400;

fn python() -> String {
    std::env::var("PINLOG_PYTHON").unwrap_or_else(|_| installed(".ci/venv/bin/python"))
}

/// `pinlog proxy -- flood_server.py MODE --go GO --progress PROGRESS`, its standard error in a file.
struct Proxied {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    dir: PathBuf,
}

impl Proxied {
    fn start(dir: &Path, mode: &str, extra: &[&str]) -> Proxied {
        let child = Command::new(env!("CARGO_BIN_EXE_pinlog"))
            .args(["proxy", "--name", mode, "--"])
            .arg(python())
            .arg(installed("tests/fixtures/flood_server.py"))
            .arg(mode)
            .arg("--go")
            .arg(dir.join("go"))
            .arg("--progress")
            .arg(dir.join("progress"))
            .args(extra)
            .env("PINLOG_HOME", dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
            .spawn()
            .unwrap();
        let mut p = Proxied {
            child,
            stdin: None,
            stdout: None,
            dir: dir.to_path_buf(),
        };
        p.stdin = p.child.stdin.take();
        p.stdout = p.child.stdout.take();
        p
    }

    fn within_bounds(&self) {
        within_bounds(&self.child);
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr")).unwrap()
    }

    /// How many notifications the server sent and calls it answered, so far.
    fn progress(&self) -> (usize, usize) {
        let p = std::fs::read_to_string(self.dir.join("progress")).unwrap_or_default();
        let mut n = p.split_whitespace().map(|n| n.parse().unwrap());
        (n.next().unwrap_or(0), n.next().unwrap_or(0))
    }

    fn go(&self) {
        std::fs::write(self.dir.join("go"), "").unwrap();
    }

    fn write(&mut self, lines: &[J]) {
        let stdin = self.stdin.as_mut().unwrap();
        for l in lines {
            stdin.write_all(format!("{l}\n").as_bytes()).unwrap();
        }
        stdin.flush().unwrap();
    }

    /// Closes the client's side; the proxy's exit status.
    fn finish(mut self) -> Option<i32> {
        drop(self.stdin.take());
        drop(self.stdout.take());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code();
            }
            assert!(Instant::now() < deadline, "the proxy did not end");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Proxied {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The proxy's peak resident memory so far is within [`PEAK`]; shown with `--nocapture`.
fn within_bounds(proxy: &Child) {
    let status = std::fs::read_to_string(format!("/proc/{}/status", proxy.id())).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc");
    eprintln!("the proxy's peak RSS: {:.1} MiB", kb as f64 / 1024.0);
    assert!(
        kb * 1024 <= PEAK,
        "the proxy's peak RSS is {} MiB",
        kb >> 10
    );
}

fn initialize() -> [J; 2] {
    [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "flood-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
}

fn call(n: usize, pad: usize) -> J {
    json!({"jsonrpc": "2.0", "id": n + 1, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"n": n, "pad": "x".repeat(pad)}}})
}

/// Waits until `value` has not changed for a second (or `done` holds); its last value.
fn settled<T: PartialEq + Copy>(mut value: impl FnMut() -> T, done: impl Fn(T) -> bool) -> T {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut last = value();
    let mut since = Instant::now();
    while !done(last) && since.elapsed() < Duration::from_secs(1) {
        assert!(Instant::now() < deadline, "never settled");
        std::thread::sleep(Duration::from_millis(100));
        let now = value();
        if now != last {
            (last, since) = (now, Instant::now());
        }
    }
    last
}

/// Reads messages until the answer to `until`; every message read, in order.
fn read_until(stdout: &mut BufReader<ChildStdout>, until: u64) -> Vec<J> {
    let mut read = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "the proxy's output ended"
        );
        let m: J = serde_json::from_str(&line).unwrap();
        let done = m["id"] == until && m.get("method").is_none();
        read.push(m);
        if done {
            return read;
        }
    }
}

#[test]
fn a_server_flooding_while_its_surface_is_checked_is_cut_off() {
    let tmp = tempfile::tempdir().unwrap();
    let mut p = Proxied::start(tmp.path(), "check", &[]);
    p.write(&initialize());
    // The client reads nothing until the proxy has cut the server off, or the flood is over.
    let cut = "the server sent more than 256 messages or 8 MiB while its surface was checked";
    settled(|| (p.progress(), p.stderr().contains(cut)), |(_, c)| c);
    p.within_bounds();
    let err = p.stderr();
    assert!(err.contains(cut), "{err}");
    let (sent, _) = p.progress();
    assert!(sent < FLOOD, "the server was not stopped: it sent {sent}");
    let mut stdout = BufReader::new(p.stdout.take().unwrap());
    let read = read_until(&mut stdout, 0);
    assert_eq!(read.len(), 1, "{:?}", read.first().map(|m| &m["method"]));
    assert_eq!(read[0]["error"]["code"], -32092, "{}", read[0]);
    assert_eq!(p.finish(), Some(4));
}

#[test]
fn a_server_flooding_a_client_that_does_not_read_is_held_back_and_nothing_is_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let mut p = Proxied::start(tmp.path(), "answer", &[]);
    p.write(&initialize());
    p.write(&[call(7, 0)]);
    let (sent, _) = settled(|| p.progress(), |(sent, _)| sent == FLOOD);
    p.within_bounds();
    assert!(sent < FLOOD, "the server was not held back: it sent {sent}");
    let mut stdout = BufReader::new(p.stdout.take().unwrap());
    let read = read_until(&mut stdout, 8);
    assert_eq!(read[0]["id"], 0);
    assert_eq!(read.len(), FLOOD + 2);
    for m in &read[1..=FLOOD] {
        assert_eq!(m["method"], "notifications/message");
        assert_eq!(m["params"]["data"].as_str().unwrap().len() as u64, MIB);
    }
    assert_eq!(read[FLOOD + 1]["result"]["content"][0]["text"], "7");
    p.within_bounds();
    assert_eq!(p.finish(), Some(0));
}

/// A client writes 400 calls of 1 MiB; the server reads nothing (`mode`) until told to go.
fn client_flood(mode: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let mut p = Proxied::start(tmp.path(), mode, &[]);
    p.write(&initialize());
    let mut stdin = p.stdin.take().unwrap();
    let written = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = written.clone();
    let writer = std::thread::spawn(move || {
        for n in 0..FLOOD {
            stdin
                .write_all(format!("{}\n", call(n, MIB as usize)).as_bytes())
                .unwrap();
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        stdin
    });
    let done = settled(
        || written.load(std::sync::atomic::Ordering::SeqCst),
        |n| n == FLOOD,
    );
    p.within_bounds();
    assert!(
        done < FLOOD,
        "the client was not held back: it wrote {done}"
    );
    p.go();
    let mut stdout = BufReader::new(p.stdout.take().unwrap());
    let read = read_until(&mut stdout, FLOOD as u64);
    assert_eq!(read.len(), FLOOD + 1, "{}", p.stderr());
    assert_eq!(read[0]["id"], 0);
    for (n, m) in read[1..].iter().enumerate() {
        assert_eq!(m["id"], n + 1);
        assert_eq!(m["result"]["content"][0]["text"], n.to_string());
    }
    p.stdin = Some(writer.join().unwrap());
    p.within_bounds();
    assert_eq!(p.progress().1, FLOOD);
    let err = p.stderr();
    assert_eq!(p.finish(), Some(0), "{err}");
}

#[test]
fn a_client_flooding_while_the_surface_is_checked_is_held_back_and_nothing_is_lost() {
    client_flood("hold-init");
}

#[test]
fn a_client_flooding_a_server_that_does_not_read_is_held_back_and_nothing_is_lost() {
    client_flood("hold-call");
}

/// `pinlog proxy --listen` in front of tests/fixtures/flood_http_server.py in `mode`.
struct HttpProxied {
    proxy: Child,
    port: u16,
    _upstream: Listening,
    dir: PathBuf,
}

impl HttpProxied {
    fn start(dir: &Path, mode: &str, extra: &[&str]) -> HttpProxied {
        let up = free_port();
        let mut server = Command::new(python());
        server
            .arg(installed("tests/fixtures/flood_http_server.py"))
            .arg(up.to_string())
            .arg(mode)
            .arg("--progress")
            .arg(dir.join("progress"))
            .args(extra);
        let upstream = listening(server, up);
        let port = free_port();
        let proxy = Command::new(env!("CARGO_BIN_EXE_pinlog"))
            .args([
                "proxy",
                "--name",
                mode,
                "--listen",
                &format!("127.0.0.1:{port}"),
            ])
            .args(["--upstream", &format!("http://127.0.0.1:{up}/mcp")])
            .env("PINLOG_HOME", dir)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the proxy never listened");
            std::thread::sleep(Duration::from_millis(50));
        }
        HttpProxied {
            proxy,
            port,
            _upstream: upstream,
            dir: dir.to_path_buf(),
        }
    }

    fn sent(&self) -> usize {
        let p = std::fs::read_to_string(self.dir.join("progress")).unwrap_or_default();
        p.trim().parse().unwrap_or(0)
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr")).unwrap()
    }

    /// Writes one request and reads nothing of the answer yet.
    fn send(&self, method: &str, session: Option<&str>, body: Option<&J>) -> BufReader<TcpStream> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let body = body.map(J::to_string).unwrap_or_default();
        let session = session.map_or(String::new(), |s| format!("Mcp-Session-Id: {s}\r\n"));
        write!(
            s,
            "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: application/json, \
             text/event-stream\r\nContent-Type: application/json\r\nMCP-Protocol-Version: \
             2025-11-25\r\n{session}Content-Length: {}\r\n\r\n{body}",
            self.port,
            body.len()
        )
        .unwrap();
        BufReader::new(s)
    }

    /// Initializes a session; its id.
    fn initialize(&self) -> String {
        let [init, initialized] = initialize();
        let mut r = self.send("POST", None, Some(&init));
        let head = Head::read(&mut r);
        assert_eq!(head.status, 200);
        let sid = head.header("mcp-session-id").expect("a session id");
        let answer = head.messages(r, 0);
        assert!(answer[0]["result"].is_object(), "{}", answer[0]);
        let mut r = self.send("POST", Some(&sid), Some(&initialized));
        assert_eq!(Head::read(&mut r).status, 202);
        sid
    }

    /// Stops the proxy (SIGTERM); its exit status.
    fn stop(mut self) -> Option<i32> {
        Command::new("kill")
            .arg(self.proxy.id().to_string())
            .status()
            .unwrap();
        self.proxy.wait().unwrap().code()
    }
}

impl Drop for HttpProxied {
    fn drop(&mut self) {
        let _ = self.proxy.kill();
        let _ = self.proxy.wait();
    }
}

/// An HTTP answer's status line and headers.
struct Head {
    status: u16,
    headers: Vec<(String, String)>,
}

impl Head {
    fn read(r: &mut BufReader<TcpStream>) -> Head {
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        let status = line.split(' ').nth(1).unwrap().parse().unwrap();
        let mut headers = Vec::new();
        loop {
            line.clear();
            r.read_line(&mut line).unwrap();
            let Some((name, value)) = line.trim_end().split_once(':') else {
                return Head { status, headers };
            };
            headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
        }
    }

    fn header(&self, name: &str) -> Option<String> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }

    /// The messages of the body, JSON or events, until the answer to `until`.
    fn messages(&self, mut r: BufReader<TcpStream>, until: u64) -> Vec<J> {
        if let Some(n) = self.header("content-length") {
            let mut body = vec![0; n.parse().unwrap()];
            r.read_exact(&mut body).unwrap();
            return vec![serde_json::from_slice(&body).unwrap()];
        }
        assert_eq!(self.header("transfer-encoding").as_deref(), Some("chunked"));
        let mut events = BufReader::new(Chunked { inner: r, left: 0 });
        let (mut read, mut data, mut line) = (Vec::new(), String::new(), String::new());
        loop {
            line.clear();
            assert!(events.read_line(&mut line).unwrap() > 0, "the stream ended");
            if let Some(d) = line.strip_prefix("data: ") {
                data.push_str(d);
            } else if line == "\n" && !data.is_empty() {
                let m: J = serde_json::from_str(&data).unwrap();
                data.clear();
                let done = m["id"] == until && m.get("method").is_none();
                read.push(m);
                if done {
                    return read;
                }
            }
        }
    }
}

/// A chunked HTTP body as the bytes it carries.
struct Chunked {
    inner: BufReader<TcpStream>,
    left: usize,
}

impl Read for Chunked {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            let mut size = String::new();
            // The line end of the chunk before, then the size line.
            while size.trim().is_empty() {
                size.clear();
                if self.inner.read_line(&mut size)? == 0 {
                    return Ok(0);
                }
            }
            self.left = usize::from_str_radix(size.trim(), 16).unwrap();
            if self.left == 0 {
                return Ok(0);
            }
        }
        let len = buf.len().min(self.left);
        let n = self.inner.read(&mut buf[..len])?;
        self.left -= n;
        Ok(n)
    }
}

#[test]
fn http_an_upstream_flooding_while_its_surface_is_checked_is_cut_off() {
    let tmp = tempfile::tempdir().unwrap();
    let p = HttpProxied::start(tmp.path(), "check", &[]);
    let [init, _] = initialize();
    let mut r = p.send("POST", None, Some(&init));
    let cut = "the server sent more than 256 messages or 8 MiB while its surface was checked";
    settled(|| (p.sent(), p.stderr().contains(cut)), |(_, c)| c);
    within_bounds(&p.proxy);
    let err = p.stderr();
    assert!(err.contains(cut), "{err}");
    let head = Head::read(&mut r);
    let answer = head.messages(r, 0);
    assert_eq!(answer.len(), 1);
    assert_eq!(answer[0]["error"]["code"], -32092, "{}", answer[0]);
    assert_eq!(p.stop(), Some(0));
}

#[test]
fn http_an_upstream_flooding_a_client_that_does_not_read_is_held_back_and_nothing_is_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let p = HttpProxied::start(tmp.path(), "answer", &[]);
    let sid = p.initialize();
    let mut r = p.send("POST", Some(&sid), Some(&call(7, 0)));
    let sent = settled(|| p.sent(), |sent| sent == FLOOD);
    within_bounds(&p.proxy);
    assert!(
        sent < FLOOD,
        "the upstream was not held back: it sent {sent}"
    );
    let head = Head::read(&mut r);
    assert_eq!(head.status, 200);
    let read = head.messages(r, 8);
    assert_eq!(read.len(), FLOOD + 1);
    for m in &read[..FLOOD] {
        assert_eq!(m["method"], "notifications/message");
        assert_eq!(m["params"]["data"].as_str().unwrap().len() as u64, MIB);
    }
    assert_eq!(read[FLOOD]["result"]["content"][0]["text"], "7");
    within_bounds(&p.proxy);
    assert_eq!(p.stop(), Some(0));
}

#[test]
fn http_a_get_stream_its_client_does_not_read_holds_the_upstream_back_and_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let p = HttpProxied::start(tmp.path(), "get", &[]);
    let sid = p.initialize();
    let mut r = p.send("GET", Some(&sid), None);
    let sent = settled(|| p.sent(), |sent| sent == FLOOD);
    within_bounds(&p.proxy);
    assert!(
        sent < FLOOD,
        "the upstream was not held back: it sent {sent}"
    );
    let head = Head::read(&mut r);
    assert_eq!(head.status, 200);
    assert_eq!(head.header("transfer-encoding").as_deref(), Some("chunked"));
    let mut events = BufReader::new(Chunked { inner: r, left: 0 });
    let (mut count, mut line) = (0, String::new());
    while events.read_line(&mut line).unwrap() > 0 {
        if let Some(d) = line.strip_prefix("data: ") {
            let m: J = serde_json::from_str(d).unwrap();
            assert_eq!(m["params"]["data"].as_str().unwrap().len() as u64, MIB);
            count += 1;
        }
        line.clear();
    }
    assert_eq!(count, FLOOD);
    within_bounds(&p.proxy);
    assert_eq!(p.stop(), Some(0));
}

/// One byte past the message cap (docs/PROXY.md).
const OVERSIZED: usize = (16 << 20) + 1;

#[test]
fn a_message_over_the_cap_from_either_side_is_refused_by_name() {
    let size = OVERSIZED.to_string();
    let tmp = tempfile::tempdir().unwrap();
    let mut p = Proxied::start(tmp.path(), "check", &["--count", "1", "--size", &size]);
    p.write(&initialize());
    let mut stdout = BufReader::new(p.stdout.take().unwrap());
    let read = read_until(&mut stdout, 0);
    assert_eq!(read[0]["error"]["code"], -32092, "{}", read[0]);
    let err = p.stderr();
    assert!(
        err.contains("the server's output cannot be read (a message longer than 16777216 bytes)"),
        "{err}"
    );
    assert_eq!(p.finish(), Some(4));

    let tmp = tempfile::tempdir().unwrap();
    let mut p = Proxied::start(tmp.path(), "answer", &[]);
    p.write(&initialize());
    let mut stdout = BufReader::new(p.stdout.take().unwrap());
    assert!(read_until(&mut stdout, 0)[0]["result"].is_object());
    p.write(&[call(1, OVERSIZED)]);
    let closed = "the client's input cannot be read (a message longer than 16777216 bytes)";
    settled(|| p.stderr().contains(closed), |c| c);
    let err = p.stderr();
    assert!(err.contains(closed), "{err}");
    assert_eq!(p.progress().1, 0, "the call reached the server");
    assert_eq!(p.finish(), Some(0));
}

#[test]
fn http_an_upstream_event_over_the_cap_is_refused_by_name() {
    let size = OVERSIZED.to_string();
    let tmp = tempfile::tempdir().unwrap();
    let p = HttpProxied::start(tmp.path(), "check", &["--count", "1", "--size", &size]);
    let [init, _] = initialize();
    let mut r = p.send("POST", None, Some(&init));
    let head = Head::read(&mut r);
    let answer = head.messages(r, 0);
    assert_eq!(answer[0]["error"]["code"], -32092, "{}", answer[0]);
    let err = p.stderr();
    assert!(
        err.contains("an event stream from the upstream is not read further")
            && err.contains("an event line longer than 16777216 bytes"),
        "{err}"
    );
    assert_eq!(p.stop(), Some(0));
}
