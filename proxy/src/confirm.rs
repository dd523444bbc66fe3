//! The code a person types to approve a pending change, so that an approval is a deliberate act.
//!
//! `pinlog approve` on a terminal shows the change (its labels and the safe diff) with a short
//! code, and approves only when that code is typed back. The code is derived from exactly what is
//! approved: the server's key, its pin, the pending surface and labels, and the tools named. So a
//! blind "y" or an empty line never approves, a code read off another change approves nothing,
//! and a change that is replaced between the display and the answer is refused when the store
//! compares the same digest inside the approving transaction.
//!
//! What it cannot do: a process that can read the terminal and type into it is, to pinlog, the
//! person. Against such a process only the signed-lockfile mode (crate::approvers) holds.

use std::fmt;

use pinlog_core::Digest;

use crate::store::{Pinned, ServerKey};

/// How many characters the code has.
pub const CODE_LEN: usize = 6;
/// What the code is written with: no 0 and O, no 1, I and L, so it reads back unambiguously.
const ALPHABET: &[u8] = b"23456789ABCDEFGHJKMNPQRSTUVWXYZ";
/// The longest answer read: a line longer than this is refused unread.
pub const MAX_ANSWER: usize = 256;

/// Which change an approval is about: a digest over everything it would take into the pin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangeId(Digest);

impl ChangeId {
    /// The change `tools` (all of it when empty) of what is pending for `key`; `None` when
    /// nothing is pending.
    pub fn of(key: &ServerKey, p: &Pinned, tools: &[String]) -> Option<ChangeId> {
        let pending = p.pending.as_ref()?;
        let mut tools = tools.to_vec();
        tools.sort();
        tools.dedup();
        // Each part length-prefixed, so no two different changes are one message.
        let mut message = b"pinlog-approve v1\n".to_vec();
        let mut part = |bytes: &[u8]| {
            message.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
            message.extend_from_slice(bytes);
        };
        part(key.as_str().as_bytes());
        part(&p.pin);
        part(&pending.manifest);
        part(pending.labels.join("\n").as_bytes());
        part(tools.join("\n").as_bytes());
        Some(ChangeId(Digest::of(&message)))
    }

    /// Forgetting `p`, the pin of `key`: after it, the next session pins whatever it is served,
    /// unseen, so forgetting is confirmed as an approval is.
    pub fn forgetting(key: &ServerKey, p: &Pinned) -> ChangeId {
        let mut message = b"pinlog-forget v1\n".to_vec();
        let pending = p
            .pending
            .as_ref()
            .map_or(&[][..], |x| x.manifest.as_slice());
        for bytes in [key.as_str().as_bytes(), &p.pin, pending] {
            message.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
            message.extend_from_slice(bytes);
        }
        ChangeId(Digest::of(&message))
    }

    /// The code shown with the change and typed back to approve it.
    pub fn code(&self) -> String {
        // 60 bits of the digest, written in base 31: far more than six characters need.
        let hex = self.0.hex();
        let mut n = u64::from_str_radix(&hex[..15], 16).expect("hex digits");
        let base = ALPHABET.len() as u64;
        (0..CODE_LEN)
            .map(|_| {
                let c = ALPHABET[(n % base) as usize];
                n /= base;
                char::from(c)
            })
            .collect()
    }

    /// Whether `answer`, one line as read from the terminal (with its line feed, if any), is the
    /// code. Surrounding blanks are ignored, and so is case.
    pub fn confirm(&self, answer: &[u8]) -> Result<(), Refusal> {
        if answer.is_empty() {
            return Err(Refusal::NoAnswer);
        }
        if answer.len() > MAX_ANSWER {
            return Err(Refusal::TooLong);
        }
        let typed = std::str::from_utf8(answer)
            .map_err(|_| Refusal::Wrong)?
            .trim();
        if typed.eq_ignore_ascii_case(&self.code()) {
            Ok(())
        } else {
            Err(Refusal::Wrong)
        }
    }

    /// The question asked after the change is shown: `to` what is done (`approve …`).
    pub fn prompt(&self, to: &str) -> String {
        format!(
            "To {to}, type the code {} and press Enter (anything else does nothing): ",
            self.code()
        )
    }
}

/// Why what was asked was not done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The input ended before a line was typed.
    NoAnswer,
    /// The answer is not the code.
    Wrong,
    /// The answer is longer than any code.
    TooLong,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Refusal::NoAnswer => "no answer (the input ended)",
            Refusal::Wrong => "that is not the code shown",
            Refusal::TooLong => "the answer is longer than the code",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Pending;

    fn pinned(pending: Option<&[u8]>) -> Pinned {
        Pinned {
            label: "rug".into(),
            pin: b"pin".to_vec(),
            pinned_at: "2026-01-01T00:00:00Z".into(),
            id: "rug".into(),
            serial: 1,
            tools: 1,
            prompts: 0,
            pending: pending.map(|m| Pending {
                manifest: m.to_vec(),
                at: "2026-01-02T00:00:00Z".into(),
                labels: vec!["tool-changed".into(), "mentions-secrets".into()],
            }),
        }
    }

    fn key() -> ServerKey {
        ServerKey::from_argv(&["rug".into()])
    }

    #[test]
    fn the_code_names_one_change() {
        assert_eq!(ChangeId::of(&key(), &pinned(None), &[]), None);
        let id = ChangeId::of(&key(), &pinned(Some(b"m1")), &[]).unwrap();
        let code = id.code();
        assert_eq!(code.len(), CODE_LEN);
        assert!(code.bytes().all(|b| ALPHABET.contains(&b)), "{code}");
        assert_eq!(
            ChangeId::of(&key(), &pinned(Some(b"m1")), &[]),
            Some(id),
            "the same change, the same code"
        );
        // Another surface, another selection of tools, another server: another change.
        let other = ChangeId::of(&key(), &pinned(Some(b"m2")), &[]).unwrap();
        let some = ChangeId::of(&key(), &pinned(Some(b"m1")), &["weather".into()]).unwrap();
        let elsewhere = ServerKey::from_argv(&["other".into()]);
        let moved = ChangeId::of(&elsewhere, &pinned(Some(b"m1")), &[]).unwrap();
        for o in [other, some, moved] {
            assert_ne!(o, id);
        }
        // The tools named are a set.
        let a = ChangeId::of(&key(), &pinned(Some(b"m1")), &["b".into(), "a".into()]);
        let b = ChangeId::of(
            &key(),
            &pinned(Some(b"m1")),
            &["a".into(), "b".into(), "a".into()],
        );
        assert_eq!(a, b);
    }

    #[test]
    fn only_the_code_confirms() {
        let id = ChangeId::of(&key(), &pinned(Some(b"m1")), &[]).unwrap();
        let code = id.code();
        assert_eq!(id.confirm(format!("{code}\n").as_bytes()), Ok(()));
        assert_eq!(
            id.confirm(format!("  {}\r\n", code.to_lowercase()).as_bytes()),
            Ok(())
        );
        assert_eq!(
            id.confirm(code.as_bytes()),
            Ok(()),
            "a last line with no line feed"
        );
        assert_eq!(id.confirm(b""), Err(Refusal::NoAnswer));
        for blind in [&b"\n"[..], b"y\n", b"yes\n", b"Y", b"\xff\n"] {
            assert_eq!(id.confirm(blind), Err(Refusal::Wrong), "{blind:?}");
        }
        let mut long = code.clone().into_bytes();
        long.resize(MAX_ANSWER + 1, b' ');
        assert_eq!(id.confirm(&long), Err(Refusal::TooLong));
        assert!(id.prompt("it").contains(&code));
    }
}
