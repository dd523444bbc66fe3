//! `c2sp.org/tlog-proof@v1` receipts: an entry's index, its inclusion proof, and the signed
//! checkpoint the proof leads to, in one text that can be checked offline.
//!
//! ```text
//! c2sp.org/tlog-proof@v1
//! extra <base64>          (optional; pinlog puts the entry itself here)
//! index <n>
//! <base64 hash>           (zero or more, leaf's sibling first)
//!
//! <signed checkpoint note>
//! ```

use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

use crate::hash::Hash;

const HEADER: &str = "c2sp.org/tlog-proof@v1";
/// More hashes than a 2^64-leaf tree needs.
const MAX_PROOF: usize = 64;
/// A receipt is an entry (≤ 64 KiB, base64) plus hashes and a checkpoint.
pub const MAX_RECEIPT: usize = 1 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    pub extra: Option<Vec<u8>>,
    pub index: u64,
    pub proof: Vec<Hash>,
    /// The signed checkpoint, verbatim.
    pub checkpoint: String,
}

/// Why a receipt was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptError(pub &'static str);

impl fmt::Display for ReceiptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad-proof-file: {}", self.0)
    }
}

impl std::error::Error for ReceiptError {}

impl Receipt {
    pub fn to_text(&self) -> String {
        let mut t = format!("{HEADER}\n");
        if let Some(extra) = &self.extra {
            t.push_str(&format!("extra {}\n", STANDARD.encode(extra)));
        }
        t.push_str(&format!("index {}\n", self.index));
        for h in &self.proof {
            t.push_str(&h.to_base64());
            t.push('\n');
        }
        t.push('\n');
        t.push_str(&self.checkpoint);
        t
    }

    pub fn parse(bytes: &[u8]) -> Result<Receipt, ReceiptError> {
        if bytes.len() > MAX_RECEIPT {
            return Err(ReceiptError("the file is larger than 1 MiB"));
        }
        let text = std::str::from_utf8(bytes).map_err(|_| ReceiptError("not UTF-8"))?;
        let (head, checkpoint) = text
            .split_once("\n\n")
            .ok_or(ReceiptError("no blank line before the checkpoint"))?;
        let mut lines = head.split('\n');
        if lines.next() != Some(HEADER) {
            return Err(ReceiptError("the first line is not c2sp.org/tlog-proof@v1"));
        }
        let mut line = lines.next();
        let mut extra = None;
        if let Some(b64) = line.and_then(|l| l.strip_prefix("extra ")) {
            extra = Some(
                STANDARD
                    .decode(b64)
                    .map_err(|_| ReceiptError("the extra line is not base64"))?,
            );
            line = lines.next();
        }
        let index = line
            .and_then(|l| l.strip_prefix("index "))
            .ok_or(ReceiptError("no index line"))?;
        let canonical = !index.is_empty()
            && index.bytes().all(|b| b.is_ascii_digit())
            && (index == "0" || !index.starts_with('0'));
        let index = canonical
            .then(|| index.parse::<u64>().ok())
            .flatten()
            .ok_or(ReceiptError("the index is not a decimal number"))?;
        let proof = lines
            .map(|l| Hash::from_base64(l).ok_or(ReceiptError("a proof line is not a base64 hash")))
            .collect::<Result<Vec<_>, _>>()?;
        if proof.len() > MAX_PROOF {
            return Err(ReceiptError("more than 64 proof hashes"));
        }
        Ok(Receipt {
            extra,
            index,
            proof,
            checkpoint: checkpoint.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_transparency_dev_does() {
        use sha2::{Digest, Sha256};
        let h1 = Hash(Sha256::digest(b"hash1").into());
        let h2 = Hash(Sha256::digest(b"hash2").into());
        let r = Receipt {
            extra: None,
            index: 5,
            proof: vec![h1, h2],
            checkpoint: "test checkpoint\n".into(),
        };
        let want = "c2sp.org/tlog-proof@v1\nindex 5\nrzFuy5Go7nrpkhBwKy1HWPMM3eO/YePY54fXRoH5Cm4=\n5784L25ZFbP4hhm4ZiI+vx1RxMUyHMzeLp/3AKMlkIY=\n\ntest checkpoint\n";
        assert_eq!(r.to_text(), want);
        assert_eq!(Receipt::parse(want.as_bytes()).unwrap(), r);
        let with_extra = Receipt {
            extra: Some(b"extra information".to_vec()),
            index: 10,
            proof: vec![h1],
            checkpoint: "checkpoint data\n".into(),
        };
        let want = "c2sp.org/tlog-proof@v1\nextra ZXh0cmEgaW5mb3JtYXRpb24=\nindex 10\nrzFuy5Go7nrpkhBwKy1HWPMM3eO/YePY54fXRoH5Cm4=\n\ncheckpoint data\n";
        assert_eq!(with_extra.to_text(), want);
        assert_eq!(Receipt::parse(want.as_bytes()).unwrap(), with_extra);
        let empty = "c2sp.org/tlog-proof@v1\nindex 0\n\ncheckpoint\n";
        assert_eq!(Receipt::parse(empty.as_bytes()).unwrap().proof, []);
    }

    #[test]
    fn refuses_what_transparency_dev_refuses() {
        let h = "rzFuy5Go7nrpkhBwKy1HWPMM3eO/YePY54fXRoH5Cm4=";
        for bad in [
            "wrong-header\nindex 0\n\ncheckpoint\n".to_string(),
            "c2sp.org/tlog-proof@v1\nextra !!notbase64!!\nindex 0\n\ncheckpoint\n".into(),
            "c2sp.org/tlog-proof@v1\n\n\ncheckpoint\n".into(),
            "c2sp.org/tlog-proof@v1\nindex notanumber\n\ncheckpoint\n".into(),
            "c2sp.org/tlog-proof@v1\nindex -5\n\ncheckpoint\n".into(),
            "c2sp.org/tlog-proof@v1\nindex 05\n\ncheckpoint\n".into(),
            "c2sp.org/tlog-proof@v1\nindex 0\n!!notbase64!!\n\ncheckpoint\n".into(),
            format!("c2sp.org/tlog-proof@v1\nindex 0\n{h}{h}\n\ncheckpoint\n"),
            format!("c2sp.org/tlog-proof@v1\nindex 0\n{h}\n"),
        ] {
            assert!(Receipt::parse(bad.as_bytes()).is_err(), "{bad:?}");
        }
    }
}
