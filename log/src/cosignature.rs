//! C2SP tlog-cosignature/v1: a witness's timestamped Ed25519 signature on a checkpoint, and the
//! k-of-n policy a verifier applies to them.
//!
//! The witness signs `cosignature/v1\ntime <T>\n` followed by the checkpoint text; the signature
//! line carries the 8-byte big-endian timestamp `T` (seconds) before the 64-byte signature.

use ed25519_dalek::{Signer, SigningKey};

use crate::note::{key_id, Note, NoteError, NoteSignature, VerifierKey, ALG_COSIGNATURE_V1};

fn message(text: &str, timestamp: u64) -> Vec<u8> {
    let mut m = format!("cosignature/v1\ntime {timestamp}\n").into_bytes();
    m.extend_from_slice(text.as_bytes());
    m
}

/// A witness that cosigned, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cosigned {
    pub witness: String,
    pub timestamp: u64,
}

/// Checks the cosignatures on `note` by the witness keys in `witnesses`. Unknown witnesses are
/// ignored; a bad cosignature by a known witness fails the note.
pub fn verify_cosignatures(
    note: &Note,
    witnesses: &[VerifierKey],
) -> Result<Vec<Cosigned>, NoteError> {
    let mut out: Vec<Cosigned> = Vec::new();
    for s in &note.signatures {
        for w in witnesses {
            if !w.is_cosignature() || w.name() != s.name || w.id() != s.id {
                continue;
            }
            let timestamp = check(w, &note.text, s)?;
            if !out.iter().any(|c| c.witness == w.name()) {
                out.push(Cosigned {
                    witness: w.name().to_string(),
                    timestamp,
                });
            }
        }
    }
    Ok(out)
}

/// The timestamp of `s`, a cosignature by `key` on `text`, if it verifies.
fn check(key: &VerifierKey, text: &str, s: &NoteSignature) -> Result<u64, NoteError> {
    let bad = || NoteError::BadSignature {
        name: key.name().to_string(),
    };
    if s.sig.len() != 72 {
        return Err(bad());
    }
    let timestamp = u64::from_be_bytes(s.sig[..8].try_into().expect("8 bytes"));
    if !key.verify_raw(&message(text, timestamp), &s.sig[8..]) {
        return Err(bad());
    }
    Ok(timestamp)
}

/// A witness's key as a policy gives it (`witness_policy`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cosigner {
    /// A vkey: a cosignature counts when its line carries the vkey's name and key ID.
    Vkey(VerifierKey),
    /// Sigsum's bare public key, which names no cosigner: a line counts under whatever name it
    /// carries when its key ID is the one that name and this key make, as Sigsum matches them.
    Bare([u8; 32]),
}

impl Cosigner {
    /// A bare key, if it is an Ed25519 public key.
    pub fn bare(public: [u8; 32]) -> Result<Cosigner, NoteError> {
        VerifierKey::from_public("key", ALG_COSIGNATURE_V1, &public)?;
        Ok(Cosigner::Bare(public))
    }

    pub fn public(&self) -> &[u8; 32] {
        match self {
            Cosigner::Vkey(k) => k.public(),
            Cosigner::Bare(p) => p,
        }
    }

    /// The key that made signature line `s` if it is this cosigner's.
    fn key_for(&self, s: &NoteSignature) -> Option<VerifierKey> {
        match self {
            Cosigner::Vkey(k) => (k.name() == s.name && k.id() == s.id).then(|| k.clone()),
            Cosigner::Bare(public) => VerifierKey::from_public(&s.name, ALG_COSIGNATURE_V1, public)
                .ok()
                .filter(|k| k.id() == s.id),
        }
    }

    /// This cosigner's cosignatures among `signatures` on `text`, each as the signature line and
    /// its timestamp. A line that is this cosigner's and does not verify is an error.
    pub fn cosignatures<'s>(
        &self,
        text: &str,
        signatures: &'s [NoteSignature],
    ) -> Result<Vec<(&'s NoteSignature, u64)>, NoteError> {
        let mut out = Vec::new();
        for s in signatures {
            if let Some(key) = self.key_for(s) {
                out.push((s, check(&key, text, s)?));
            }
        }
        Ok(out)
    }
}

/// Which of `cosigners` cosigned `note`: for each, in order, the latest timestamp of its valid
/// cosignatures, if any. Lines by keys not among them are ignored; a line by one of them that does
/// not verify fails the note.
pub fn cosigned_by(note: &Note, cosigners: &[Cosigner]) -> Result<Vec<Option<u64>>, NoteError> {
    cosigners
        .iter()
        .map(|c| {
            let found = c.cosignatures(&note.text, &note.signatures)?;
            Ok(found.iter().map(|(_, t)| *t).max())
        })
        .collect()
}

/// A witness's signing key (for witnesses and for tests; the log itself never cosigns).
pub struct WitnessKey {
    name: String,
    key: SigningKey,
}

impl WitnessKey {
    pub fn from_seed(name: &str, seed: [u8; 32]) -> WitnessKey {
        WitnessKey {
            name: name.to_string(),
            key: SigningKey::from_bytes(&seed),
        }
    }

    /// The vkey a verifier pins for this witness.
    pub fn vkey(&self) -> String {
        use base64::Engine;
        let public = self.key.verifying_key().to_bytes();
        let mut raw = vec![ALG_COSIGNATURE_V1];
        raw.extend_from_slice(&public);
        format!(
            "{}+{:08x}+{}",
            self.name,
            key_id(&self.name, ALG_COSIGNATURE_V1, &public),
            base64::engine::general_purpose::STANDARD.encode(raw)
        )
    }

    /// The cosignature on a checkpoint text at `timestamp`.
    pub fn cosign(&self, text: &str, timestamp: u64) -> NoteSignature {
        let public = self.key.verifying_key().to_bytes();
        let mut sig = timestamp.to_be_bytes().to_vec();
        sig.extend_from_slice(&self.key.sign(&message(text, timestamp)).to_bytes());
        NoteSignature {
            name: self.name.clone(),
            id: key_id(&self.name, ALG_COSIGNATURE_V1, &public),
            sig,
        }
    }
}
