//! C2SP signed notes: Ed25519 keys with a name and a key ID, signing a text, and opening a signed
//! text against the keys a reader trusts.
//!
//! A reader ignores signatures by keys it does not know, refuses a note where a key it knows has
//! signed wrongly, and needs at least one good signature by a key it knows.

use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use sha2::{Digest as _, Sha256};

/// The algorithm byte of a plain Ed25519 note key.
pub const ALG_ED25519: u8 = 0x01;
/// The algorithm byte of a tlog-cosignature/v1 witness key.
pub const ALG_COSIGNATURE_V1: u8 = 0x04;
/// A note with more signature lines than this is refused unread.
pub const MAX_SIGNATURES: usize = 100;
/// The largest note read: checkpoints are a few hundred bytes.
pub const MAX_NOTE: usize = 1 << 20;

/// Why a key or a note was refused. The first word of each message is a stable rule name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoteError {
    /// A key string is not `name+hex8+base64` (or the `PRIVATE+KEY+` form), or its parts disagree.
    BadKey(&'static str),
    /// The note breaks the signed-note grammar.
    Malformed(&'static str),
    /// A key the reader trusts signed, and the signature does not verify.
    BadSignature { name: String },
    /// No key the reader trusts signed the note.
    NoTrustedSignature,
}

impl fmt::Display for NoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoteError::BadKey(why) => write!(f, "bad-key: {why}"),
            NoteError::Malformed(why) => write!(f, "malformed-note: {why}"),
            NoteError::BadSignature { name } => {
                write!(
                    f,
                    "bad-signature: the signature by trusted key {name} does not verify"
                )
            }
            NoteError::NoTrustedSignature => {
                f.write_str("no-trusted-signature: no key given to check it with has signed")
            }
        }
    }
}

impl std::error::Error for NoteError {}

/// A key name: non-empty, no `+`, no white space, no control character.
fn check_name(name: &str) -> Result<(), NoteError> {
    if name.is_empty() {
        return Err(NoteError::BadKey("the key name is empty"));
    }
    if name.contains('+') || name.chars().any(char::is_whitespace) {
        return Err(NoteError::BadKey("the key name holds a '+' or white space"));
    }
    // Stricter than signed-note: a name is printed, and a control character has no business in it.
    if name.chars().any(char::is_control) {
        return Err(NoteError::BadKey("the key name holds a control character"));
    }
    Ok(())
}

/// The key ID: the first four bytes of SHA-256(name || "\n" || alg || public key).
pub fn key_id(name: &str, alg: u8, public: &[u8; 32]) -> u32 {
    let mut h = Sha256::new();
    h.update(name.as_bytes());
    h.update(b"\n");
    h.update([alg]);
    h.update(public);
    let d = h.finalize();
    u32::from_be_bytes([d[0], d[1], d[2], d[3]])
}

/// A public key a reader trusts: a log's Ed25519 key or a witness's cosignature key.
#[derive(Clone, PartialEq, Eq)]
pub struct VerifierKey {
    name: String,
    id: u32,
    alg: u8,
    key: VerifyingKey,
}

impl fmt::Debug for VerifierKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VerifierKey({self})")
    }
}

impl VerifierKey {
    /// Reads a vkey, `name+hex8+base64(alg || key)`. A name holds no `+` and base64 may, so the
    /// text is split at its first two `+` only.
    pub fn parse(vkey: &str) -> Result<VerifierKey, NoteError> {
        let vkey = vkey.trim_end_matches(['\n', '\r']);
        let mut parts = vkey.splitn(3, '+');
        let (Some(name), Some(hex), Some(b64)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(NoteError::BadKey("a vkey has the form name+hex8+base64"));
        };
        check_name(name)?;
        let id = parse_id(hex)?;
        let raw = STANDARD
            .decode(b64)
            .map_err(|_| NoteError::BadKey("the key is not valid base64"))?;
        let (&alg, public) = raw
            .split_first()
            .ok_or(NoteError::BadKey("the key is empty"))?;
        if alg != ALG_ED25519 && alg != ALG_COSIGNATURE_V1 {
            return Err(NoteError::BadKey(
                "unknown key algorithm (only Ed25519 0x01 and cosignature/v1 0x04 are known)",
            ));
        }
        let public: &[u8; 32] = public
            .try_into()
            .map_err(|_| NoteError::BadKey("an Ed25519 public key is 32 bytes"))?;
        if key_id(name, alg, public) != id {
            return Err(NoteError::BadKey(
                "the key ID does not match the name and key",
            ));
        }
        let key = VerifyingKey::from_bytes(public)
            .map_err(|_| NoteError::BadKey("not a valid Ed25519 public key"))?;
        Ok(VerifierKey {
            name: name.to_string(),
            id,
            alg,
            key,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn id(&self) -> u32 {
        self.id
    }

    /// The key type byte: [`ALG_ED25519`] or [`ALG_COSIGNATURE_V1`].
    pub fn alg(&self) -> u8 {
        self.alg
    }

    /// The Ed25519 public key.
    pub fn public(&self) -> &[u8; 32] {
        self.key.as_bytes()
    }

    /// The key named `name` of type `alg` with this public key (its key ID computed).
    pub fn from_public(name: &str, alg: u8, public: &[u8; 32]) -> Result<VerifierKey, NoteError> {
        check_name(name)?;
        let key = VerifyingKey::from_bytes(public)
            .map_err(|_| NoteError::BadKey("not a valid Ed25519 public key"))?;
        Ok(VerifierKey {
            name: name.to_string(),
            id: key_id(name, alg, public),
            alg,
            key,
        })
    }

    /// True for a witness key, whose signatures are tlog-cosignature/v1 cosignatures.
    pub fn is_cosignature(&self) -> bool {
        self.alg == ALG_COSIGNATURE_V1
    }

    pub(crate) fn verify_raw(&self, message: &[u8], sig: &[u8]) -> bool {
        let Ok(sig) = Signature::from_slice(sig) else {
            return false;
        };
        self.key.verify(message, &sig).is_ok()
    }
}

impl fmt::Display for VerifierKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut raw = vec![self.alg];
        raw.extend_from_slice(self.key.as_bytes());
        write!(f, "{}+{:08x}+{}", self.name, self.id, STANDARD.encode(raw))
    }
}

fn parse_id(hex: &str) -> Result<u32, NoteError> {
    if hex.len() != 8 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(NoteError::BadKey("the key ID is not 8 hex digits"));
    }
    u32::from_str_radix(hex, 16).map_err(|_| NoteError::BadKey("the key ID is not 8 hex digits"))
}

/// A log's private signing key, in the text form `PRIVATE+KEY+name+hex8+base64(0x01 || seed)`.
pub struct SignerKey {
    name: String,
    id: u32,
    key: SigningKey,
}

impl fmt::Debug for SignerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the secret.
        write!(f, "SignerKey({})", self.verifier())
    }
}

impl SignerKey {
    /// A new key named `name`, from the operating system's random source.
    pub fn generate(name: &str) -> Result<SignerKey, NoteError> {
        check_name(name)?;
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed)
            .map_err(|_| NoteError::BadKey("the system random source failed"))?;
        Ok(Self::from_seed(name, seed))
    }

    /// The key whose Ed25519 seed is `seed` (RFC 8032 private key bytes).
    ///
    /// # Panics
    /// If `name` is not a valid key name; names from outside go through [`SignerKey::parse`] or
    /// [`SignerKey::generate`].
    pub fn from_seed(name: &str, seed: [u8; 32]) -> SignerKey {
        assert!(check_name(name).is_ok(), "invalid key name {name:?}");
        let key = SigningKey::from_bytes(&seed);
        let id = key_id(name, ALG_ED25519, key.verifying_key().as_bytes());
        SignerKey {
            name: name.to_string(),
            id,
            key,
        }
    }

    /// Reads the `PRIVATE+KEY+…` text form.
    pub fn parse(text: &str) -> Result<SignerKey, NoteError> {
        let text = text.trim_end_matches(['\n', '\r']);
        let rest = text
            .strip_prefix("PRIVATE+KEY+")
            .ok_or(NoteError::BadKey("a private key starts with PRIVATE+KEY+"))?;
        let mut parts = rest.splitn(3, '+');
        let (Some(name), Some(hex), Some(b64)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(NoteError::BadKey(
                "a private key has the form PRIVATE+KEY+name+hex8+base64",
            ));
        };
        check_name(name)?;
        let id = parse_id(hex)?;
        let raw = STANDARD
            .decode(b64)
            .map_err(|_| NoteError::BadKey("the key is not valid base64"))?;
        if raw.first() != Some(&ALG_ED25519) {
            return Err(NoteError::BadKey(
                "only Ed25519 (0x01) signing keys are known",
            ));
        }
        let seed: [u8; 32] = raw[1..]
            .try_into()
            .map_err(|_| NoteError::BadKey("an Ed25519 private key is 32 bytes"))?;
        let key = Self::from_seed(name, seed);
        if key.id != id {
            return Err(NoteError::BadKey(
                "the key ID does not match the name and key",
            ));
        }
        Ok(key)
    }

    /// The text form, for the key file.
    pub fn to_private_text(&self) -> String {
        let mut raw = vec![ALG_ED25519];
        raw.extend_from_slice(self.key.as_bytes());
        format!(
            "PRIVATE+KEY+{}+{:08x}+{}",
            self.name,
            self.id,
            STANDARD.encode(raw)
        )
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn verifier(&self) -> VerifierKey {
        VerifierKey {
            name: self.name.clone(),
            id: self.id,
            alg: ALG_ED25519,
            key: self.key.verifying_key(),
        }
    }

    /// Signs `text` (which must be valid note text) and returns the whole signed note.
    pub fn sign(&self, text: &str) -> Result<String, NoteError> {
        check_text(text)?;
        let sig = self.key.sign(text.as_bytes());
        let mut raw = self.id.to_be_bytes().to_vec();
        raw.extend_from_slice(&sig.to_bytes());
        Ok(format!(
            "{text}\n\u{2014} {} {}\n",
            self.name,
            STANDARD.encode(raw)
        ))
    }
}

/// Note text: UTF-8, no control character but newline, ending in a newline.
fn check_text(text: &str) -> Result<(), NoteError> {
    if !text.ends_with('\n') {
        return Err(NoteError::Malformed("the text does not end in a newline"));
    }
    if text.chars().any(|c| c < ' ' && c != '\n') {
        return Err(NoteError::Malformed(
            "the text holds a control character other than newline",
        ));
    }
    Ok(())
}

/// One signature line: `— <name> <base64(key ID || signature)>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteSignature {
    pub name: String,
    pub id: u32,
    /// The signature bytes after the key ID (for a cosignature, the timestamp and the signature).
    pub sig: Vec<u8>,
}

/// A note as read: its text and its signature lines, none checked yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub text: String,
    pub signatures: Vec<NoteSignature>,
}

impl Note {
    /// Splits a signed note at its last blank line and reads the signature lines.
    pub fn parse(msg: &[u8]) -> Result<Note, NoteError> {
        if msg.len() > MAX_NOTE {
            return Err(NoteError::Malformed("the note is larger than 1 MiB"));
        }
        let msg =
            std::str::from_utf8(msg).map_err(|_| NoteError::Malformed("the note is not UTF-8"))?;
        if msg.chars().any(|c| c < ' ' && c != '\n') {
            return Err(NoteError::Malformed(
                "the note holds a control character other than newline",
            ));
        }
        let split = msg
            .rfind("\n\n")
            .ok_or(NoteError::Malformed("no blank line before the signatures"))?;
        let (text, sigs) = (&msg[..split + 1], &msg[split + 2..]);
        if sigs.is_empty() || !sigs.ends_with('\n') {
            return Err(NoteError::Malformed(
                "the signature lines do not end in a newline",
            ));
        }
        let lines: Vec<&str> = sigs[..sigs.len() - 1].split('\n').collect();
        if lines.len() > MAX_SIGNATURES {
            return Err(NoteError::Malformed("more than 100 signatures"));
        }
        let signatures = lines
            .into_iter()
            .map(parse_signature_line)
            .collect::<Result<_, _>>()?;
        Ok(Note {
            text: text.to_string(),
            signatures,
        })
    }

    /// The signed note as text: the body, a blank line, one line per signature.
    pub fn to_text(&self) -> String {
        let mut out = self.text.clone();
        out.push('\n');
        for s in &self.signatures {
            let mut raw = s.id.to_be_bytes().to_vec();
            raw.extend_from_slice(&s.sig);
            out.push_str(&format!("\u{2014} {} {}\n", s.name, STANDARD.encode(raw)));
        }
        out
    }

    /// Checks the signatures by keys in `trusted` whose kind is a plain Ed25519 note key; returns
    /// the names of the keys that signed. Signatures by unknown keys are ignored; a bad
    /// signature by a trusted key fails the whole note.
    pub fn verify(&self, trusted: &[VerifierKey]) -> Result<Vec<String>, NoteError> {
        let mut signed = Vec::new();
        for s in &self.signatures {
            for key in trusted {
                if key.is_cosignature() || key.name != s.name || key.id != s.id {
                    continue;
                }
                if !key.verify_raw(self.text.as_bytes(), &s.sig) {
                    return Err(NoteError::BadSignature {
                        name: key.name.clone(),
                    });
                }
                if !signed.contains(&key.name) {
                    signed.push(key.name.clone());
                }
            }
        }
        if signed.is_empty() {
            return Err(NoteError::NoTrustedSignature);
        }
        Ok(signed)
    }
}

fn parse_signature_line(line: &str) -> Result<NoteSignature, NoteError> {
    let bad = NoteError::Malformed("a signature line is not '\u{2014} name base64'");
    let rest = line.strip_prefix("\u{2014} ").ok_or(bad.clone())?;
    let (name, b64) = rest.split_once(' ').ok_or(bad.clone())?;
    if name.is_empty() || name.contains('+') || b64.contains(' ') {
        return Err(bad);
    }
    let raw = STANDARD.decode(b64).map_err(|_| bad.clone())?;
    if raw.len() < 5 {
        return Err(bad);
    }
    Ok(NoteSignature {
        name: name.to_string(),
        id: u32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]]),
        sig: raw[4..].to_vec(),
    })
}
