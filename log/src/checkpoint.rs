//! C2SP tlog-checkpoint: the note text that commits a log to a size and a root.
//!
//! ```text
//! <origin>
//! <size, decimal>
//! <root, base64>
//! [extension lines]
//! ```

use std::fmt;

use crate::hash::Hash;

/// A checkpoint body, without signatures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub origin: String,
    pub size: u64,
    pub root: Hash,
    /// Lines after the root, each non-empty, kept in order.
    pub extensions: Vec<String>,
}

/// Why a checkpoint body was refused; each message starts with a stable rule name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointError(pub &'static str);

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad-checkpoint: {}", self.0)
    }
}

impl std::error::Error for CheckpointError {}

impl Checkpoint {
    /// Reads a checkpoint body: the text of a signed note.
    pub fn parse(text: &str) -> Result<Checkpoint, CheckpointError> {
        let body = text
            .strip_suffix('\n')
            .ok_or(CheckpointError("the text does not end in a newline"))?;
        let mut lines = body.split('\n');
        let origin = lines.next().unwrap_or_default();
        if origin.is_empty() {
            return Err(CheckpointError("the origin line is empty"));
        }
        let size = lines.next().ok_or(CheckpointError("no size line"))?;
        let size = parse_size(size).ok_or(CheckpointError(
            "the size is not a decimal number without leading zeros",
        ))?;
        let root = lines.next().ok_or(CheckpointError("no root hash line"))?;
        let root = Hash::from_base64(root).ok_or(CheckpointError(
            "the root is not 32 bytes of standard base64",
        ))?;
        let extensions: Vec<String> = lines.map(str::to_string).collect();
        if extensions.iter().any(String::is_empty) {
            return Err(CheckpointError("an extension line is empty"));
        }
        Ok(Checkpoint {
            origin: origin.to_string(),
            size,
            root,
            extensions,
        })
    }

    /// The note text.
    pub fn to_text(&self) -> String {
        let mut t = format!("{}\n{}\n{}\n", self.origin, self.size, self.root);
        for e in &self.extensions {
            t.push_str(e);
            t.push('\n');
        }
        t
    }
}

fn parse_size(s: &str) -> Option<u64> {
    let canonical =
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    if canonical {
        s.parse().ok()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_keeps_extensions() {
        let text = "example.com/log\n42\nRcCI1Nk56ZcSmIEfIn0SleqtV7uvrlXNccFx595Iwl0=\next one\n";
        let c = Checkpoint::parse(text).unwrap();
        assert_eq!(c.origin, "example.com/log");
        assert_eq!(c.size, 42);
        assert_eq!(c.extensions, ["ext one"]);
        assert_eq!(c.to_text(), text);
    }

    #[test]
    fn refuses_what_the_spec_forbids() {
        let root = "RcCI1Nk56ZcSmIEfIn0SleqtV7uvrlXNccFx595Iwl0=";
        for bad in [
            format!("o\n42\n{root}"),
            format!("\n42\n{root}\n"),
            format!("o\n042\n{root}\n"),
            format!("o\n+42\n{root}\n"),
            format!("o\n18446744073709551616\n{root}\n"),
            "o\n42\nAAAA\n".to_string(),
            format!("o\n42\n{root}\n\n"),
            "o\n42\n".to_string(),
        ] {
            assert!(Checkpoint::parse(&bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            Checkpoint::parse(&format!("o\n0\n{root}\n")).unwrap().size,
            0
        );
    }
}
