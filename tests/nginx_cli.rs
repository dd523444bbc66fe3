//! What pinlog publishes, served by a real nginx (Debian's, as `.ci/setup` installs it) whose
//! workers run as an unprivileged user when the test runs as root: a log published, its site built
//! and a mirror's copy made under umask 077, each fetched and verified through nginx; and the
//! deployment in `deploy/` run as shipped (the service's commands, then its nginx configuration
//! checked with `nginx -t` and served through, with its cache headers).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use pinlog_testkit::log::{key, store_with};
use pinlog_testkit::output::text;
use pinlog_testkit::repo::root;
use pinlog_testkit::server::free_port;

const PINLOG: &str = env!("CARGO_BIN_EXE_pinlog");

/// A directory nginx's workers may enter, holding a store of 300 entries (a full tile and partial
/// ones) in `data/`, its key and its vkey.
struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        // The test's own directory, made by tempfile for its owner alone; what pinlog makes
        // below it must need no chmod.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        store_with(&data.join("log.db"), 300, 7);
        let key_file = data.join("log.key");
        std::fs::write(&key_file, format!("{}\n", key().to_private_text())).unwrap();
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(data.join("log.key.vkey"), key().verifier().to_string()).unwrap();
        Tree { dir }
    }

    fn path(&self, rel: &str) -> String {
        self.dir.path().join(rel).to_str().unwrap().to_string()
    }
}

/// `pinlog ARGS` run with `umask`, in `cwd`.
fn pinlog_with_umask(umask: &str, cwd: &Path, program: &str, args: &[String]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
        .arg(program)
        .args(args)
        .current_dir(cwd)
        .env_remove("GITHUB_TOKEN")
        .output()
        .unwrap()
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

fn succeeded(o: &Output, what: &str) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{what}:\n{}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
}

/// Fails unless every file below `dir` is mode 0644 and every directory 0755.
fn all_public(dir: &Path) {
    let wrong = not_public(dir);
    assert!(
        wrong.is_empty(),
        "{} files or directories below {} are not public, e.g. {:?}",
        wrong.len(),
        dir.display(),
        &wrong[..wrong.len().min(5)]
    );
}

/// Every file below `dir` whose mode is not 0644 and every directory not 0755, with its mode.
fn not_public(dir: &Path) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o777;
            let want = if meta.is_dir() { 0o755 } else { 0o644 };
            if mode != want {
                wrong.push(format!("{} {mode:o}", path.display()));
            }
            if meta.is_dir() {
                stack.push(path);
            }
        }
    }
    wrong
}

fn mode(path: &str) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The first file below `dir`, as a path relative to it.
fn first_file(dir: &Path) -> String {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names.into_iter().next().expect("a file")
}

/// One HTTP answer.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// nginx, started with a configuration of its own in a temporary prefix, stopped when dropped.
struct Nginx {
    child: Child,
    port: u16,
    prefix: tempfile::TempDir,
}

impl Nginx {
    /// The configuration of a whole nginx around `server` (one or more `server` blocks, listening
    /// on `port`): in the foreground, every path in the prefix, and, for root, workers as nobody.
    fn config(prefix: &Path, server: &str) -> String {
        let p = prefix.display();
        let user = if is_root() {
            "user nobody nogroup;"
        } else {
            ""
        };
        format!(
            "daemon off;\nworker_processes 1;\n{user}\npid {p}/nginx.pid;\nerror_log {p}/error.log;\n\
             events {{ worker_connections 64; }}\n\
             http {{\n  include /etc/nginx/mime.types;\n  default_type application/octet-stream;\n  \
             access_log off;\n  client_body_temp_path {p}/body;\n  proxy_temp_path {p}/proxy;\n  \
             fastcgi_temp_path {p}/fastcgi;\n  uwsgi_temp_path {p}/uwsgi;\n  scgi_temp_path {p}/scgi;\n\
             {server}\n}}\n"
        )
    }

    fn command(prefix: &Path) -> Command {
        let mut cmd = Command::new(installed_nginx());
        cmd.arg("-p")
            .arg(prefix)
            .arg("-c")
            .arg(prefix.join("nginx.conf"))
            .arg("-e")
            .arg(prefix.join("error.log"));
        cmd
    }

    /// Writes the configuration of `server` (given the port to listen on) and checks it with
    /// `nginx -t`.
    fn configured(server: impl FnOnce(u16) -> String) -> (tempfile::TempDir, u16) {
        let prefix = tempfile::tempdir().unwrap();
        let port = free_port();
        let conf = Nginx::config(prefix.path(), &server(port));
        std::fs::write(prefix.path().join("nginx.conf"), conf).unwrap();
        let o = Nginx::command(prefix.path()).arg("-t").output().unwrap();
        succeeded(&o, "nginx -t");
        assert!(text(&o.stderr).contains("test is successful"));
        (prefix, port)
    }

    fn start(server: impl FnOnce(u16) -> String) -> Nginx {
        let (prefix, port) = Nginx::configured(server);
        let child = Nginx::command(prefix.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts");
        let nginx = Nginx {
            child,
            port,
            prefix,
        };
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            let log = std::fs::read_to_string(nginx.prefix.path().join("error.log"));
            assert!(Instant::now() < deadline, "nginx did not listen: {log:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
        nginx
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn get(&self, path: &str) -> Answer {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).unwrap();
        let end = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a whole answer");
        let head = String::from_utf8(raw[..end].to_vec()).unwrap();
        let mut lines = head.split("\r\n");
        let status = lines.next().unwrap().split(' ').nth(1).unwrap();
        Answer {
            status: status.parse().unwrap(),
            headers: lines
                .filter_map(|l| l.split_once(": "))
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn ok(&self, path: &str) -> Answer {
        let a = self.get(path);
        assert_eq!(a.status, 200, "GET {path}");
        a
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // TERM, not KILL: the master stops its workers first.
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

fn installed_nginx() -> &'static str {
    let nginx = "/usr/sbin/nginx";
    assert!(
        Path::new(nginx).exists(),
        "{nginx} is missing: run `bash .ci/setup`"
    );
    nginx
}

fn is_root() -> bool {
    let o = Command::new("id").arg("-u").output().unwrap();
    text(&o.stdout).trim() == "0"
}

fn verify_log(url: &str, extra: &[&str], tree: &Tree) {
    let vkey = tree.path("data/log.key.vkey");
    let mut args = vec!["verify-log", url, "--vkey-file", &vkey, "-q"];
    args.extend_from_slice(extra);
    let o = Command::new(PINLOG).args(&args).output().unwrap();
    succeeded(&o, &format!("verify-log {url}"));
}

#[test]
fn what_pinlog_publishes_is_served_by_an_unprivileged_nginx_whatever_the_umask() {
    let tree = Tree::new();
    let run = |args: &[&str]| {
        let o = pinlog_with_umask("077", tree.dir.path(), PINLOG, &strings(args));
        succeeded(&o, &args.join(" "));
    };
    run(&[
        "log",
        "publish",
        "--db",
        "data/log.db",
        "--key",
        "data/log.key",
        "--out",
        "public/log",
    ]);
    run(&[
        "site",
        "build",
        "--db",
        "data/log.db",
        "--log",
        "public/log",
        "--vkey-file",
        "data/log.key.vkey",
        "--out",
        "public/site",
    ]);
    let public = tree.dir.path().join("public");
    let root = public.to_str().unwrap().to_string();
    let nginx = Nginx::start(|port| {
        format!("  server {{\n    listen 127.0.0.1:{port};\n    root {root};\n  }}")
    });
    let server_page = first_file(&public.join("site/servers"));
    let blob = first_file(&public.join("log/blobs/sha256"));
    for path in [
        "/site/index.html".to_string(),
        "/site/log/index.html".into(),
        "/site/api/servers.json".into(),
        "/site/assets/site.css".into(),
        format!("/site/servers/{server_page}"),
        "/log/checkpoint".into(),
        "/log/tile/0/000".into(),
        "/log/tile/entries/001.p/44".into(),
        format!("/log/blobs/sha256/{blob}"),
    ] {
        nginx.ok(&path);
    }
    verify_log(&nginx.url("/log/"), &[], &tree);
    verify_log(&nginx.url("/site/log/"), &[], &tree);
    all_public(&public);
    assert_eq!(mode(&tree.path("data/log.key")), 0o600);

    // A mirror's copy of the served log, itself served and verified.
    run(&[
        "log",
        "mirror",
        &nginx.url("/log/"),
        "public/mirror",
        "--vkey-file",
        "data/log.key.vkey",
        "-q",
    ]);
    all_public(&public);
    nginx.ok("/mirror/tile/0/000");
    verify_log(&nginx.url("/mirror/"), &[], &tree);
}

/// The commands of `deploy/systemd/pinlog-crawl.service`, as words, in order.
fn service_commands(unit: &str) -> Vec<Vec<String>> {
    unit.lines()
        .filter_map(|l| l.strip_prefix("ExecStart="))
        .map(|l| {
            assert!(
                !l.contains(['"', '\'', '\\', '$', '%']),
                "{l}: plain words only"
            );
            l.split_whitespace().map(String::from).collect()
        })
        .collect()
}

/// `text` with `from` replaced by `to`, which it must hold: a shipped file that changed under the
/// test fails it rather than being served unsubstituted.
fn substitute(text: &str, from: &str, to: &str) -> String {
    assert!(
        text.contains(from),
        "the shipped file no longer has {from:?}"
    );
    text.replace(from, to)
}

#[test]
fn the_shipped_deployment_runs_publishes_and_serves_with_its_cache_headers() {
    let tree = Tree::new();
    let etc = tempfile::tempdir().unwrap();
    std::fs::write(etc.path().join("seeds.txt"), "").unwrap();
    std::fs::copy(root().join("OPTOUT.txt"), etc.path().join("OPTOUT.txt")).unwrap();
    let policy = etc.path().join("witness-policy.txt");
    std::fs::copy(root().join("deploy/witness-policy.txt"), &policy).unwrap();

    // The service's commands, in its working directory and with its umask. The crawl's sources
    // are pointed at a closed loopback port: nothing leaves the machine, and it publishes the
    // store it finds.
    let unit = std::fs::read_to_string(root().join("deploy/systemd/pinlog-crawl.service")).unwrap();
    let umask = unit
        .lines()
        .find_map(|l| l.strip_prefix("UMask="))
        .expect("the service sets its umask");
    assert_eq!(umask, "0077");
    let etc_dir = format!("{}/", etc.path().display());
    let commands = service_commands(&unit);
    assert_eq!(commands.len(), 3, "crawl, verify-log, site build");
    for words in commands {
        let mut args: Vec<String> = words[1..]
            .iter()
            .map(|w| w.replace("/etc/pinlog/", &etc_dir))
            .collect();
        assert_eq!(words[0], "/usr/local/bin/pinlog");
        if args[0] == "crawl" {
            for (flag, value) in [
                ("--registry-url", "http://127.0.0.1:9"),
                ("--npm-registry", "http://127.0.0.1:9"),
            ] {
                args.extend([flag.to_string(), value.to_string()]);
            }
        }
        let o = pinlog_with_umask(umask, tree.dir.path(), PINLOG, &args);
        succeeded(&o, &words.join(" "));
    }
    let public = tree.dir.path().join("public");
    all_public(&public);

    let conf = std::fs::read_to_string(root().join("deploy/nginx/pinlog.conf")).unwrap();
    let state = tree.dir.path().to_str().unwrap();
    let nginx = Nginx::start(|port| {
        let conf = substitute(&conf, "listen 80;", &format!("listen 127.0.0.1:{port};"));
        let conf = substitute(&conf, "listen [::]:80;", "");
        substitute(&conf, "/var/lib/pinlog", state)
    });

    let page = nginx.ok("/index.html");
    assert_eq!(page.header("Cache-Control"), Some("max-age=300"));
    assert_eq!(
        page.header("Content-Security-Policy"),
        Some("frame-ancestors 'none'")
    );
    let checkpoint = nginx.ok("/log/checkpoint");
    assert_eq!(checkpoint.header("Cache-Control"), Some("no-cache"));
    assert_eq!(
        checkpoint.header("Content-Type"),
        Some("text/plain; charset=utf-8")
    );
    let blob = first_file(&public.join("site/log/blobs/sha256"));
    for path in [
        "/log/tile/0/000".to_string(),
        "/log/tile/0/001.p/44".into(),
        "/log/tile/1/000.p/1".into(),
        "/log/tile/entries/000".into(),
        "/log/tile/entries/001.p/44".into(),
        format!("/log/blobs/sha256/{blob}"),
    ] {
        let a = nginx.ok(&path);
        assert_eq!(
            a.header("Cache-Control"),
            Some("public, max-age=31536000, immutable"),
            "{path}"
        );
    }
    // A tile not yet published is not remembered as missing; nothing hidden is served.
    let missing = nginx.get("/log/tile/0/002");
    assert_eq!(missing.status, 404);
    assert_eq!(missing.header("Cache-Control"), None);
    assert_eq!(nginx.get("/.pinlog-site-state").status, 404);
    assert!(public.join("site/.pinlog-site-state").exists());

    let policy = policy.to_str().unwrap();
    verify_log(&nginx.url("/log/"), &["--witness-policy", policy], &tree);
}

#[test]
fn the_shipped_systemd_units_verify() {
    let units = tempfile::tempdir().unwrap();
    let deploy = root().join("deploy/systemd");
    for name in ["pinlog-crawl.service", "pinlog-crawl.timer"] {
        let unit = std::fs::read_to_string(deploy.join(name)).unwrap();
        // Every line is a comment, a section or a key=value setting.
        for line in unit
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            let section = line.starts_with('[') && line.ends_with(']');
            assert!(section || line.contains('='), "{name}: {line}");
        }
        let unit = unit.replace("/usr/local/bin/pinlog", PINLOG);
        std::fs::write(units.path().join(name), unit).unwrap();
    }
    let timer = std::fs::read_to_string(deploy.join("pinlog-crawl.timer")).unwrap();
    assert!(timer.contains("\nOnCalendar=*-*-* 03:17:00 UTC\n"));
    // systemd's own check, where the machine has it (.ci/setup installs nothing for it).
    let Ok(o) = Command::new("systemd-analyze")
        .arg("verify")
        .args(["pinlog-crawl.service", "pinlog-crawl.timer"].map(|n| units.path().join(n)))
        .output()
    else {
        return;
    };
    succeeded(&o, "systemd-analyze verify");
    // It warns, and still exits 0, about a key it does not know.
    assert_eq!(text(&o.stderr), "", "systemd-analyze verify");
}
