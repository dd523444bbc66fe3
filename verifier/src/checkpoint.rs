//! Opening a checkpoint against what the verifier pinned: the log's key, and a witness policy.

use pinlog_log::checkpoint::Checkpoint;
use pinlog_log::cosignature::{cosigned_by, verify_cosignatures, Cosigned};
use pinlog_log::note::{Note, NoteError, VerifierKey};
use pinlog_log::witness_policy::WitnessPolicy;

use crate::outcome::{Location, VerifyError};

/// Who must have signed a checkpoint.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The log's key (or keys, during a rotation); at least one must have signed. Each key's
    /// name is the origin it signs for.
    pub log_keys: Vec<VerifierKey>,
    /// Witness cosignature keys.
    pub witnesses: Vec<VerifierKey>,
    /// How many distinct witnesses must have cosigned.
    pub quorum: usize,
    /// A witness policy file's witnesses and quorum, which must be met too.
    pub witness_policy: Option<WitnessPolicy>,
}

/// A checkpoint that passed the policy.
#[derive(Debug, Clone)]
pub struct Opened {
    pub checkpoint: Checkpoint,
    /// The note exactly as read.
    pub note_text: String,
    pub cosigned: Vec<Cosigned>,
}

/// Checks a signed checkpoint note against `policy`; `at` names where it came from.
pub fn open(bytes: &[u8], policy: &Policy, at: Location) -> Result<Opened, VerifyError> {
    let note =
        Note::parse(bytes).map_err(|e| VerifyError::unreadable(at.clone(), e.to_string()))?;
    let signed = note.verify(&policy.log_keys).map_err(|e| match e {
        NoteError::NoTrustedSignature => VerifyError::bad(
            at.clone(),
            "checkpoint-signature",
            format!("no signature by the pinned key {}", names(&policy.log_keys)),
        ),
        other => VerifyError::bad(at.clone(), "checkpoint-signature", other.to_string()),
    })?;
    // Signed by the pinned key, a malformed body is the log's own doing: proof, not noise.
    let checkpoint = Checkpoint::parse(&note.text)
        .map_err(|e| VerifyError::bad(at.clone(), "checkpoint-format", e.to_string()))?;
    if !signed.contains(&checkpoint.origin) {
        return Err(VerifyError::bad(
            at,
            "checkpoint-origin",
            format!(
                "the checkpoint is for {:?}, but it was signed by {}",
                checkpoint.origin,
                signed.join(", ")
            ),
        ));
    }
    let cosigned = verify_cosignatures(&note, &policy.witnesses)
        .map_err(|e| VerifyError::bad(at.clone(), "cosignature", e.to_string()))?;
    if cosigned.len() < policy.quorum {
        return Err(VerifyError::bad(
            at,
            "witness-quorum",
            format!(
                "{} of the {} witnesses given cosigned; {} needed",
                cosigned.len(),
                policy.witnesses.len(),
                policy.quorum
            ),
        ));
    }
    if let Some(wp) = &policy.witness_policy {
        let keys: Vec<_> = wp.witnesses.iter().map(|w| w.key.clone()).collect();
        let by = cosigned_by(&note, &keys)
            .map_err(|e| VerifyError::bad(at.clone(), "cosignature", e.to_string()))?;
        let by: Vec<bool> = by.iter().map(Option::is_some).collect();
        if !wp.is_met(&by) {
            let names: Vec<&str> = wp
                .witnesses
                .iter()
                .zip(&by)
                .filter(|(_, &b)| b)
                .map(|(w, _)| w.name.as_str())
                .collect();
            return Err(VerifyError::bad(
                at,
                "witness-quorum",
                format!(
                    "the witness policy's quorum {} is not met; cosigned by {}",
                    wp.describe(),
                    if names.is_empty() {
                        "none of its witnesses".to_string()
                    } else {
                        names.join(", ")
                    }
                ),
            ));
        }
    }
    Ok(Opened {
        checkpoint,
        note_text: String::from_utf8_lossy(bytes).into_owned(),
        cosigned,
    })
}

fn names(keys: &[VerifierKey]) -> String {
    keys.iter()
        .map(|k| format!("{}+{:08x}", k.name(), k.id()))
        .collect::<Vec<_>>()
        .join(", ")
}
