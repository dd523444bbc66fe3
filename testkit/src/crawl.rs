//! A crawl test's world: loopback registries serving real and scripted packages, a directory
//! with the store, seeds and opt-out list, and ways to read what the crawl recorded.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::repo::installed;

/// The fake registries, stopped when dropped.
pub struct Registries {
    child: std::process::Child,
    pub base: String,
}

impl Drop for Registries {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One crawl test's directory: packages to serve, the store, seeds, opt-out list; and the
/// `pinlog` binary that crawls.
pub struct Site {
    dir: tempfile::TempDir,
    pinlog: PathBuf,
}

impl Site {
    /// A site crawled by the binary at `pinlog` (a test's `CARGO_BIN_EXE_pinlog`).
    pub fn new(pinlog: &str) -> Site {
        let s = Site {
            dir: tempfile::tempdir().unwrap(),
            pinlog: PathBuf::from(pinlog),
        };
        std::fs::create_dir_all(s.path("packages")).unwrap();
        std::fs::write(s.path("seeds.txt"), "").unwrap();
        std::fs::write(s.path("OPTOUT.txt"), "").unwrap();
        s
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn db(&self) -> PathBuf {
        self.path("log.db")
    }

    /// Adds a scripted package `name@version` behaving as `fixture` says.
    pub fn package(&self, name: &str, version: &str, fixture: serde_json::Value) {
        let dir = self.path(&format!("packages/{name}-{version}"));
        std::fs::create_dir_all(&dir).unwrap();
        let pkg = serde_json::json!({
            "name": name,
            "version": version,
            "bin": {name: "server.js"},
            "pinlogFixture": fixture,
        });
        std::fs::write(dir.join("package.json"), pkg.to_string()).unwrap();
        std::fs::copy(
            installed("tests/fixtures/fixture_server.js"),
            dir.join("server.js"),
        )
        .unwrap();
    }

    /// Adds a wheel `project==version` holding `files` (path in the wheel, text), with the
    /// metadata and `RECORD` pip wants; served beside `.ci/wheels`.
    pub fn wheel(&self, project: &str, version: &str, files: &[(&str, &str)]) {
        const BUILD: &str = r#"
import base64, hashlib, json, sys, zipfile
out, name, version, files = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
dist = name.replace("-", "_")
info = f"{dist}-{version}.dist-info"
files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
files[f"{info}/WHEEL"] = "Wheel-Version: 1.0\nGenerator: pinlog-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
record = []
for path, text in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
    record.append(f"{path},sha256={digest},{len(text.encode())}")
files[f"{info}/RECORD"] = "\n".join(record + [f"{info}/RECORD,,"]) + "\n"
with zipfile.ZipFile(f"{out}/{dist}-{version}-py3-none-any.whl", "w") as z:
    for path, text in files.items():
        z.writestr(path, text)
"#;
        let dir = self.path("wheels");
        std::fs::create_dir_all(&dir).unwrap();
        let files: serde_json::Map<String, serde_json::Value> = files
            .iter()
            .map(|(p, t)| (p.to_string(), serde_json::Value::from(*t)))
            .collect();
        let status = Command::new("python3")
            .args(["-c", BUILD])
            .arg(&dir)
            .args([
                project,
                version,
                &serde_json::Value::Object(files).to_string(),
            ])
            .status()
            .unwrap();
        assert!(status.success(), "the wheel of {project} was not built");
    }

    /// Adds a wheel of a scripted PyPI server `name@version` that requires `requires_python`
    /// (tests/fixtures/make_wheel.py), served beside the wheels `.ci/setup` downloaded.
    pub fn wheel_requiring(&self, name: &str, version: &str, requires_python: &str) {
        let dir = self.path("wheels");
        std::fs::create_dir_all(&dir).unwrap();
        let made = Command::new("python3")
            .arg(installed("tests/fixtures/make_wheel.py"))
            .args([name, version, requires_python])
            .arg(&dir)
            .status()
            .unwrap();
        assert!(made.success(), "make_wheel.py failed");
    }

    pub fn seeds(&self, lines: &[&str]) {
        std::fs::write(self.path("seeds.txt"), lines.join("\n") + "\n").unwrap();
    }

    /// Starts the registries: npm (the reference servers' lockfile plus the scripted packages),
    /// PyPI (the wheels), and optionally the MCP registry and npm search.
    pub fn registries(
        &self,
        mcp: Option<serde_json::Value>,
        search: Option<serde_json::Value>,
    ) -> Registries {
        self.registries_on(0, mcp, search)
    }

    /// Stops `reg` and starts the registries again on its port, serving the packages as they
    /// are now: to the crawler, the same registry publishing something else.
    pub fn restart(&self, reg: Registries) -> Registries {
        let port: u16 = reg
            .base
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("a registry base ends with its port");
        drop(reg);
        self.registries_on(port, None, None)
    }

    fn registries_on(
        &self,
        port: u16,
        mcp: Option<serde_json::Value>,
        search: Option<serde_json::Value>,
    ) -> Registries {
        let port_file = self.path("port");
        let _ = std::fs::remove_file(&port_file);
        let mut cmd = Command::new("python3");
        cmd.arg(installed("tests/fixtures/fake_registries.py"))
            .arg("--port-file")
            .arg(&port_file)
            .args(["--port", &port.to_string()])
            .args(["--npm-lock", &installed(".ci/npm/package-lock.json")])
            .arg("--npm-packages")
            .arg(self.path("packages"))
            .args(["--wheels", &installed(".ci/wheels")])
            .arg("--log")
            .arg(self.path("requests.jsonl"))
            .arg("--quiet");
        for (flag, doc, file) in [
            ("--mcp-registry", mcp, "mcp.json"),
            ("--npm-search", search, "search.json"),
        ] {
            if let Some(doc) = doc {
                std::fs::write(self.path(file), doc.to_string()).unwrap();
                cmd.arg(flag).arg(self.path(file));
            }
        }
        if self.path("wheels").exists() {
            cmd.arg("--wheels").arg(self.path("wheels"));
        }
        // GitHub answers when the test wrote what it should say.
        if self.path("github.json").exists() {
            cmd.arg("--github").arg(self.path("github.json"));
        }
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut r = Registries {
            child,
            base: String::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(p) = std::fs::read_to_string(&port_file) {
                if !p.trim().is_empty() {
                    r.base = format!("http://127.0.0.1:{}", p.trim());
                    return r;
                }
            }
            assert!(
                Instant::now() < deadline,
                "the fake registries did not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn crawl_command(&self, reg: &Registries, extra: &[&str]) -> Command {
        let mut cmd = Command::new(&self.pinlog);
        cmd.arg("crawl")
            .arg("--db")
            .arg(self.db())
            .arg("--seeds")
            .arg(self.path("seeds.txt"))
            .arg("--optout")
            .arg(self.path("OPTOUT.txt"))
            .arg("--work")
            .arg(self.path("work"))
            .args(["--npm-registry", &reg.base])
            .args(["--pypi-index", &format!("{}/simple/", reg.base)])
            .args(extra)
            .env_remove("GITHUB_TOKEN")
            .env_remove("PIP_FIND_LINKS")
            // The test's own throwaway key may be made here.
            .env_remove("CI");
        // Defaults a test may override.
        for (flag, value) in [
            ("--registry-url", reg.base.as_str()),
            ("--timeout-ms", "4000"),
        ] {
            if !extra.contains(&flag) {
                cmd.args([flag, value]);
            }
        }
        cmd
    }

    pub fn crawl(&self, reg: &Registries, extra: &[&str]) -> Output {
        self.crawl_command(reg, extra).output().unwrap()
    }

    pub fn sql<T: rusqlite::types::FromSql>(&self, query: &str) -> Vec<T> {
        let c = rusqlite::Connection::open(self.db()).unwrap();
        let mut s = c.prepare(query).unwrap();
        let rows = s.query_map([], |r| r.get(0)).unwrap();
        rows.map(Result::unwrap).collect()
    }

    /// Entries as JSON, in index order.
    pub fn entries(&self) -> Vec<serde_json::Value> {
        self.sql::<Vec<u8>>("SELECT body FROM entries ORDER BY idx")
            .iter()
            .map(|b| serde_json::from_slice(b).unwrap())
            .collect()
    }

    /// (server, outcome) of every look, in order.
    pub fn looks(&self) -> Vec<(String, String)> {
        self.sql::<String>("SELECT server || ' ' || outcome FROM crawl_looks ORDER BY rowid")
            .into_iter()
            .map(|s| {
                let (a, b) = s.rsplit_once(' ').unwrap();
                (a.to_string(), b.to_string())
            })
            .collect()
    }

    pub fn outcome(&self, server: &str) -> String {
        let all: Vec<_> = self
            .looks()
            .into_iter()
            .filter(|(s, _)| s == server)
            .collect();
        all.last()
            .unwrap_or_else(|| panic!("no look at {server}"))
            .1
            .clone()
    }

    /// Pretends a day went by: every server's last look moves back two days.
    pub fn a_day_later(&self) {
        let c = rusqlite::Connection::open(self.db()).unwrap();
        c.execute("UPDATE servers SET last_probe = '2000-01-01T00:00:00Z'", [])
            .unwrap();
    }

    pub fn blob_text(&self, entry: &serde_json::Value) -> String {
        let digest = entry["blob"].as_str().unwrap();
        let c = rusqlite::Connection::open(self.db()).unwrap();
        let b: Vec<u8> = c
            .query_row("SELECT body FROM blobs WHERE digest = ?1", [digest], |r| {
                r.get(0)
            })
            .unwrap();
        String::from_utf8(b).unwrap()
    }
}
