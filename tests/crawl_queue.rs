//! `pinlog crawl --queue` and `pinlog crawl-worker` end to end: a real `nats-server` (Debian's,
//! with JetStream and file storage) on a loopback port, the loopback registries and scripted
//! packages of the crawl tests, one coordinator and a few workers as separate processes; and
//! each fault the queue must survive. Every test ends with `verify-log` on the published log.
//! Nothing leaves loopback.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use pinlog_testkit::crawl::{Registries, Site};
use pinlog_testkit::output::ok;
use pinlog_testkit::server::free_port;

const PINLOG: &str = env!("CARGO_BIN_EXE_pinlog");

/// A nats-server with JetStream on a loopback port, its storage in `dir`; stopped when dropped.
struct Nats {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
    /// Beside the storage and the address: `-js`, as an operator is told to start it.
    args: Vec<String>,
}

impl Nats {
    /// `None`, said once on standard error, where nats-server is not installed.
    fn start(dir: &Path) -> Option<Nats> {
        Nats::start_with(dir, &["-js"])
    }

    fn start_with(dir: &Path, args: &[&str]) -> Option<Nats> {
        if Command::new("nats-server")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("SKIPPED: nats-server is not installed (.ci/setup installs it)");
            return None;
        }
        let mut n = Nats {
            child: None,
            port: free_port(),
            dir: dir.to_path_buf(),
            args: args.iter().map(|a| a.to_string()).collect(),
        };
        n.up();
        Some(n)
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    fn up(&mut self) {
        std::fs::create_dir_all(&self.dir).unwrap();
        // No configuration: the server as a first try starts it (max_payload 1 MiB).
        let child = Command::new("nats-server")
            .args(&self.args)
            .arg("-sd")
            .arg(self.dir.join("js"))
            .args(["-a", "127.0.0.1", "-p", &self.port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Killed outright, as a crash would stop it.
    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A process whose standard error is kept in a file, for a test to wait on its lines.
struct Proc {
    child: Child,
    log: PathBuf,
}

impl Proc {
    fn spawn(mut cmd: Command, log: PathBuf) -> Proc {
        let file = std::fs::File::create(&log).unwrap();
        let child = cmd.stdout(Stdio::null()).stderr(file).spawn().unwrap();
        Proc { child, log }
    }

    fn lines(&self) -> Vec<String> {
        std::fs::File::open(&self.log)
            .map(|f| BufReader::new(f).lines().map_while(Result::ok).collect())
            .unwrap_or_default()
    }

    /// Waits (at most two minutes) until `n` lines contain every one of `words`.
    fn wait_for(&self, words: &[&str], n: usize) {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let seen = self
                .lines()
                .iter()
                .filter(|l| words.iter().all(|w| l.contains(w)))
                .count();
            if seen >= n {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "no {n} lines with {words:?}:\n{}",
                self.lines().join("\n")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        self.child.wait().unwrap();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The coordinator, publishing the log when its run is done.
fn coordinator(site: &Site, reg: &Registries, nats: &Nats, extra: &[&str]) -> Command {
    let url = nats.url();
    let publish = site.path("pub");
    let key = site.path("log.key");
    let mut args = vec![
        "--source",
        "seeds",
        "--queue",
        &url,
        "--ack-wait",
        "3",
        "--publish",
        publish.to_str().unwrap(),
        "--key",
        key.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let mut cmd = site.crawl_command(reg, &args);
    cmd.stdout(Stdio::piped());
    cmd
}

/// A worker looking at one server at a time.
fn worker(site: &Site, reg: &Registries, nats: &Nats, name: &str) -> Proc {
    let mut cmd = Command::new(PINLOG);
    cmd.arg("crawl-worker")
        .args(["--queue", &nats.url()])
        .args(["--concurrency", "1"])
        .arg("--work")
        .arg(site.path(&format!("work-{name}")))
        // One cache for the workers of a test, as workers on one machine may share one.
        .arg("--install-cache")
        .arg(site.path("cache"))
        .args(["--npm-registry", &reg.base])
        .args(["--pypi-index", &format!("{}/simple/", reg.base)])
        .args(["--timeout-ms", "4000"])
        .env_remove("PIP_FIND_LINKS")
        .env_remove("CI");
    Proc::spawn(cmd, site.path(&format!("{name}.log")))
}

fn seeds(site: &Site, packages: &[(&str, serde_json::Value)]) {
    for (name, fixture) in packages {
        site.package(name, "1.0.0", fixture.clone());
    }
    let lines: Vec<String> = packages.iter().map(|(n, _)| format!("npm:{n}")).collect();
    site.seeds(&lines.iter().map(String::as_str).collect::<Vec<_>>());
}

/// `verify-log` on what the coordinator published, with the key it made: the log's entries.
fn verified(site: &Site) -> String {
    let v = Command::new(PINLOG)
        .arg("verify-log")
        .arg(site.path("pub"))
        .arg("--vkey-file")
        .arg(site.path("log.key.vkey"))
        .output()
        .unwrap();
    ok(&v)
}

fn stdout_of(o: Output) -> String {
    ok(&o)
}

/// How many times npm fetched a package's tarball: once per look at it.
fn installs(site: &Site, name: &str) -> usize {
    std::fs::read_to_string(site.path("requests.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(&format!("/-/tarballs/{name}/")))
        .count()
}

/// (look_id, outcome) of every look with a look id, in order.
fn queued_looks(site: &Site) -> Vec<(String, String)> {
    site.sql::<String>(
        "SELECT look_id || ' ' || server || ' ' || outcome FROM crawl_looks WHERE look_id IS NOT NULL ORDER BY rowid",
    )
    .into_iter()
    .map(|s| {
        let (id, rest) = s.split_once(' ').unwrap();
        (id.to_string(), rest.to_string())
    })
    .collect()
}

#[test]
fn workers_look_and_the_coordinator_alone_writes_the_log() {
    let site = Site::new(PINLOG);
    let Some(nats) = Nats::start(&site.path("nats")) else {
        return;
    };
    seeds(
        &site,
        &[
            ("pinlog-fixture-a", serde_json::json!({})),
            (
                "pinlog-fixture-b",
                serde_json::json!({"description": "Bee."}),
            ),
            (
                "pinlog-fixture-c",
                serde_json::json!({"description": "Sea."}),
            ),
            (
                "pinlog-fixture-exit",
                serde_json::json!({"mode": "exit", "code": 3}),
            ),
        ],
    );
    // A server started as its seed line says: the job carries its arguments and variables.
    site.package(
        "pinlog-fixture-args",
        "1.0.0",
        serde_json::json!({"mode": "needs-args", "usage": ["serve", "--token", "*"], "env": ["FIXTURE_REGION"]}),
    );
    let mut lines = std::fs::read_to_string(site.path("seeds.txt")).unwrap();
    lines
        .push_str("npm:pinlog-fixture-args env=FIXTURE_REGION=eu -- serve --token <placeholder>\n");
    std::fs::write(site.path("seeds.txt"), lines).unwrap();
    let reg = site.registries(None, None);
    let coordinator_run = coordinator(&site, &reg, &nats, &[]).spawn().unwrap();
    let mut w1 = worker(&site, &reg, &nats, "w1");
    let mut w2 = worker(&site, &reg, &nats, "w2");
    let out = stdout_of(coordinator_run.wait_with_output().unwrap());
    assert!(
        out.contains("looked at 5: 4 ok (4 new, 0 changed, 0 unchanged), 1 failed"),
        "{out}"
    );
    assert!(out.contains("exited: 1"), "{out}");
    // Every look was made by a worker, each once; the workers hold no store.
    let reported: usize = [&w1, &w2]
        .iter()
        .map(|w| {
            w.lines()
                .iter()
                .filter(|l| l.contains("event=reported"))
                .count()
        })
        .sum();
    assert_eq!(reported, 5);
    let looks = queued_looks(&site);
    assert_eq!(looks.len(), 5, "{looks:?}");
    let mut ids: Vec<_> = looks.iter().map(|(id, _)| id.clone()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 5, "one id per look");
    assert_eq!(site.outcome("npm:pinlog-fixture-exit"), "exited");
    assert_eq!(
        site.sql::<i64>(
            "SELECT exit_code FROM crawl_looks WHERE server = 'npm:pinlog-fixture-exit'"
        ),
        [3]
    );
    let entries = site.entries();
    assert_eq!(entries.len(), 4);
    for e in &entries {
        assert_eq!(e["probe"]["sandbox"], "bubblewrap");
        assert_eq!(e["probe"]["transport"], "stdio");
        assert_eq!(e["labels"], serde_json::json!(["new-server"]));
    }
    let started = entries
        .iter()
        .find(|e| e["server"] == "npm:pinlog-fixture-args")
        .expect("the server started with its arguments was read");
    assert_eq!(
        started["probe"]["arg_placeholders"],
        serde_json::json!(["--token"])
    );
    assert_eq!(
        started["probe"]["env_supplied"],
        serde_json::json!(["FIXTURE_REGION"])
    );
    assert!(verified(&site).starts_with("log OK: pinlog.local/log, 4 entries"));
    assert_eq!(
        site.sql::<String>("SELECT install FROM crawl_looks WHERE look_id IS NOT NULL"),
        ["installed"; 5]
    );

    // Within a day nothing is planned again.
    let out = stdout_of(coordinator(&site, &reg, &nats, &[]).output().unwrap());
    assert!(
        out.contains("5 looked at within a day") && out.contains("looked at 0:"),
        "{out}"
    );
    // Unless the operator asks: every server looked at again from the workers' install cache.
    let out = stdout_of(
        coordinator(&site, &reg, &nats, &["--relook"])
            .output()
            .unwrap(),
    );
    assert!(
        out.contains("looked at 5: 4 ok (0 new, 0 changed, 4 unchanged), 1 failed"),
        "{out}"
    );
    assert_eq!(
        site.sql::<String>(
            "SELECT install FROM crawl_looks WHERE look_id IS NOT NULL ORDER BY rowid"
        )[5..],
        ["kept"; 5]
    );
    assert_eq!(site.entries().len(), 4);
    w1.kill();
    w2.kill();
}

#[test]
fn a_worker_killed_mid_look_is_replaced_and_the_look_recorded_once() {
    let site = Site::new(PINLOG);
    let Some(nats) = Nats::start(&site.path("nats")) else {
        return;
    };
    seeds(
        &site,
        &[("pinlog-fixture-slow", serde_json::json!({"mode": "slow"}))],
    );
    let reg = site.registries(None, None);
    let run = coordinator(&site, &reg, &nats, &[]).spawn().unwrap();
    let mut first = worker(&site, &reg, &nats, "first");
    first.wait_for(&["event=taken", "pinlog-fixture-slow"], 1);
    // Installed, and now probing a server that takes seconds to answer: mid-look.
    let deadline = Instant::now() + Duration::from_secs(120);
    while installs(&site, "pinlog-fixture-slow") < 1 {
        assert!(Instant::now() < deadline, "the package was never fetched");
        std::thread::sleep(Duration::from_millis(50));
    }
    first.kill();
    let second = worker(&site, &reg, &nats, "second");
    let out = stdout_of(run.wait_with_output().unwrap());
    assert!(
        out.contains("looked at 1: 1 ok (1 new, 0 changed, 0 unchanged), 0 failed"),
        "{out}"
    );
    assert!(
        !first.lines().iter().any(|l| l.contains("event=reported")),
        "the first worker reported nothing"
    );
    second.wait_for(&["event=taken", "delivery=2"], 1);
    assert_eq!(installs(&site, "pinlog-fixture-slow"), 2, "looked at twice");
    assert_eq!(queued_looks(&site).len(), 1);
    assert_eq!(site.entries().len(), 1);
    assert!(verified(&site).starts_with("log OK: pinlog.local/log, 1 entries"));
}

#[test]
fn a_coordinator_killed_after_results_were_published_applies_them_once_on_restart() {
    let site = Site::new(PINLOG);
    let Some(nats) = Nats::start(&site.path("nats")) else {
        return;
    };
    let names = ["pinlog-fixture-p", "pinlog-fixture-q", "pinlog-fixture-r"];
    seeds(
        &site,
        &names
            .iter()
            .map(|n| (*n, serde_json::json!({"description": format!("I am {n}.")})))
            .collect::<Vec<_>>(),
    );
    let reg = site.registries(None, None);
    let mut cmd = coordinator(&site, &reg, &nats, &[]);
    cmd.stdout(Stdio::null());
    let mut first = Proc::spawn(cmd, site.path("coordinator-1.log"));
    first.wait_for(&["event=planned", "planned=3"], 1);
    first.kill();
    // The workers report while no coordinator runs: the results wait in their stream.
    let mut w = worker(&site, &reg, &nats, "w");
    w.wait_for(&["event=reported"], 3);
    w.kill();
    assert_eq!(site.entries().len(), 0);
    assert_eq!(queued_looks(&site).len(), 0);

    let out = stdout_of(coordinator(&site, &reg, &nats, &[]).output().unwrap());
    assert!(
        out.contains("looked at 3: 3 ok (3 new, 0 changed, 0 unchanged), 0 failed"),
        "{out}"
    );
    assert_eq!(
        site.sql::<i64>("SELECT count(*) FROM crawl_runs"),
        [1],
        "the run planned before the kill was finished, not planned again"
    );
    assert_eq!(queued_looks(&site).len(), 3);
    assert_eq!(site.entries().len(), 3);
    for n in names {
        assert_eq!(installs(&site, n), 1, "{n} looked at once");
    }
    assert!(verified(&site).starts_with("log OK: pinlog.local/log, 3 entries"));
}

#[test]
fn nats_restarted_mid_run_loses_nothing_and_doubles_nothing() {
    let site = Site::new(PINLOG);
    let Some(mut nats) = Nats::start(&site.path("nats")) else {
        return;
    };
    let names: Vec<String> = (0..4).map(|i| format!("pinlog-fixture-slow-{i}")).collect();
    seeds(
        &site,
        &names
            .iter()
            .map(|n| (n.as_str(), serde_json::json!({"mode": "slow"})))
            .collect::<Vec<_>>(),
    );
    let reg = site.registries(None, None);
    let mut cmd = coordinator(&site, &reg, &nats, &[]);
    cmd.stdout(Stdio::piped());
    let run = cmd.spawn().unwrap();
    let mut w = worker(&site, &reg, &nats, "w");
    w.wait_for(&["event=reported"], 1);
    nats.kill();
    std::thread::sleep(Duration::from_secs(2));
    nats.up();
    let out = stdout_of(run.wait_with_output().unwrap());
    assert!(
        out.contains("looked at 4: 4 ok (4 new, 0 changed, 0 unchanged), 0 failed"),
        "{out}"
    );
    let looks = queued_looks(&site);
    assert_eq!(looks.len(), 4, "{looks:?}");
    assert_eq!(site.entries().len(), 4);
    let mut servers: Vec<String> = site
        .entries()
        .iter()
        .map(|e| e["server"].as_str().unwrap().to_string())
        .collect();
    servers.sort();
    servers.dedup();
    assert_eq!(servers.len(), 4, "one entry per server");
    assert!(verified(&site).starts_with("log OK: pinlog.local/log, 4 entries"));
    w.kill();
}

#[test]
fn a_job_that_fails_on_every_delivery_is_recorded_after_the_limit() {
    let site = Site::new(PINLOG);
    let Some(nats) = Nats::start(&site.path("nats")) else {
        return;
    };
    seeds(
        &site,
        &[
            ("pinlog-fixture-fine", serde_json::json!({})),
            ("pinlog-fixture-doomed", serde_json::json!({"mode": "slow"})),
        ],
    );
    let reg = site.registries(None, None);
    let run = coordinator(&site, &reg, &nats, &["--max-deliver", "2"])
        .spawn()
        .unwrap();
    // Whoever takes the doomed look dies in it, as a worker the server's look brings down.
    for attempt in 1..=2 {
        let mut w = worker(&site, &reg, &nats, &format!("doomed-{attempt}"));
        w.wait_for(&["event=taken", "pinlog-fixture-doomed"], 1);
        w.kill();
    }
    let last = worker(&site, &reg, &nats, "last");
    let out = stdout_of(run.wait_with_output().unwrap());
    assert!(
        out.contains("looked at 2: 1 ok (1 new, 0 changed, 0 unchanged), 1 failed")
            && out.contains("worker-gave-up: 1"),
        "{out}"
    );
    assert_eq!(site.outcome("npm:pinlog-fixture-doomed"), "worker-gave-up");
    assert_eq!(
        site.sql::<String>(
            "SELECT last_error FROM servers WHERE server = 'npm:pinlog-fixture-doomed'"
        ),
        ["worker-gave-up"]
    );
    assert!(
        !last
            .lines()
            .iter()
            .any(|l| l.contains("event=taken") && l.contains("pinlog-fixture-doomed")),
        "not delivered a third time"
    );
    assert_eq!(queued_looks(&site).len(), 2);
    assert_eq!(site.entries().len(), 1);
    assert!(verified(&site).starts_with("log OK: pinlog.local/log, 1 entries"));
}

/// The `n` planned looks (look id, job), as the coordinator recorded them.
fn planned(site: &Site, n: usize) -> Vec<(String, String)> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        // Read-only: the coordinator makes the store.
        let ids: Vec<(String, String)> = rusqlite::Connection::open_with_flags(
            site.db(),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .and_then(|c| {
            c.prepare("SELECT look_id, job FROM queue_jobs ORDER BY rowid")
                .and_then(|mut s| {
                    s.query_map([], |r| {
                        Ok((
                            r.get(0)?,
                            String::from_utf8(r.get::<_, Vec<u8>>(1)?).unwrap(),
                        ))
                    })
                    .map(|rows| rows.map(Result::unwrap).collect())
                })
        })
        .unwrap_or_default();
        if ids.len() == n {
            return ids;
        }
        assert!(Instant::now() < deadline, "nothing planned");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Publishes `payload` on the results subject under `look`'s id, as a worker would.
fn publish_result(url: &str, look: &str, payload: Vec<u8>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = async_nats::connect(url).await.unwrap();
        let js = async_nats::jetstream::new(client);
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Nats-Msg-Id", look);
        js.publish_with_headers("pinlog.results", headers, payload.into())
            .await
            .unwrap()
            .await
            .unwrap();
    });
}

/// The object store's bucket of large results, as the coordinator declares it.
const OBJECTS: &str = "PINLOG_LARGE_RESULTS";

/// Puts `bytes` in the bucket under `name`, as a worker puts a large result.
fn put_object(url: &str, name: &str, bytes: &[u8]) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = async_nats::connect(url).await.unwrap();
        let js = async_nats::jetstream::new(client);
        let bucket = js.get_object_store(OBJECTS).await.unwrap();
        bucket.put(name, &mut &bytes[..]).await.unwrap();
    });
}

/// (messages held, last sequence number) of the bucket's stream.
fn bucket_state(url: &str) -> (u64, u64) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = async_nats::connect(url).await.unwrap();
        let js = async_nats::jetstream::new(client);
        let mut stream = js.get_stream(format!("OBJ_{OBJECTS}")).await.unwrap();
        let state = stream.info().await.unwrap().state.clone();
        (state.messages, state.last_sequence)
    })
}

/// `sha256:<hex>` of `bytes`, computed here rather than by the code under test.
fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    let d = sha2::Sha256::digest(bytes);
    format!(
        "sha256:{}",
        d.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// A worker's reference for `look` to the object `name`, said to be `bytes`.
fn reference(look: &str, name: &str, bytes: &[u8]) -> Vec<u8> {
    serde_json::json!({
        "look": look,
        "object": {"bucket": OBJECTS, "digest": sha256(bytes), "length": bytes.len(), "name": name},
        "v": "1"
    })
    .to_string()
    .into_bytes()
}

#[test]
fn a_malformed_or_oversized_result_is_refused_with_its_reason_and_never_appended() {
    let site = Site::new(PINLOG);
    let Some(nats) = Nats::start(&site.path("nats")) else {
        return;
    };
    let names = [
        "pinlog-fixture-m1",
        "pinlog-fixture-m2",
        "pinlog-fixture-m3",
    ];
    seeds(
        &site,
        &names
            .iter()
            .map(|n| (*n, serde_json::json!({})))
            .collect::<Vec<_>>(),
    );
    let reg = site.registries(None, None);
    let mut cmd = coordinator(&site, &reg, &nats, &[]);
    cmd.stdout(Stdio::piped());
    let run = cmd.spawn().unwrap();
    let planned = planned(&site, 3);
    let server_of = |job: &str| -> String {
        let v: serde_json::Value = serde_json::from_str(job).unwrap();
        v["candidate"]["server"].as_str().unwrap().to_string()
    };
    // Not JSON at all.
    publish_result(&nats.url(), &planned[0].0, b"{\"look\":".to_vec());
    // Past the largest result a worker may send, though the object store takes it.
    let mut big = b"{\"pad\":\"".to_vec();
    big.resize(5 << 20, b'x');
    big.extend_from_slice(b"\"}");
    put_object(&nats.url(), &planned[1].0, &big);
    publish_result(
        &nats.url(),
        &planned[1].0,
        reference(&planned[1].0, &planned[1].0, &big),
    );
    // Well formed, canonical, but claiming an outcome only the coordinator records, with a
    // surface beside it.
    let forged = serde_json::json!({
        "arg_placeholders": [], "caps": null,
        "conditions": {"asked": "auto", "crawler": "pinlog/0.2.0", "sandbox": "bubblewrap"},
        "env_placeholders": [], "env_supplied": [], "env_wanted": [],
        "failure": {"detail": "x", "exit_code": null, "reason": "opt-out"},
        "install": null, "look": planned[2].0, "notes": [], "passes": null, "registry_digest": null, "revision": null,
        "server": server_of(&planned[2].1),
        "surface": null, "took_ms": 1, "transport": "stdio", "v": "1", "version": "1.0.0"
    });
    publish_result(&nats.url(), &planned[2].0, forged.to_string().into_bytes());

    let out = stdout_of(run.wait_with_output().unwrap());
    assert!(
        out.contains("looked at 3: 0 ok (0 new, 0 changed, 0 unchanged), 3 failed")
            && out.contains("result-refused: 3"),
        "{out}"
    );
    let details = site
        .sql::<String>("SELECT detail FROM crawl_looks WHERE look_id IS NOT NULL ORDER BY rowid");
    assert!(details[0].contains("json:"), "{details:?}");
    assert!(details[1].contains("too-large"), "{details:?}");
    assert!(details[2].contains("reason:"), "{details:?}");
    assert_eq!(site.entries().len(), 0);
    assert_eq!(queued_looks(&site).len(), 3);
    let v = verified(&site);
    assert!(v.starts_with("log OK: pinlog.local/log, 0 entries"), "{v}");
}

#[test]
fn a_result_larger_than_a_message_goes_through_the_object_store_and_is_settled_as_one_process_would(
) {
    // A tool whose description alone is past nats-server's default max_payload (1 MiB).
    let big = serde_json::json!({"description": "x".repeat(1_500_000)});
    let small = serde_json::json!({"description": "Small."});
    let packages = [("pinlog-fixture-big", big), ("pinlog-fixture-small", small)];

    // The reference: the single process.
    let alone = Site::new(PINLOG);
    seeds(&alone, &packages);
    let reg = alone.registries(None, None);
    let out = ok(&alone.crawl(&reg, &["--source", "seeds"]));
    assert!(out.contains("looked at 2: 2 ok (2 new"), "{out}");

    let site = Site::new(PINLOG);
    let Some(nats) = Nats::start(&site.path("nats")) else {
        return;
    };
    seeds(&site, &packages);
    let reg = site.registries(None, None);
    let run = coordinator(&site, &reg, &nats, &[]).spawn().unwrap();
    let mut w = worker(&site, &reg, &nats, "w");
    let out = stdout_of(run.wait_with_output().unwrap());
    assert!(
        out.contains("looked at 2: 2 ok (2 new, 0 changed, 0 unchanged), 0 failed"),
        "{out}"
    );
    w.kill();

    // The same entries, blobs and digests as the single process recorded, but for the time.
    let without_time = |mut e: serde_json::Value| {
        e.as_object_mut().unwrap().remove("observed_at");
        e
    };
    let queued: Vec<_> = site.entries().into_iter().map(without_time).collect();
    let single: Vec<_> = alone.entries().into_iter().map(without_time).collect();
    assert_eq!(queued.len(), 2);
    for e in &single {
        assert!(queued.contains(e), "{} differs", e["server"]);
    }
    let big_entry = queued
        .iter()
        .find(|e| e["server"] == "npm:pinlog-fixture-big")
        .unwrap();
    let blob = site.blob_text(big_entry);
    assert!(blob.len() > 1 << 20, "{}", blob.len());
    assert_eq!(sha256(blob.as_bytes()), big_entry["blob"]);
    // The large result went through the bucket, and nothing is left in it.
    let (held, last) = bucket_state(&nats.url());
    assert_eq!(held, 0, "the bucket is emptied once the run is done");
    assert!(last > 0, "nothing went through the bucket");
    assert!(verified(&site).starts_with("log OK: pinlog.local/log, 2 entries"));
}

#[test]
fn a_reference_to_another_looks_object_or_one_that_does_not_match_is_refused_by_rule() {
    let site = Site::new(PINLOG);
    let Some(nats) = Nats::start(&site.path("nats")) else {
        return;
    };
    let names = [
        "pinlog-fixture-o1",
        "pinlog-fixture-o2",
        "pinlog-fixture-o3",
        "pinlog-fixture-o4",
    ];
    seeds(
        &site,
        &names
            .iter()
            .map(|n| (*n, serde_json::json!({})))
            .collect::<Vec<_>>(),
    );
    let reg = site.registries(None, None);
    let mut cmd = coordinator(&site, &reg, &nats, &[]);
    cmd.stdout(Stdio::piped());
    let run = cmd.spawn().unwrap();
    let planned = planned(&site, 4);
    let look = |i: usize| planned[i].0.as_str();
    let url = nats.url();
    let object = vec![b'x'; 2 << 20];
    // The object of another look: the second look's, put by whoever reported it.
    put_object(&url, look(1), &object);
    publish_result(&url, look(0), reference(look(0), look(1), &object));
    // Its own object, as long as its reference says, but not the bytes it names.
    publish_result(
        &url,
        look(1),
        reference(look(1), look(1), &vec![b'y'; object.len()]),
    );
    // No object at all.
    publish_result(&url, look(2), reference(look(2), look(2), &object));
    // An object longer than its reference says, with the digest of what the reference says.
    put_object(&url, look(3), &object);
    publish_result(
        &url,
        look(3),
        reference(look(3), look(3), &object[..1 << 20]),
    );

    let out = stdout_of(run.wait_with_output().unwrap());
    assert!(
        out.contains("looked at 4: 0 ok (0 new, 0 changed, 0 unchanged), 4 failed")
            && out.contains("result-refused: 4"),
        "{out}"
    );
    let detail = |i: usize| {
        site.sql::<String>(&format!(
            "SELECT outcome || ' ' || detail FROM crawl_looks WHERE look_id = '{}'",
            look(i)
        ))
        .join("\n")
    };
    for (i, rule) in [
        "object-name:",
        "object-digest:",
        "object-missing:",
        "object-length:",
    ]
    .iter()
    .enumerate()
    {
        let d = detail(i);
        assert!(
            d.starts_with("result-refused ") && d.contains(rule),
            "{i}: {d}"
        );
    }
    assert_eq!(site.entries().len(), 0);
    assert_eq!(bucket_state(&url).0, 0, "the bucket is emptied");
    let v = verified(&site);
    assert!(v.starts_with("log OK: pinlog.local/log, 0 entries"), "{v}");
}

#[test]
fn a_server_without_jetstream_or_with_too_small_messages_is_refused_saying_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let worker = |nats: &Nats| {
        Command::new(PINLOG)
            .args(["crawl-worker", "--queue", &nats.url()])
            .arg("--work")
            .arg(dir.path())
            .arg("--install-cache")
            .arg(dir.path().join("cache"))
            .output()
            .unwrap()
    };
    let Some(plain) = Nats::start_with(&dir.path().join("plain"), &[]) else {
        return;
    };
    let o = worker(&plain);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(
        err.contains("has no JetStream: start nats-server with -js"),
        "{err}"
    );
    drop(plain);

    let conf = dir.path().join("small.conf");
    std::fs::write(&conf, "max_payload: 64KB\n").unwrap();
    let small = Nats::start_with(
        &dir.path().join("small"),
        &["-js", "-c", conf.to_str().unwrap()],
    )
    .unwrap();
    let o = worker(&small);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(
        err.contains("takes messages of at most 65536 bytes")
            && err.contains("remove max_payload from its configuration"),
        "{err}"
    );
}

#[test]
fn a_queue_that_is_not_nats_host_port_is_a_usage_error_and_one_out_of_reach_unreadable() {
    for args in [
        vec!["crawl", "--queue", "http://127.0.0.1:4222"],
        vec!["crawl", "--queue", "nats://127.0.0.1"],
        vec![
            "crawl",
            "--queue",
            "nats://127.0.0.1:4222",
            "--concurrency",
            "4",
        ],
        vec![
            "crawl-worker",
            "--queue",
            "nats://user:secret@127.0.0.1:4222",
        ],
        vec!["crawl", "--max-deliver", "2"],
    ] {
        let o = Command::new(PINLOG).args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(PINLOG)
        .args([
            "crawl-worker",
            "--queue",
            &format!("nats://127.0.0.1:{}", free_port()),
        ])
        .arg("--work")
        .arg(dir.path())
        .arg("--install-cache")
        .arg(dir.path().join("cache"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cannot connect to nats://127.0.0.1:"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
