//! Asking witnesses to cosign a checkpoint: the `add-checkpoint` request of C2SP tlog-witness,
//! every answer it defines, and whether the cosignatures that came back meet a policy's quorum.
//!
//! The requests go out in parallel, each through a [`Transport`] (HTTP in the binary, anything in
//! tests) and all within one deadline. A witness that answers 409 with the size it last cosigned
//! is asked once more, with the proof from that size. Nothing here writes or serves anything:
//! the caller serves the checkpoint only when [`Asked::quorum_met`] says so.

use std::fmt;
use std::time::Instant;

use pinlog_core::render::safe;

use crate::checkpoint::Checkpoint;
use crate::hash::Hash;
use crate::note::{Note, NoteSignature};
use crate::witness_policy::WitnessPolicy;

/// The most a witness's answer may hold; a few cosignature lines are a few hundred bytes.
pub const MAX_ANSWER: usize = 64 << 10;
/// The most consistency proof lines a request may carry (tlog-witness).
const MAX_PROOF: usize = 63;
/// The content type of a 409 answer's body, the witness's size.
const SIZE_TYPE: &str = "text/x.tlog.size";

/// What came back from one request.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
}

/// How a request reaches a witness.
pub trait Transport: Sync {
    /// Sends `body` to `url` with POST and returns the answer, whatever its status, or why none
    /// came back by `deadline`. The body read is at most [`MAX_ANSWER`] bytes.
    fn post(&self, url: &str, body: &[u8], deadline: Instant) -> Result<Reply, String>;
}

/// Why a witness did not cosign. Each has a stable rule name (docs/WITNESSING.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The policy gives the witness no address.
    NoUrl,
    /// No answer: the connection failed, or the deadline passed.
    Unreachable(String),
    /// 403: the witness does not trust this log's key for this origin (some witnesses also say
    /// so for an origin they do not know).
    NotTrusted(String),
    /// 404: the witness does not know this log's origin.
    UnknownLog(String),
    /// 409 again after the retry, or for the very size asked: the witness cosigned another tree
    /// of that size (a fork), or its state moves under us.
    Conflict { size: u64 },
    /// 409 with a size larger than this checkpoint's: the witness cosigned a larger tree of this
    /// log, which this log never signed (a fork, or a store that lost entries).
    Ahead { size: u64 },
    /// 422: the consistency proof does not hold for what the witness cosigned (a fork).
    Inconsistent(String),
    /// 400: the witness could not read the request.
    BadRequest(String),
    /// Another status, e.g. 503.
    Status(u16, String),
    /// 200, but no valid cosignature by the witness's key in it, or an answer that breaks the
    /// protocol (e.g. a 409 whose body is not a size).
    BadAnswer(String),
    /// The proof from the witness's size could not be made here.
    NoProof(String),
}

impl Refusal {
    /// The stable rule name.
    pub fn rule(&self) -> &'static str {
        match self {
            Refusal::NoUrl => "witness-no-url",
            Refusal::Unreachable(_) => "witness-unreachable",
            Refusal::NotTrusted(_) => "witness-not-trusted",
            Refusal::UnknownLog(_) => "witness-unknown-log",
            Refusal::Conflict { .. } => "witness-conflict",
            Refusal::Ahead { .. } => "witness-ahead",
            Refusal::Inconsistent(_) => "witness-inconsistent",
            Refusal::BadRequest(_) => "witness-bad-request",
            Refusal::Status(..) => "witness-status",
            Refusal::BadAnswer(_) => "witness-bad-answer",
            Refusal::NoProof(_) => "witness-no-proof",
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.rule())?;
        match self {
            Refusal::NoUrl => f.write_str("the policy gives no URL for it"),
            Refusal::Unreachable(e) => write!(f, "no answer ({e})"),
            Refusal::NotTrusted(t) => {
                write!(
                    f,
                    "403, it does not trust this log's key for this origin ({t})"
                )
            }
            Refusal::UnknownLog(t) => write!(f, "404, it does not know this log ({t})"),
            Refusal::Conflict { size } => write!(
                f,
                "409, it has cosigned a tree of size {size} that this checkpoint does not extend"
            ),
            Refusal::Ahead { size } => write!(
                f,
                "409, it has cosigned a tree of size {size}, larger than this log's"
            ),
            Refusal::Inconsistent(t) => {
                write!(
                    f,
                    "422, this checkpoint is inconsistent with what it cosigned ({t})"
                )
            }
            Refusal::BadRequest(t) => write!(f, "400, it could not read the request ({t})"),
            Refusal::Status(s, t) => write!(f, "{s} ({t})"),
            Refusal::BadAnswer(t) => write!(f, "its answer is not a cosignature ({t})"),
            Refusal::NoProof(t) => write!(f, "no consistency proof could be made ({t})"),
        }
    }
}

/// One witness's cosignature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cosignature {
    pub line: NoteSignature,
    pub timestamp: u64,
}

/// What each witness of a policy did with one checkpoint.
#[derive(Debug)]
pub struct Asked {
    /// For each witness of the policy, in order: its cosignature, or why there is none.
    pub results: Vec<Result<Cosignature, Refusal>>,
    met: bool,
}

impl Asked {
    pub fn quorum_met(&self) -> bool {
        self.met
    }

    /// The checkpoint with every cosignature that came back appended.
    pub fn cosigned(&self, signed_note: &Note) -> Note {
        let mut note = signed_note.clone();
        for c in self.results.iter().flatten() {
            note.signatures.push(c.line.clone());
        }
        note
    }
}

/// The body of an `add-checkpoint` request: the size the witness last cosigned, the proof from
/// it, a blank line and the signed checkpoint.
pub fn request_body(old: u64, proof: &[Hash], signed_note: &str) -> Vec<u8> {
    let mut body = format!("old {old}\n");
    for h in proof {
        body.push_str(&h.to_base64());
        body.push('\n');
    }
    body.push('\n');
    body.push_str(signed_note);
    body.into_bytes()
}

/// Asks every witness of `policy` to cosign `signed_note`, the log's signed `checkpoint`.
/// `known(i)` is the size witness `i` last cosigned as far as the caller knows (0 for none);
/// `proof(old)` is the consistency proof from `old` to the checkpoint's size.
pub fn ask_all(
    policy: &WitnessPolicy,
    transport: &dyn Transport,
    signed_note: &Note,
    checkpoint: &Checkpoint,
    known: &[u64],
    proof: &(dyn Fn(u64) -> Result<Vec<Hash>, String> + Sync),
    deadline: Instant,
) -> Asked {
    let text = signed_note.to_text();
    let results: Vec<Result<Cosignature, Refusal>> = std::thread::scope(|scope| {
        let handles: Vec<_> = policy
            .witnesses
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let text = &text;
                let old = known.get(i).copied().unwrap_or(0);
                scope.spawn(move || {
                    let url = w.url.as_deref().ok_or(Refusal::NoUrl)?;
                    let one = |old: u64| {
                        ask_one(
                            transport,
                            url,
                            w,
                            text,
                            signed_note,
                            checkpoint,
                            old,
                            proof,
                            deadline,
                        )
                    };
                    match one(old) {
                        Err(Refusal::Conflict { size }) if size != old => one(size),
                        other => other,
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Refusal::Unreachable("the request failed".into())))
            })
            .collect()
    });
    let cosigned: Vec<bool> = results.iter().map(Result::is_ok).collect();
    let met = policy.is_met(&cosigned);
    Asked { results, met }
}

#[allow(clippy::too_many_arguments)]
fn ask_one(
    transport: &dyn Transport,
    url: &str,
    witness: &crate::witness_policy::PolicyWitness,
    text: &str,
    signed_note: &Note,
    checkpoint: &Checkpoint,
    old: u64,
    proof: &(dyn Fn(u64) -> Result<Vec<Hash>, String> + Sync),
    deadline: Instant,
) -> Result<Cosignature, Refusal> {
    if old > checkpoint.size {
        return Err(Refusal::Ahead { size: old });
    }
    let hashes = if old == 0 || old == checkpoint.size {
        Vec::new()
    } else {
        proof(old).map_err(Refusal::NoProof)?
    };
    if hashes.len() > MAX_PROOF {
        return Err(Refusal::NoProof(format!(
            "{} proof lines, more than the {MAX_PROOF} a witness reads",
            hashes.len()
        )));
    }
    let reply = transport
        .post(
            &format!("{url}/add-checkpoint"),
            &request_body(old, &hashes, text),
            deadline,
        )
        .map_err(|e| Refusal::Unreachable(safe(&e).into_owned()))?;
    let said = || said(&reply.body);
    match reply.status {
        200 => cosignature(witness, signed_note, &reply.body),
        409 => {
            let size = size_of_conflict(&reply)?;
            if size > checkpoint.size {
                Err(Refusal::Ahead { size })
            } else {
                Err(Refusal::Conflict { size })
            }
        }
        400 => Err(Refusal::BadRequest(said())),
        403 => Err(Refusal::NotTrusted(said())),
        404 => Err(Refusal::UnknownLog(said())),
        422 => Err(Refusal::Inconsistent(said())),
        s => Err(Refusal::Status(s, said())),
    }
}

/// The witness's size in a 409 answer: decimal digits and a newline, as `text/x.tlog.size`.
fn size_of_conflict(reply: &Reply) -> Result<u64, Refusal> {
    let bad = |why: &str| Err(Refusal::BadAnswer(format!("a 409 {why}")));
    if reply.content_type.as_deref() != Some(SIZE_TYPE) {
        return bad(&format!("whose content type is not {SIZE_TYPE}"));
    }
    let Some(digits) = reply.body.strip_suffix(b"\n") else {
        return bad("whose body does not end in a newline");
    };
    let canonical = !digits.is_empty()
        && digits.iter().all(u8::is_ascii_digit)
        && (digits == b"0" || digits[0] != b'0');
    match std::str::from_utf8(digits).ok().filter(|_| canonical) {
        Some(d) => d
            .parse()
            .or_else(|_| bad("whose size does not fit 64 bits")),
        None => bad("whose body is not a size"),
    }
}

/// The witness's cosignature among the signature lines of a 200 answer.
fn cosignature(
    witness: &crate::witness_policy::PolicyWitness,
    signed_note: &Note,
    body: &[u8],
) -> Result<Cosignature, Refusal> {
    let mut whole = signed_note.to_text().into_bytes();
    whole.extend_from_slice(body);
    let note = Note::parse(&whole)
        .map_err(|e| Refusal::BadAnswer(format!("the lines are not note signatures ({e})")))?;
    let added = &note.signatures[signed_note.signatures.len()..];
    let found = witness
        .key
        .cosignatures(&note.text, added)
        .map_err(|e| Refusal::BadAnswer(e.to_string()))?;
    let Some((line, timestamp)) = found.into_iter().max_by_key(|(_, t)| *t) else {
        return Err(Refusal::BadAnswer(
            "no line in it is a cosignature by the witness's key".into(),
        ));
    };
    if timestamp == 0 {
        return Err(Refusal::BadAnswer("the cosignature's time is zero".into()));
    }
    Ok(Cosignature {
        line: line.clone(),
        timestamp,
    })
}

/// What a witness said, short and safe to print.
fn said(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(200)]);
    let text = safe(text.trim());
    if text.is_empty() {
        "it said nothing".into()
    } else {
        format!("it said: {text}")
    }
}
