//! The `add-checkpoint` exchange against scripted witnesses: the cases a real witness cannot be
//! made to show on demand (a witness whose state is ahead, a malformed 409, an answer that is not
//! a cosignature, one that never comes), and the quorum over them. Real witnesses are run by
//! tests/witness_cli.rs.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use pinlog_log::checkpoint::Checkpoint;
use pinlog_log::cosignature::WitnessKey;
use pinlog_log::hash::Hash;
use pinlog_log::merkle::{self, CompactRange, HashSource};
use pinlog_log::note::{Note, SignerKey};
use pinlog_log::witness::{ask_all, request_body, Refusal, Reply, Transport};
use pinlog_log::witness_policy::WitnessPolicy;

const ORIGIN: &str = "example.test/log";

fn leaf(i: u64) -> Hash {
    Hash::leaf(format!("entry {i}").as_bytes())
}

/// The leaves of a tree in memory, as the proofs' source.
struct Leaves(Vec<Hash>);

impl HashSource for Leaves {
    type Error = std::convert::Infallible;
    fn subtree(&mut self, level: u8, index: u64) -> Result<Hash, Self::Error> {
        let n = 1u64 << level;
        let mut r = CompactRange::default();
        for i in index * n..(index + 1) * n {
            r.push(self.0[i as usize], |_, _, _| {});
        }
        Ok(r.root())
    }
}

fn root(size: u64) -> Hash {
    let mut r = CompactRange::default();
    for i in 0..size {
        r.push(leaf(i), |_, _, _| {});
    }
    r.root()
}

fn proof(old: u64, size: u64) -> Result<Vec<Hash>, String> {
    let mut leaves = Leaves((0..size).map(leaf).collect());
    Ok(merkle::consistency_proof(&mut leaves, old, size)
        .unwrap()
        .unwrap())
}

fn signed(size: u64) -> (Note, Checkpoint) {
    let c = Checkpoint {
        origin: ORIGIN.into(),
        size,
        root: root(size),
        extensions: Vec::new(),
    };
    let key = SignerKey::from_seed(ORIGIN, [9; 32]);
    let note = Note::parse(key.sign(&c.to_text()).unwrap().as_bytes()).unwrap();
    (note, c)
}

/// How a scripted witness answers.
#[derive(Clone, Copy)]
enum Script {
    /// As tlog-witness says, from the size it holds.
    Honest,
    /// A 409 whose body is not a size.
    BadConflict,
    /// A 200 whose line is signed by another key.
    WrongKey,
    /// No answer.
    Down,
}

struct Witness {
    key: WitnessKey,
    script: Script,
    /// The size and root it last cosigned.
    state: Mutex<(u64, Hash)>,
    requests: Mutex<Vec<String>>,
}

impl Witness {
    fn new(name: &str, seed: u8, script: Script, size: u64) -> Witness {
        Witness {
            key: WitnessKey::from_seed(name, [seed; 32]),
            script,
            state: Mutex::new((size, root(size))),
            requests: Mutex::new(Vec::new()),
        }
    }

    fn answer(&self, body: &[u8]) -> Result<Reply, String> {
        let text = std::str::from_utf8(body).unwrap();
        self.requests.lock().unwrap().push(text.to_string());
        let reply = |status, ct: Option<&str>, body: String| Reply {
            status,
            content_type: ct.map(str::to_string),
            body: body.into_bytes(),
        };
        let (head, note) = text.split_once("\n\n").unwrap();
        let mut lines = head.lines();
        let old: u64 = lines
            .next()
            .unwrap()
            .strip_prefix("old ")
            .unwrap()
            .parse()
            .unwrap();
        let hashes: Vec<Hash> = lines.map(|l| Hash::from_base64(l).unwrap()).collect();
        let note = Note::parse(note.as_bytes()).unwrap();
        let c = Checkpoint::parse(&note.text).unwrap();
        let mut state = self.state.lock().unwrap();
        match self.script {
            Script::Down => return Err("connection refused".into()),
            Script::BadConflict => return Ok(reply(409, Some("text/plain"), "5 or so".into())),
            _ => {}
        }
        if old != state.0 {
            return Ok(reply(
                409,
                Some("text/x.tlog.size"),
                format!("{}\n", state.0),
            ));
        }
        if old > 0 && merkle::verify_consistency(old, c.size, &hashes, &state.1, &c.root).is_err() {
            return Ok(reply(422, Some("text/plain"), "bad proof".into()));
        }
        *state = (c.size, c.root);
        let other = WitnessKey::from_seed(&self.key_name(), [99; 32]);
        let signer = match self.script {
            Script::WrongKey => &other,
            _ => &self.key,
        };
        let mut cosigned = note.clone();
        cosigned.signatures = vec![signer.cosign(&note.text, 1_800_000_000)];
        let line = cosigned.to_text();
        let line = &line[note.text.len() + 1..];
        Ok(reply(200, Some("text/plain"), line.to_string()))
    }

    fn key_name(&self) -> String {
        self.key.vkey().split('+').next().unwrap().to_string()
    }
}

/// Routes each URL to its witness.
struct Witnesses(Vec<Witness>);

impl Transport for Witnesses {
    fn post(&self, url: &str, body: &[u8], _deadline: Instant) -> Result<Reply, String> {
        let i: usize = url
            .strip_prefix("http://w")
            .and_then(|r| r.strip_suffix(".test/add-checkpoint"))
            .unwrap()
            .parse()
            .unwrap();
        self.0[i].answer(body)
    }
}

fn policy(ws: &Witnesses, quorum: &str) -> WitnessPolicy {
    let mut text = String::new();
    for (i, w) in ws.0.iter().enumerate() {
        text += &format!("witness w{i} {} http://w{i}.test/\n", w.key.vkey());
    }
    text += quorum;
    WitnessPolicy::parse(text.as_bytes()).unwrap()
}

fn ask(ws: &Witnesses, quorum: &str, size: u64, known: &[u64]) -> pinlog_log::witness::Asked {
    let (note, c) = signed(size);
    let deadline = Instant::now() + Duration::from_secs(5);
    ask_all(
        &policy(ws, quorum),
        ws,
        &note,
        &c,
        known,
        &|old| proof(old, size),
        deadline,
    )
}

fn witness(i: u8, script: Script, size: u64) -> Witness {
    Witness::new(&format!("w{i}.test/witness"), i, script, size)
}

#[test]
fn the_request_is_old_size_proof_lines_a_blank_line_and_the_note() {
    let (note, _) = signed(3);
    let p = proof(2, 3).unwrap();
    let body = String::from_utf8(request_body(2, &p, &note.to_text())).unwrap();
    let mut want = "old 2\n".to_string();
    for h in &p {
        want += &format!("{}\n", h.to_base64());
    }
    want += "\n";
    want += &note.to_text();
    assert_eq!(body, want);
}

#[test]
fn honest_witnesses_cosign_and_the_cosigned_note_verifies_with_their_keys() {
    let ws = Witnesses(vec![
        witness(0, Script::Honest, 4),
        witness(1, Script::Honest, 0),
    ]);
    let asked = ask(&ws, "group g all w0 w1\nquorum g\n", 10, &[4, 0]);
    assert!(asked.quorum_met(), "{:?}", asked.results);
    let (note, _) = signed(10);
    let cosigned = asked.cosigned(&note);
    let keys: Vec<_> =
        ws.0.iter()
            .map(|w| pinlog_log::note::VerifierKey::parse(&w.key.vkey()).unwrap())
            .collect();
    let by = pinlog_log::cosignature::verify_cosignatures(&cosigned, &keys).unwrap();
    assert_eq!(by.len(), 2);
    // The first witness was sent the proof from 4, the second none (it had cosigned nothing).
    let sent = ws.0[0].requests.lock().unwrap()[0].clone();
    assert!(sent.starts_with("old 4\n"), "{sent}");
    assert_eq!(
        sent.split("\n\n").next().unwrap().lines().count(),
        1 + proof(4, 10).unwrap().len()
    );
    assert!(ws.0[1].requests.lock().unwrap()[0].starts_with("old 0\n\n"));
}

#[test]
fn a_witness_ahead_of_what_the_store_knew_is_asked_again_from_its_size() {
    let ws = Witnesses(vec![witness(0, Script::Honest, 7)]);
    let asked = ask(&ws, "quorum w0\n", 10, &[0]);
    assert!(asked.quorum_met(), "{:?}", asked.results);
    let requests = ws.0[0].requests.lock().unwrap();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].starts_with("old 7\n"));
}

#[test]
fn a_witness_that_cosigned_a_larger_tree_is_a_fork_and_is_not_asked_again() {
    let ws = Witnesses(vec![witness(0, Script::Honest, 12)]);
    let asked = ask(&ws, "quorum w0\n", 10, &[0]);
    assert!(!asked.quorum_met());
    assert_eq!(asked.results[0], Err(Refusal::Ahead { size: 12 }));
    assert_eq!(ws.0[0].requests.lock().unwrap().len(), 1);
}

#[test]
fn a_witness_given_a_tree_that_does_not_extend_its_own_refuses_it() {
    // The witness cosigned a size-5 tree of other leaves: the proof from 5 cannot hold.
    let w = witness(0, Script::Honest, 5);
    *w.state.lock().unwrap() = (5, Hash::leaf(b"another tree"));
    let ws = Witnesses(vec![w]);
    let asked = ask(&ws, "quorum w0\n", 10, &[5]);
    assert!(
        matches!(asked.results[0], Err(Refusal::Inconsistent(_))),
        "{:?}",
        asked.results
    );
    assert_eq!(
        asked.results[0].as_ref().unwrap_err().rule(),
        "witness-inconsistent"
    );
}

#[test]
fn answers_that_break_the_protocol_are_refusals_by_name() {
    let ws = Witnesses(vec![
        witness(0, Script::BadConflict, 0),
        witness(1, Script::WrongKey, 0),
        witness(2, Script::Down, 0),
        witness(3, Script::Honest, 0),
    ]);
    let asked = ask(&ws, "group g 2 w0 w1 w2 w3\nquorum g\n", 3, &[0, 0, 0, 0]);
    assert!(!asked.quorum_met());
    let rules: Vec<_> = asked
        .results
        .iter()
        .map(|r| r.as_ref().map_err(Refusal::rule).err())
        .collect();
    assert_eq!(
        rules,
        [
            Some("witness-bad-answer"),
            Some("witness-bad-answer"),
            Some("witness-unreachable"),
            None
        ]
    );
    // One honest witness meets a quorum of one.
    let asked = ask(&ws, "group g any w0 w1 w2 w3\nquorum g\n", 3, &[0, 0, 0, 3]);
    assert!(asked.quorum_met());
}

#[test]
fn a_witness_without_an_address_is_not_asked() {
    let w = WitnessKey::from_seed("w0.test/witness", [0; 32]);
    let p =
        WitnessPolicy::parse(format!("witness w0 {}\nquorum w0\n", w.vkey()).as_bytes()).unwrap();
    let (note, c) = signed(1);
    let ws = Witnesses(vec![]);
    let asked = ask_all(
        &p,
        &ws,
        &note,
        &c,
        &[0],
        &|_| unreachable!(),
        Instant::now(),
    );
    assert_eq!(asked.results[0], Err(Refusal::NoUrl));
}
