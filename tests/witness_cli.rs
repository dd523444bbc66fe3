//! `pinlog log publish --witness-policy` against real witnesses that nobody here wrote, each run
//! by the test on loopback with a fresh state: aics-witness (PyPI), sigsum-witness (Debian's
//! sigsum-go) and litewitness (Debian's litetlog, whose build panics on every checkpoint it would
//! accept, so it shows refusals only). The served checkpoints are checked with `verify-log
//! --witness`. `.ci/setup` installs the witnesses.

use std::fs::File;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use pinlog_log::note::SignerKey;
use pinlog_log::store::Store;
use pinlog_testkit::log::{append_more, Chain};
use pinlog_testkit::output::text;
use pinlog_testkit::repo::installed;
use pinlog_testkit::server::free_port;
use sha2::{Digest, Sha256};

/// How long a witness may take to start listening.
const START: Duration = Duration::from_secs(30);

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs a setup command to completion and returns its standard output, trimmed.
fn run(cmd: &mut Command) -> String {
    let o = cmd.output().expect("the command runs");
    assert!(o.status.success(), "{cmd:?}: {}", text(&o.stderr));
    text(&o.stdout).trim().to_string()
}

fn pinlog(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pinlog"))
        .args(args)
        .env_remove("CI")
        .output()
        .expect("the pinlog binary runs")
}

/// A process the test started, killed when dropped.
struct Running {
    child: Child,
    stderr: PathBuf,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Running {
    /// Starts `cmd`, its output kept in `dir`, and waits until it listens on `port`.
    fn listening(mut cmd: Command, dir: &Path, port: u16) -> Running {
        let mut running = Running::spawn(&mut cmd, dir);
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        running.wait_for(|| TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok());
        running
    }

    fn spawn(cmd: &mut Command, dir: &Path) -> Running {
        let stderr = dir.join("stderr");
        let child = cmd
            .stdin(Stdio::null())
            .stdout(File::create(dir.join("stdout")).unwrap())
            .stderr(File::create(&stderr).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("{cmd:?} does not start ({e}): run `bash .ci/setup`"));
        Running { child, stderr }
    }

    /// Waits, at most [`START`], until `ready`; fails with what the process said if it exits.
    fn wait_for(&mut self, ready: impl Fn() -> bool) {
        let deadline = Instant::now() + START;
        while !ready() {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("it exited ({status}): {}", self.said());
            }
            assert!(Instant::now() < deadline, "not ready: {}", self.said());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn said(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

/// A log whose origin is the one sigsum-witness requires, `sigsum.org/v1/tree/<hex sha256 of the
/// log's public key>`, made with `log init` over a key made from `seed`.
struct Log {
    db: PathBuf,
    key: PathBuf,
    vkey: String,
    vkey_file: PathBuf,
    origin: String,
    public: [u8; 32],
}

impl Log {
    fn new(dir: &Path, seed: u8) -> Log {
        std::fs::create_dir_all(dir).unwrap();
        let public = *SignerKey::from_seed("any", [seed; 32]).verifier().public();
        let origin = format!("sigsum.org/v1/tree/{}", hex(&Sha256::digest(public)));
        let signer = SignerKey::from_seed(&origin, [seed; 32]);
        let key = dir.join("key");
        std::fs::write(&key, format!("{}\n", signer.to_private_text())).unwrap();
        let db = dir.join("log.db");
        let o = pinlog(&[
            "log",
            "init",
            "--db",
            p(&db),
            "--origin",
            &origin,
            "--key",
            p(&key),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let vkey = text(&o.stdout).trim().to_string();
        assert_eq!(vkey, signer.verifier().to_string());
        let vkey_file = dir.join("vkey");
        std::fs::write(&vkey_file, format!("{vkey}\n")).unwrap();
        Log {
            db,
            key,
            vkey,
            vkey_file,
            origin,
            public,
        }
    }

    /// Appends entries `from..to`, each server changing every `servers` entries: two logs filled
    /// alike agree, and a different `servers` makes them diverge from `from` on.
    fn fill(&self, from: u64, to: u64, servers: u64) -> &Log {
        let mut store = Store::open(&self.db).unwrap();
        let mut chain = Chain::from_store(&store);
        append_more(&mut store, &mut chain, from, to, servers);
        self
    }

    fn publish(&self, out: &Path, policy: Option<&Path>) -> Output {
        let mut args = vec![
            "log",
            "publish",
            "--db",
            p(&self.db),
            "--key",
            p(&self.key),
            "--out",
            p(out),
            "--witness-timeout",
            "20s",
        ];
        if let Some(policy) = policy {
            args.extend(["--witness-policy", p(policy)]);
        }
        pinlog(&args)
    }

    /// `verify-log` of `out` with these witnesses' vkeys and quorum.
    fn verify(&self, out: &Path, witnesses: &[&Witness], quorum: usize) -> Output {
        let quorum = quorum.to_string();
        let mut args = vec!["verify-log", p(out), "--vkey-file", p(&self.vkey_file)];
        for w in witnesses {
            args.extend(["--witness", &w.vkey]);
        }
        args.extend(["--quorum", &quorum]);
        pinlog(&args)
    }
}

/// A running witness: the name a policy gives it, its address, its cosigner vkey, and the key as
/// a policy writes it.
struct Witness {
    name: &'static str,
    url: String,
    vkey: String,
    policy_key: String,
    process: Option<Running>,
}

impl Witness {
    /// Stops it: from now on nothing listens at its address.
    fn kill(&mut self) {
        self.process = None;
    }
}

/// aics-witness, trusting `log`.
fn aics(dir: &Path, log: &Log) -> Witness {
    let bin = installed(".ci/venv-witness/bin/aics-witness");
    let dir = dir.join("aics");
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("witness.json");
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let vkey = run(Command::new(&bin).current_dir(&dir).args([
        "init",
        "--config",
        p(&config),
        "--name",
        "example.test/aics-witness",
        "--listen",
        &listen,
    ]));
    run(Command::new(&bin).current_dir(&dir).args([
        "add-log",
        "--config",
        p(&config),
        "--origin",
        &log.origin,
        "--vkey",
        &log.vkey,
    ]));
    let mut serve = Command::new(&bin);
    serve
        .current_dir(&dir)
        .args(["serve", "--config", p(&config)]);
    Witness {
        name: "aics",
        url: format!("http://{listen}"),
        policy_key: vkey.clone(),
        vkey,
        process: Some(Running::listening(serve, &dir, port)),
    }
}

/// sigsum-witness, which witnesses `log` alone; the policy gives its key in Sigsum's hex form.
fn sigsum(dir: &Path, log: &Log) -> Witness {
    let key_tool = installed(".ci/debs/sigsum-go/usr/bin/sigsum-key");
    let bin = installed(".ci/debs/sigsum-go/usr/bin/sigsum-witness");
    let dir = dir.join("sigsum");
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("witness.key");
    let public = dir.join("witness.key.pub");
    run(Command::new(&key_tool).args(["generate", "-o", p(&key)]));
    let witness_hex = run(Command::new(&key_tool).args(["to-hex", "-k", p(&public)]));
    let raw: Vec<u8> = (0..64)
        .step_by(2)
        .map(|i| u8::from_str_radix(&witness_hex[i..i + 2], 16).unwrap())
        .collect();
    let name = format!("sigsum.org/v1/witness/{}", hex(&Sha256::digest(&raw)));
    let vkey = run(Command::new(&key_tool).args([
        "to-vkey",
        "-k",
        p(&public),
        "-n",
        &name,
        "-t",
        "cosignature/v1",
    ]));
    let log_hex = dir.join("log.hex");
    let log_key = dir.join("log.pub");
    std::fs::write(&log_hex, format!("{}\n", hex(&log.public))).unwrap();
    run(Command::new(&key_tool).args(["from-hex", "-k", p(&log_hex), "-o", p(&log_key)]));
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut serve = Command::new(&bin);
    serve
        // Debian's build defaults to Go 1.21's request router, which matches no route of it.
        .env("GODEBUG", "httpmuxgo121=0")
        .args([
            "-k",
            p(&key),
            "--log-key",
            p(&log_key),
            "--state-file",
            p(&dir.join("state")),
            &listen,
        ]);
    Witness {
        name: "sigsum",
        url: format!("http://{listen}"),
        vkey,
        policy_key: witness_hex,
        process: Some(Running::listening(serve, &dir, port)),
    }
}

/// litewitness with its key in an ssh-agent of its own, trusting `log` if given.
fn litewitness(dir: &Path, log: Option<&Log>) -> (Witness, Running) {
    let bin = installed(".ci/debs/litetlog/usr/bin/litewitness");
    let ctl = installed(".ci/debs/litetlog/usr/bin/witnessctl");
    let dir = dir.join("litewitness");
    let agent_dir = dir.join("agent");
    std::fs::create_dir_all(&agent_dir).unwrap();
    let key = dir.join("witness.key");
    run(Command::new("ssh-keygen").args([
        "-q",
        "-t",
        "ed25519",
        "-N",
        "",
        "-C",
        "litewitness",
        "-f",
        p(&key),
    ]));
    let socket = dir.join("agent.sock");
    let mut agent = Running::spawn(
        Command::new("ssh-agent").args(["-D", "-a", p(&socket)]),
        &agent_dir,
    );
    agent.wait_for(|| socket.exists());
    run(Command::new("ssh-add")
        .env("SSH_AUTH_SOCK", &socket)
        .arg(p(&key)));
    let listed = run(Command::new("ssh-keygen").args(["-lf", &format!("{}.pub", p(&key))]));
    let fingerprint = listed.split(' ').nth(1).unwrap().to_string();
    let db = dir.join("lw.db");
    if let Some(log) = log {
        run(Command::new(&ctl).args(["add-log", "-db", p(&db), "-origin", &log.origin]));
        run(Command::new(&ctl).args([
            "add-key",
            "-db",
            p(&db),
            "-origin",
            &log.origin,
            "-key",
            &log.vkey,
        ]));
    }
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut serve = Command::new(&bin);
    serve
        // Debian's build defaults to Go 1.21's request router, which matches no route of it.
        .env("GODEBUG", "httpmuxgo121=0")
        .args([
            "-name",
            "example.test/litewitness",
            "-key",
            &fingerprint,
            "-ssh-agent",
            p(&socket),
            "-db",
            p(&db),
            "-listen",
            &listen,
        ]);
    let process = Running::listening(serve, &dir, port);
    // It prints its cosigner vkey on standard error when it starts.
    let vkey = process
        .said()
        .lines()
        .find_map(|l| {
            l.contains("msg=\"verifier key\"")
                .then(|| l.split("vkey=").nth(1))
                .flatten()
        })
        .unwrap_or_else(|| panic!("no vkey printed: {}", process.said()))
        .trim()
        .to_string();
    let witness = Witness {
        name: "lite",
        url: format!("http://{listen}"),
        policy_key: vkey.clone(),
        vkey,
        process: Some(process),
    };
    (witness, agent)
}

/// A policy file for `log` naming `witnesses`, whose quorum is one group of them with `rule`
/// (`all`, `any` or a number).
fn policy(path: &Path, log: &Log, witnesses: &[&Witness], rule: &str) -> PathBuf {
    let mut text = format!("# {}\nlog {}\n", log.origin, log.vkey);
    for w in witnesses {
        text.push_str(&format!("witness {} {} {}\n", w.name, w.policy_key, w.url));
    }
    let names: Vec<&str> = witnesses.iter().map(|w| w.name).collect();
    text.push_str(&format!("group q {rule} {}\nquorum q\n", names.join(" ")));
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}

/// The signature lines of the served checkpoint, by name.
fn signers(out: &Path) -> Vec<String> {
    let note = std::fs::read_to_string(out.join("checkpoint")).unwrap();
    note.lines()
        .filter_map(|l| l.strip_prefix("— "))
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect()
}

fn checkpoint(out: &Path) -> Option<Vec<u8>> {
    std::fs::read(out.join("checkpoint")).ok()
}

/// Asserts a publish failed with `code` and says `what` of the witness `name`.
fn refused(o: &Output, code: i32, name: &str, what: &str) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{}{err}", text(&o.stdout));
    assert!(err.contains("witness-quorum: "), "{err}");
    assert!(err.contains(&format!("[{name}: {what}")), "{err}");
}

#[test]
fn both_witnesses_cosign_and_the_checkpoint_served_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let log = Log::new(&dir.join("log"), 1);
    log.fill(0, 10, 3);
    let a = aics(dir, &log);
    let s = sigsum(dir, &log);
    // aics-witness's key as a vkey, sigsum-witness's as Sigsum's hex.
    let both = policy(&dir.join("both"), &log, &[&a, &s], "all");
    assert_eq!(s.policy_key.len(), 64);
    let out = dir.join("out");

    let o = log.publish(&out, Some(&both));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("cosigned by aics, sigsum"),
        "{}",
        text(&o.stdout)
    );
    assert_eq!(
        signers(&out),
        [
            log.origin.as_str(),
            "example.test/aics-witness",
            s.vkey.split('+').next().unwrap()
        ]
    );
    let o = log.verify(&out, &[&a, &s], 2);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));

    // Grown, the log proves to each witness that it extends what it cosigned; here the policy
    // gives sigsum-witness's key as the vkey Sigsum's own tool makes of it.
    log.fill(10, 25, 3);
    let vkeys = Witness {
        policy_key: s.vkey.clone(),
        name: s.name,
        url: s.url.clone(),
        vkey: s.vkey.clone(),
        process: None,
    };
    let both_vkeys = policy(&dir.join("vkeys"), &log, &[&a, &vkeys], "2");
    let o = log.publish(&out, Some(&both_vkeys));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("25 entries"),
        "{}",
        text(&o.stdout)
    );
    let o = log.verify(&out, &[&a, &s], 2);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("25 entries"),
        "{}",
        text(&o.stdout)
    );

    // Nothing new: the checkpoint served stays, with its cosignatures.
    let served = checkpoint(&out);
    let o = log.publish(&out, Some(&both));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(checkpoint(&out), served);

    // The same log published afresh by a store that does not know what the witnesses cosigned:
    // each answers 409 with its size, and the retry from that size is cosigned.
    let copy = Log::new(&dir.join("copy"), 1);
    copy.fill(0, 30, 3);
    let fresh = dir.join("fresh");
    let o = copy.publish(&fresh, Some(&both));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = copy.verify(&fresh, &[&a, &s], 2);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("30 entries"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn one_witness_down_meets_any_but_not_all() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let log = Log::new(&dir.join("log"), 2);
    log.fill(0, 10, 3);
    let a = aics(dir, &log);
    let mut s = sigsum(dir, &log);
    let all = policy(&dir.join("all"), &log, &[&a, &s], "all");
    let any = policy(&dir.join("any"), &log, &[&a, &s], "any");
    let out = dir.join("out");
    let o = log.publish(&out, Some(&all));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let before = checkpoint(&out).unwrap();

    s.kill();
    log.fill(10, 15, 3);
    let o = log.publish(&out, Some(&all));
    refused(&o, 4, "sigsum", "witness-unreachable");
    assert!(text(&o.stderr).contains("[aics: cosigned]"));
    assert_eq!(checkpoint(&out).unwrap(), before);
    // The checkpoint served still verifies with both witnesses.
    let o = log.verify(&out, &[&a, &s], 2);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("10 entries"),
        "{}",
        text(&o.stdout)
    );

    let o = log.publish(&out, Some(&any));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("cosigned by aics"),
        "{}",
        text(&o.stdout)
    );
    assert_eq!(
        signers(&out),
        [log.origin.as_str(), "example.test/aics-witness"]
    );
    let o = log.verify(&out, &[&a, &s], 1);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("15 entries"),
        "{}",
        text(&o.stdout)
    );
    let o = log.verify(&out, &[&a, &s], 2);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
}

#[test]
fn witnesses_ahead_of_a_rolled_back_store_refuse_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let log = Log::new(&dir.join("log"), 3);
    log.fill(0, 10, 3);
    let a = aics(dir, &log);
    let s = sigsum(dir, &log);
    let both = policy(&dir.join("both"), &log, &[&a, &s], "any");
    let o = log.publish(&dir.join("out"), Some(&both));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));

    // The same key and the first 8 entries: each witness answers 409 with size 10.
    let rolled_back = Log::new(&dir.join("rolled-back"), 3);
    rolled_back.fill(0, 8, 3);
    let out = dir.join("rolled-back-out");
    let o = rolled_back.publish(&out, Some(&both));
    refused(
        &o,
        1,
        "aics",
        "witness-ahead: 409, it has cosigned a tree of size 10",
    );
    refused(
        &o,
        1,
        "sigsum",
        "witness-ahead: 409, it has cosigned a tree of size 10",
    );
    assert_eq!(checkpoint(&out), None);
}

#[test]
fn a_forked_store_is_refused_and_never_served() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let log = Log::new(&dir.join("log"), 4);
    log.fill(0, 10, 3);
    let a = aics(dir, &log);
    let s = sigsum(dir, &log);
    let both = policy(&dir.join("both"), &log, &[&a, &s], "any");
    let served = dir.join("out");
    let o = log.publish(&served, Some(&both));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let before = checkpoint(&served).unwrap();

    // The same key and origin, the same first 6 entries, then others: a fork at sizes 10 and 12.
    let fork = Log::new(&dir.join("fork"), 4);
    fork.fill(0, 6, 3).fill(6, 12, 5);
    let out = dir.join("fork-out");
    let o = fork.publish(&out, Some(&both));
    refused(&o, 1, "aics", "witness-inconsistent: 422");
    refused(&o, 1, "sigsum", "witness-inconsistent: 422");
    assert_eq!(checkpoint(&out), None);
    // Into the directory that serves the log, it is refused before any witness is asked.
    let o = fork.publish(&served, Some(&both));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("refusing to sign a fork"));
    assert_eq!(checkpoint(&served).unwrap(), before);

    // The same size as the one cosigned, with another root.
    let same_size = Log::new(&dir.join("same-size"), 4);
    same_size.fill(0, 6, 3).fill(6, 10, 5);
    let out = dir.join("same-size-out");
    let o = same_size.publish(&out, Some(&both));
    refused(&o, 1, "aics", "witness-inconsistent: 422");
    refused(&o, 1, "sigsum", "witness-inconsistent: 422");
    assert_eq!(checkpoint(&out), None);
}

#[test]
fn litewitness_refuses_a_log_it_does_not_know() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let log = Log::new(&dir.join("log"), 5);
    log.fill(0, 5, 3);
    let (lite, _agent) = litewitness(dir, None);
    let only = policy(&dir.join("lite"), &log, &[&lite], "all");
    let out = dir.join("out");
    let o = log.publish(&out, Some(&only));
    // litewitness answers 403 for an origin it does not know, where the spec says 404.
    refused(&o, 4, "lite", "witness-not-trusted: 403");
    assert_eq!(checkpoint(&out), None);
}

#[test]
fn litewitness_refuses_a_rollback_and_a_fork_of_what_it_cosigned() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let log = Log::new(&dir.join("log"), 6);
    log.fill(0, 10, 3);
    let served = dir.join("out");
    let o = log.publish(&served, None);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let (lite, _agent) = litewitness(dir, Some(&log));
    // Debian's litewitness cannot record a cosignature (it panics first), so its database is given
    // the state it would hold after cosigning the served checkpoint of size 10.
    let note = std::fs::read_to_string(served.join("checkpoint")).unwrap();
    let root = note.lines().nth(2).unwrap();
    let db = rusqlite::Connection::open(dir.join("litewitness/lw.db")).unwrap();
    let changed = db
        .execute(
            "UPDATE log SET tree_size = 10, tree_hash = ?1 WHERE origin = ?2",
            [root, log.origin.as_str()],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(db);
    let only = policy(&dir.join("lite"), &log, &[&lite], "all");

    let rolled_back = Log::new(&dir.join("rolled-back"), 6);
    rolled_back.fill(0, 8, 3);
    let out = dir.join("rolled-back-out");
    let o = rolled_back.publish(&out, Some(&only));
    refused(
        &o,
        1,
        "lite",
        "witness-ahead: 409, it has cosigned a tree of size 10",
    );
    assert_eq!(checkpoint(&out), None);

    let fork = Log::new(&dir.join("fork"), 6);
    fork.fill(0, 6, 3).fill(6, 12, 5);
    let out = dir.join("fork-out");
    let o = fork.publish(&out, Some(&only));
    refused(&o, 1, "lite", "witness-inconsistent: 422");
    assert_eq!(checkpoint(&out), None);

    // A checkpoint it would accept: Debian's build panics while recording it and drops the
    // connection, which is no answer; the directory keeps what it served.
    log.fill(10, 14, 3);
    let before = checkpoint(&served).unwrap();
    let o = log.publish(&served, Some(&only));
    refused(&o, 4, "lite", "witness-unreachable");
    assert_eq!(checkpoint(&served).unwrap(), before);
}
