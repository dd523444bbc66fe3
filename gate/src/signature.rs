//! Ed25519 signatures over lockfiles: the keys on disk, the detached envelope, and its check.
//!
//! # Keys
//!
//! A private key is a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`, version 1: the seed only) written
//! mode 0600; its public half is a SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`) in the
//! same path with `.pub` appended. These are the files `openssl genpkey -algorithm ed25519` and
//! `openssl pkey -pubout` write, and each tool reads the other's. A public key is named by its
//! fingerprint: `sha256:` and the hex SHA-256 of its DER SubjectPublicKeyInfo, which is what
//! `openssl pkey -pubin -in KEY.pub -outform DER | sha256sum` prints.
//!
//! # The envelope
//!
//! One JSON object, written with its members in canonical (RFC 8785) order, one per line with a
//! two-space indent, and a line feed after the closing brace:
//!
//! ```text
//! {
//!   "algorithm": "ed25519",
//!   "lock_digest": "sha256:<64 hex>",
//!   "public_key_fingerprint": "sha256:<64 hex>",
//!   "schema": "pinlog-lock-signature",
//!   "schema_version": 1,
//!   "signature": "<standard base64, padded, of the 64 signature bytes>",
//!   "signed_at": "YYYY-MM-DDTHH:MM:SSZ"
//! }
//! ```
//!
//! It is read with the strict JSON reader, so any layout and member order is accepted, and a
//! repeated member is refused. Exactly these seven members: an envelope carrying one this build
//! does not sign (an `approver`, an `expires_at`) is refused rather than half-believed.
//!
//! # The signed message
//!
//! The signature (pure Ed25519, RFC 8032) is over these bytes:
//!
//! ```text
//! pinlog-lock-signature v1<LF>{"algorithm":"ed25519","lock_digest":"sha256:<hex>","public_key_fingerprint":"sha256:<hex>","schema":"pinlog-lock-signature","schema_version":1,"signed_at":"<time>"}
//! ```
//!
//! that is, the 24 ASCII bytes `pinlog-lock-signature v1` and one line feed (0x0A), then the RFC
//! 8785 canonical JSON of the envelope object without its `signature` member, with nothing after
//! it. Every value is printable ASCII that JSON does not escape, so the canonical form is exactly
//! that line with the values filled in.
//!
//! Why the whole envelope and not the lock digest alone: the time and the key's fingerprint are
//! under the signature too, so a signature cannot be lifted onto an envelope that says something
//! else. Why the first line: a key's signatures over these messages can never be taken for a
//! signature over some other kind of pinlog message.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use ed25519_dalek::pkcs8::spki::der::pem::{self, LineEnding};
use ed25519_dalek::pkcs8::{
    DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, KeypairBytes,
};
use ed25519_dalek::{Signature, Signer, VerifyingKey};
use pinlog_core::clock::Timestamp;
use pinlog_core::files::{read_bounded, sync_dir};
use pinlog_core::json::{self, Limits, Value};
use pinlog_core::render;
use pinlog_core::Digest;

/// The `schema` member of every envelope.
pub const SCHEMA: &str = "pinlog-lock-signature";
/// What every signed message starts with.
pub const DOMAIN: &[u8] = b"pinlog-lock-signature v1\n";
/// The largest key file or envelope read; real ones are a few hundred bytes.
pub const MAX_FILE_BYTES: u64 = 64 << 10;
/// How far in the future a `signed_at` may be before it is refused: clocks disagree a little.
pub const MAX_FUTURE_SECS: i64 = 5 * 60;

/// Why a key could not be made, read or written: a stable rule token, and what to do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError {
    /// `key-exists`, `key-write`, `key-read`, `key-format`, `key-is-public`, `key-is-private` or
    /// `key-random`.
    pub rule: &'static str,
    /// Safe to print: anything taken from a file or a path is rendered safe.
    pub detail: String,
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.rule, self.detail)
    }
}

impl std::error::Error for KeyError {}

fn key_err(rule: &'static str, detail: impl Into<String>) -> KeyError {
    KeyError {
        rule,
        detail: detail.into(),
    }
}

/// A path for a message, with any character a terminal would obey rendered safe.
fn show(path: &Path) -> String {
    render::safe(&path.display().to_string()).into_owned()
}

/// The PEM type label (`PRIVATE KEY`, `PUBLIC KEY`, …), or what to say when there is none.
fn pem_label(text: &str) -> Result<&str, KeyError> {
    pem::decode_label(text.as_bytes()).map_err(|_| {
        key_err(
            "key-format",
            "not a PEM key file (it should start with -----BEGIN PRIVATE KEY----- or \
             -----BEGIN PUBLIC KEY-----); make a key pair with `pinlog key -o FILE`",
        )
    })
}

/// What to say about a PEM that is neither of the two kinds read here.
fn other_pem(label: &str) -> KeyError {
    let detail = if label == "ENCRYPTED PRIVATE KEY" {
        "an encrypted private key, which pinlog does not read; write it out unencrypted with \
         `openssl pkey -in FILE -out NEW` and protect NEW like any other secret"
            .to_string()
    } else {
        format!(
            "a {} PEM, not an Ed25519 key in PKCS#8 or SPKI form; make a key pair with \
             `pinlog key -o FILE` or `openssl genpkey -algorithm ed25519 -out FILE`",
            render::quoted(label, 40)
        )
    };
    key_err("key-format", detail)
}

/// An Ed25519 private key.
pub struct SigningKey(ed25519_dalek::SigningKey);

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the secret.
        write!(f, "SigningKey({})", self.public().fingerprint())
    }
}

/// A new private key from the operating system's random source.
pub fn generate() -> Result<SigningKey, KeyError> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| {
        key_err(
            "key-random",
            format!("the system random source failed: {e}"),
        )
    })?;
    Ok(SigningKey(ed25519_dalek::SigningKey::from_bytes(&seed)))
}

impl SigningKey {
    /// The key whose RFC 8032 seed (private key bytes) is `seed`.
    pub fn from_seed(seed: &[u8; 32]) -> SigningKey {
        SigningKey(ed25519_dalek::SigningKey::from_bytes(seed))
    }

    /// PKCS#8 version 1 PEM with LF line endings: the form `openssl genpkey` writes. Version 2
    /// would add the public key, which is derived from the seed anyway.
    pub fn to_pkcs8_pem(&self) -> String {
        let bytes = KeypairBytes {
            secret_key: self.0.to_bytes(),
            public_key: None,
        };
        let pem = bytes
            .to_pkcs8_pem(LineEnding::LF)
            .expect("a 32-byte seed always encodes");
        pem.as_str().to_owned()
    }

    /// Reads a PKCS#8 PEM (version 1 or 2; a version 2 whose public key does not match the seed
    /// is refused).
    pub fn from_pem(text: &str) -> Result<SigningKey, KeyError> {
        match pem_label(text)? {
            "PRIVATE KEY" => ed25519_dalek::SigningKey::from_pkcs8_pem(text)
                .map(SigningKey)
                .map_err(|e| {
                    key_err(
                        "key-format",
                        format!(
                            "not an Ed25519 private key in PKCS#8 ({}); make one with \
                             `pinlog key -o FILE` or `openssl genpkey -algorithm ed25519`",
                            render::safe(&e.to_string())
                        ),
                    )
                }),
            "PUBLIC KEY" => Err(key_err(
                "key-is-public",
                "this is a public key; signing needs the private key it belongs to (the file \
                 without .pub)",
            )),
            other => Err(other_pem(other)),
        }
    }

    pub fn public(&self) -> PublicKey {
        PublicKey::new(self.0.verifying_key())
    }
}

/// An Ed25519 public key, with its fingerprint.
#[derive(Clone, PartialEq, Eq)]
pub struct PublicKey {
    key: VerifyingKey,
    fingerprint: Digest,
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.fingerprint)
    }
}

impl PublicKey {
    fn new(key: VerifyingKey) -> PublicKey {
        let der = key
            .to_public_key_der()
            .expect("a 32-byte public key always encodes");
        PublicKey {
            key,
            fingerprint: Digest::of(der.as_bytes()),
        }
    }

    /// SubjectPublicKeyInfo PEM with LF line endings: the form `openssl pkey -pubout` writes.
    pub fn to_spki_pem(&self) -> String {
        self.key
            .to_public_key_pem(LineEnding::LF)
            .expect("a 32-byte public key always encodes")
    }

    /// Reads a SubjectPublicKeyInfo PEM. A private key is refused: the trust anchor is the public
    /// half, and a private key has no business in the place that only checks.
    pub fn from_pem(text: &str) -> Result<PublicKey, KeyError> {
        match pem_label(text)? {
            "PUBLIC KEY" => {
                let key = VerifyingKey::from_public_key_pem(text).map_err(|e| {
                    key_err(
                        "key-format",
                        format!(
                            "not an Ed25519 public key in SPKI form ({})",
                            render::safe(&e.to_string())
                        ),
                    )
                })?;
                // A small-order key is one whose signatures anybody can forge.
                if key.is_weak() {
                    return Err(key_err(
                        "key-format",
                        "a weak (small-order) Ed25519 public key, which proves nothing",
                    ));
                }
                Ok(PublicKey::new(key))
            }
            "PRIVATE KEY" => Err(key_err(
                "key-is-private",
                "this is a private key; give its public half instead (the .pub file written \
                 beside it, or `openssl pkey -in FILE -pubout`), and keep the private key out of \
                 the place that only checks",
            )),
            other => Err(other_pem(other)),
        }
    }

    /// `sha256:` and the hex SHA-256 of the DER SubjectPublicKeyInfo.
    pub fn fingerprint(&self) -> Digest {
        self.fingerprint
    }
}

/// `path` with `.pub` appended: where the public half of the key in `path` is written.
pub fn public_key_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".pub");
    PathBuf::from(name)
}

/// Writes the key to `path` (PKCS#8 PEM, mode 0600 on Unix) and its public half to `path.pub`
/// (SPKI PEM). Neither file may exist already: a key file is never overwritten. Each is written
/// whole or not at all (a temporary file in the same directory, renamed without replacing
/// anything); if the public half cannot be written, the private key just written is removed.
pub fn write_key_pair(path: &Path, key: &SigningKey) -> Result<(), KeyError> {
    let public = public_key_path(path);
    for p in [path, &public] {
        // `symlink_metadata`: a dangling link is something in the way too.
        if p.symlink_metadata().is_ok() {
            return Err(exists(p));
        }
    }
    write_new(path, key.to_pkcs8_pem().as_bytes(), false)?;
    if let Err(e) = write_new(&public, key.public().to_spki_pem().as_bytes(), true) {
        // Half a pair is no pair; this call created the private key file, so it may take it back.
        let _ = std::fs::remove_file(path);
        return Err(e);
    }
    Ok(())
}

fn exists(path: &Path) -> KeyError {
    key_err(
        "key-exists",
        format!(
            "{} already exists, and a key file is never overwritten; choose another name or move \
             the old file away first",
            show(path)
        ),
    )
}

/// Creates `path` with `bytes`, failing if anything is there by the time of the rename.
fn write_new(path: &Path, bytes: &[u8], public: bool) -> Result<(), KeyError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let io = |e: std::io::Error| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            return exists(path);
        }
        key_err("key-write", format!("cannot write {}: {e}", show(path)))
    };
    // tempfile creates the file mode 0600 on Unix, so the private key is never readable by
    // anybody else, not even for a moment.
    let mut tmp = tempfile::Builder::new()
        .prefix(".pinlog-key-")
        .tempfile_in(dir)
        .map_err(io)?;
    tmp.write_all(bytes).map_err(io)?;
    if public {
        // Anybody may read a public key; umask does not apply to an explicit mode.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))
                .map_err(io)?;
        }
    }
    tmp.as_file().sync_all().map_err(io)?;
    // No-clobber rename: a file that appeared since the check above is still not replaced.
    tmp.persist_noclobber(path).map_err(|e| io(e.error))?;
    sync_dir(dir).map_err(io)
}

/// Reads a key file's text, at most [`MAX_FILE_BYTES`].
fn read_key_text(path: &Path, missing_hint: &str) -> Result<String, KeyError> {
    let bytes = read_bounded(path, MAX_FILE_BYTES).map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::NotFound {
            missing_hint
        } else {
            ""
        };
        key_err(
            "key-read",
            format!("cannot read the key {}: {e}{hint}", show(path)),
        )
    })?;
    String::from_utf8(bytes).map_err(|_| {
        key_err(
            "key-format",
            format!("{} is not a PEM key file", show(path)),
        )
    })
}

/// Prefixes a key error with the file it is about.
fn in_file(path: &Path) -> impl Fn(KeyError) -> KeyError + '_ {
    move |e| key_err(e.rule, format!("{}: {}", show(path), e.detail))
}

/// Reads the private key in `path` (PKCS#8 PEM).
pub fn read_signing_key(path: &Path) -> Result<SigningKey, KeyError> {
    let text = read_key_text(path, "; make a key pair with `pinlog key -o FILE`")?;
    SigningKey::from_pem(&text).map_err(in_file(path))
}

/// Reads the public key in `path` (SPKI PEM).
pub fn read_public_key(path: &Path) -> Result<PublicKey, KeyError> {
    let text = read_key_text(
        path,
        "; a public key is the .pub file `pinlog key -o FILE` writes beside the private key",
    )?;
    PublicKey::from_pem(&text).map_err(in_file(path))
}

/// Why an envelope was refused: a stable rule token and what was found, safe to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureError {
    /// One of `signature-json`, `signature-unknown-member`, `signature-schema`,
    /// `signature-field`, `signature-foreign-key`, `signature-invalid`,
    /// `signature-other-lockfile`, `signature-stale`, `signature-future`.
    pub rule: &'static str,
    pub detail: String,
}

impl fmt::Display for SignatureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.rule, self.detail)
    }
}

impl std::error::Error for SignatureError {}

fn sig_err(rule: &'static str, detail: impl Into<String>) -> SignatureError {
    SignatureError {
        rule,
        detail: detail.into(),
    }
}

/// A signature envelope as read; [`check`] says whether it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    pub lock_digest: Digest,
    pub public_key_fingerprint: Digest,
    /// `YYYY-MM-DDTHH:MM:SSZ`.
    pub signed_at: String,
    /// The same time in seconds since 1970-01-01T00:00:00Z.
    pub signed_at_unix: i64,
    signature: [u8; 64],
}

/// Every member of an envelope, `signature` included, in canonical order.
const MEMBERS: [&str; 7] = [
    "algorithm",
    "lock_digest",
    "public_key_fingerprint",
    "schema",
    "schema_version",
    "signature",
    "signed_at",
];

impl Envelope {
    /// The signature bytes.
    pub fn signature(&self) -> [u8; 64] {
        self.signature
    }

    /// The members as (name, JSON value) in canonical order; `signature` only if asked for.
    fn members(&self, with_signature: bool) -> Vec<(&'static str, Vec<u8>)> {
        let string = |s: &str| {
            let mut out = Vec::new();
            json::write_string(&mut out, s);
            out
        };
        MEMBERS
            .iter()
            .filter(|&&name| with_signature || name != "signature")
            .map(|&name| {
                let value = match name {
                    "algorithm" => string("ed25519"),
                    "lock_digest" => string(&self.lock_digest.to_string()),
                    "public_key_fingerprint" => string(&self.public_key_fingerprint.to_string()),
                    "schema" => string(SCHEMA),
                    "schema_version" => b"1".to_vec(),
                    "signature" => string(&BASE64.encode(self.signature)),
                    _ => string(&self.signed_at),
                };
                (name, value)
            })
            .collect()
    }

    /// The bytes the signature is over: [`DOMAIN`], then the canonical JSON of the envelope
    /// without `signature` (see the module documentation).
    pub fn message(&self) -> Vec<u8> {
        let mut out = DOMAIN.to_vec();
        out.push(b'{');
        for (i, (name, value)) in self.members(false).into_iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            json::write_string(&mut out, name);
            out.push(b':');
            out.extend_from_slice(&value);
        }
        out.push(b'}');
        out
    }

    /// The envelope file: canonical member order, one member per line, a line feed at the end.
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = b"{".to_vec();
        for (i, (name, value)) in self.members(true).into_iter().enumerate() {
            out.extend_from_slice(if i > 0 { b",\n  " } else { b"\n  " });
            json::write_string(&mut out, name);
            out.extend_from_slice(b": ");
            out.extend_from_slice(&value);
        }
        out.extend_from_slice(b"\n}\n");
        out
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` for a time in seconds since the epoch, if it is in 1970–9999.
pub fn format_utc(unix: i64) -> Option<String> {
    // humantime writes only years up to 9999, and nothing before the epoch is wanted.
    let secs = u64::try_from(unix).ok().filter(|&s| s < 253_402_300_800)?;
    Some(humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(secs)).to_string())
}

/// Seconds since the epoch for a time written exactly `YYYY-MM-DDTHH:MM:SSZ`.
pub fn parse_utc(text: &str) -> Option<i64> {
    // The strict shape check is the log's; humantime only does the calendar arithmetic.
    Timestamp::parse(text)?;
    let t = humantime::parse_rfc3339(text).ok()?;
    i64::try_from(t.duration_since(UNIX_EPOCH).ok()?.as_secs()).ok()
}

/// The envelope signing `lock_digest` with `key` at `signed_at_unix`, as the bytes of the file
/// (see [`Envelope::to_json`]). Refused only for a time outside 1970–9999.
pub fn sign(
    key: &SigningKey,
    lock_digest: &Digest,
    signed_at_unix: i64,
) -> Result<Vec<u8>, SignatureError> {
    let signed_at = format_utc(signed_at_unix).ok_or_else(|| {
        sig_err(
            "signature-field",
            format!("the signing time {signed_at_unix} is not between 1970 and 9999"),
        )
    })?;
    let mut env = Envelope {
        lock_digest: *lock_digest,
        public_key_fingerprint: key.public().fingerprint(),
        signed_at,
        signed_at_unix,
        signature: [0; 64],
    };
    env.signature = key.0.sign(&env.message()).to_bytes();
    Ok(env.to_json())
}

/// The current time in seconds since the epoch, for [`sign`] and [`check`].
pub fn now_unix() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Reads an envelope strictly: exactly the seven members, each of the one form it may take.
/// Whether the signature holds is [`check`]'s question.
pub fn read_envelope(bytes: &[u8]) -> Result<Envelope, SignatureError> {
    let limits = Limits::with_max_bytes(MAX_FILE_BYTES as usize);
    let value = json::parse(bytes, limits).map_err(|e| {
        sig_err(
            "signature-json",
            format!("the signature file is not strict JSON: {e}"),
        )
    })?;
    let object = value.as_object().ok_or_else(|| {
        sig_err(
            "signature-json",
            format!(
                "the signature file is a JSON {}, not an object",
                value.kind()
            ),
        )
    })?;
    if let Some((name, _)) = object.iter().find(|(name, _)| !MEMBERS.contains(name)) {
        return Err(sig_err(
            "signature-unknown-member",
            format!(
                "the envelope has a member {} that this build does not sign; refused rather \
                 than half-believed",
                render::quoted(name, 60)
            ),
        ));
    }
    let get = |name: &str| {
        object.get(name).ok_or_else(|| {
            sig_err(
                "signature-field",
                format!("the envelope has no \"{name}\" member"),
            )
        })
    };
    let string = |name: &str| {
        let v = get(name)?;
        v.as_str().ok_or_else(|| {
            sig_err(
                "signature-field",
                format!("\"{name}\" is a {}, not a string", v.kind()),
            )
        })
    };
    let bad = |name: &str, found: &str, want: &str| {
        sig_err(
            "signature-field",
            format!("\"{name}\" is {}, not {want}", render::quoted(found, 80)),
        )
    };

    // What kind of file this is comes first: another kind should say so, not that a field is off.
    let schema = string("schema")?;
    if schema != SCHEMA {
        return Err(sig_err(
            "signature-schema",
            format!(
                "\"schema\" is {}, not \"{SCHEMA}\"",
                render::quoted(schema, 80)
            ),
        ));
    }
    // Exactly the literal 1: a later version is for a later build to read.
    match get("schema_version")? {
        Value::Number(n) if n.literal() == "1" => {}
        Value::Number(n) => {
            return Err(sig_err(
                "signature-schema",
                format!(
                    "\"schema_version\" is {}, and this build reads version 1 only",
                    render::quoted(n.literal(), 40)
                ),
            ))
        }
        other => {
            return Err(sig_err(
                "signature-field",
                format!("\"schema_version\" is a {}, not a number", other.kind()),
            ))
        }
    }
    let algorithm = string("algorithm")?;
    if algorithm != "ed25519" {
        return Err(sig_err(
            "signature-schema",
            format!(
                "\"algorithm\" is {}, and this build verifies \"ed25519\" only",
                render::quoted(algorithm, 40)
            ),
        ));
    }

    let digest = |name: &str| {
        let s = string(name)?;
        s.parse::<Digest>()
            .map_err(|_| bad(name, s, "sha256: and 64 lowercase hex digits"))
    };
    let lock_digest = digest("lock_digest")?;
    let public_key_fingerprint = digest("public_key_fingerprint")?;
    let signed_at = string("signed_at")?;
    let signed_at_unix =
        parse_utc(signed_at).ok_or_else(|| bad("signed_at", signed_at, "YYYY-MM-DDTHH:MM:SSZ"))?;
    let text = string("signature")?;
    // One spelling per signature: standard alphabet, padded, no whitespace, no stray bits. The
    // engine refuses each of those already; re-encoding states the rule outright.
    let signature: [u8; 64] = BASE64
        .decode(text)
        .ok()
        .filter(|b| BASE64.encode(b) == text)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| bad("signature", text, "padded standard base64 of 64 bytes"))?;
    Ok(Envelope {
        lock_digest,
        public_key_fingerprint,
        signed_at: signed_at.to_string(),
        signed_at_unix,
        signature,
    })
}

/// Whether `env` is a signature, by one of the `trusted` keys, over the lockfile whose canonical
/// digest is `expected_lock_digest`; with `max_age`, also whether it was made no longer than that
/// before `now_unix` and no more than [`MAX_FUTURE_SECS`] after it. Returns the index in
/// `trusted` of the key that signed.
///
/// The checks run in this order, and the first that fails is the answer: the key is pinned
/// (`signature-foreign-key`; a valid signature by any other key proves nothing), the signature
/// verifies under strict Ed25519 verification (`signature-invalid`), the envelope is about this
/// lockfile (`signature-other-lockfile`: only a verified envelope is worth saying that about),
/// and then its age (`signature-future`, `signature-stale`).
pub fn check(
    env: &Envelope,
    trusted: &[PublicKey],
    expected_lock_digest: &Digest,
    now_unix: i64,
    max_age: Option<Duration>,
) -> Result<usize, SignatureError> {
    let index = trusted
        .iter()
        .position(|k| k.fingerprint == env.public_key_fingerprint)
        .ok_or_else(|| {
            let pinned: Vec<String> = trusted.iter().map(|k| k.fingerprint.to_string()).collect();
            sig_err(
                "signature-foreign-key",
                format!(
                    "signed by the key {}, which is not a pinned key (pinned: {})",
                    env.public_key_fingerprint,
                    if pinned.is_empty() {
                        "none".to_string()
                    } else {
                        pinned.join(", ")
                    }
                ),
            )
        })?;
    // Strict: no non-canonical encodings and no small-order points, so one message and key have
    // one signature that holds.
    trusted[index]
        .key
        .verify_strict(&env.message(), &Signature::from_bytes(&env.signature))
        .map_err(|_| {
            sig_err(
                "signature-invalid",
                format!(
                    "the signature does not hold for this envelope under the key {}: the envelope \
                     was changed after signing, or the signature was made over something else",
                    env.public_key_fingerprint
                ),
            )
        })?;
    if env.lock_digest != *expected_lock_digest {
        return Err(sig_err(
            "signature-other-lockfile",
            format!(
                "the signature is for the lockfile {}, and this lockfile is {}: it changed after \
                 it was signed; sign it again if the change is approved",
                env.lock_digest, expected_lock_digest
            ),
        ));
    }
    if let Some(max_age) = max_age {
        if env.signed_at_unix > now_unix.saturating_add(MAX_FUTURE_SECS) {
            return Err(sig_err(
                "signature-future",
                format!(
                    "signed at {}, more than {} minutes after now; is a clock wrong?",
                    env.signed_at,
                    MAX_FUTURE_SECS / 60
                ),
            ));
        }
        let max_secs = i64::try_from(max_age.as_secs()).unwrap_or(i64::MAX);
        if env.signed_at_unix < now_unix.saturating_sub(max_secs) {
            return Err(sig_err(
                "signature-stale",
                format!(
                    "signed at {}, longer ago than the {} allowed; re-approve and sign the \
                     lockfile again",
                    env.signed_at,
                    humantime::format_duration(max_age)
                ),
            ));
        }
    }
    Ok(index)
}
