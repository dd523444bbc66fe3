//! The signed-lockfile mode: with a file `approvers` in the pinlog home, approvals on this machine
//! come only from lockfiles signed by one of the keys it holds.
//!
//! A typed confirmation (crate::confirm) stops a blind approval, not a process that can read the
//! terminal and type, nor one that passes `--yes`. Whoever lacks an approver's private key can do
//! neither here: `pinlog approve` refuses, with `--yes` too; the proxy runs a server only under
//! `--lock FILE` whose signature `FILE.sig` (`pinlog sign`) verifies under an approver key, holds
//! it to that lockfile alone (as `--only-locked`: nothing is pinned on first use, which would be
//! an approval nobody made), and refuses everything else before the server starts.

use std::path::{Path, PathBuf};

use pinlog_core::exit::Failure;
use pinlog_core::files::read_setting;
use pinlog_core::render::safe;
use pinlog_gate::commands::check_lock_signature;
use pinlog_gate::signature::PublicKey;

/// The file in the pinlog home that turns the mode on.
pub const SETTING: &str = "approvers";
/// The largest setting read.
const MAX_SETTING: u64 = 64 << 10;

/// The keys whose signature on a lockfile is an approval.
#[derive(Debug)]
pub struct Approvers {
    path: PathBuf,
    keys: Vec<PublicKey>,
}

impl Approvers {
    /// The approvers the pinlog home's [`SETTING`] file names, if it has one: one or more public
    /// keys in PEM (the `.pub` files `pinlog key` writes, one after another); outside the keys,
    /// blank lines and lines starting `#`. A file that exists and breaks these rules is an error,
    /// never taken for the mode being off.
    pub fn from_home(home: &Path) -> Result<Option<Approvers>, String> {
        let path = home.join(SETTING);
        let Some(text) = read_setting(&path, MAX_SETTING)? else {
            return Ok(None);
        };
        let at = |n: usize, why: &str| format!("{} line {n}: {why}", path.display());
        let mut keys = Vec::new();
        // The block being read: its first line's number, and its text.
        let mut block: Option<(usize, String)> = None;
        for (i, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            match &mut block {
                Some((start, pem)) => {
                    pem.push_str(trimmed);
                    pem.push('\n');
                    if trimmed.starts_with("-----END ") {
                        let key =
                            PublicKey::from_pem(pem).map_err(|e| at(*start, &e.to_string()))?;
                        keys.push(key);
                        block = None;
                    }
                }
                None if trimmed.starts_with("-----BEGIN ") => {
                    block = Some((i + 1, format!("{trimmed}\n")));
                }
                None if trimmed.is_empty() || trimmed.starts_with('#') => {}
                None => {
                    return Err(at(
                        i + 1,
                        "outside a key, a line is blank or starts with `#`; a key is a PEM \
                         public key, as `pinlog key` writes it beside the private key",
                    ))
                }
            }
        }
        if let Some((start, _)) = block {
            return Err(at(start, "a key that does not end"));
        }
        if keys.is_empty() {
            return Err(at(1, "no key: the file names the keys that sign approvals"));
        }
        Ok(Some(Approvers { path, keys }))
    }

    /// Where the setting is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The keys' fingerprints, for saying who may approve.
    pub fn fingerprints(&self) -> Vec<String> {
        self.keys
            .iter()
            .map(|k| k.fingerprint().to_string())
            .collect()
    }

    /// Whether `lock_bytes`, the lockfile read from `lock`, is signed (`LOCK.sig`) by an
    /// approver: the fingerprint of the key that signed, or why not (exit 4).
    pub fn check(&self, lock: &Path, lock_bytes: &[u8]) -> Result<String, Failure> {
        let envelope = check_lock_signature(lock, lock_bytes, &self.keys, None).map_err(|f| {
            Failure::unreadable(format!(
                "{}; approvals on this machine come only from a lockfile an approver signed ({}), \
                 so the server was not started",
                f.message,
                self.path.display()
            ))
        })?;
        Ok(envelope.public_key_fingerprint.to_string())
    }
}

/// What the mode asks of a proxy session, before the server starts: nothing when it is off
/// (`Ok(false)`); when it is on, a lockfile an approver signed, and then `Ok(true)`: the session
/// is held to that lockfile alone. `lock` is the `--lock` file and its bytes, as read.
pub fn enforce(home: &Path, lock: Option<(&Path, &[u8])>) -> Result<bool, Failure> {
    let approvers = match Approvers::from_home(home) {
        Ok(Some(a)) => a,
        Ok(None) => return Ok(false),
        Err(why) => {
            return Err(Failure::unreadable(format!(
                "{why}; it names who may approve, so the server was not started"
            )))
        }
    };
    let Some((path, bytes)) = lock else {
        return Err(Failure::unreadable(format!(
            "approvals on this machine come only from a lockfile an approver signed ({}): run the \
             proxy with --lock FILE, FILE signed with `pinlog sign`; the server was not started",
            approvers.path.display()
        )));
    };
    let signer = approvers.check(path, bytes)?;
    eprintln!(
        "pinlog: the lockfile {} is signed by the approver key {signer}; only what it approves runs",
        safe(&path.display().to_string())
    );
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pinlog_gate::signature::SigningKey;

    fn home_with(text: &str) -> tempfile::TempDir {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join(SETTING), text).unwrap();
        home
    }

    #[test]
    fn the_setting_names_keys_and_nothing_else() {
        let empty = tempfile::tempdir().unwrap();
        assert!(Approvers::from_home(empty.path()).unwrap().is_none());
        let a = SigningKey::from_seed(&[1; 32]).public();
        let b = SigningKey::from_seed(&[2; 32]).public();
        let text = format!(
            "# the team's approvers\n{}\n\n{}",
            a.to_spki_pem(),
            b.to_spki_pem()
        );
        let home = home_with(&text);
        let got = Approvers::from_home(home.path()).unwrap().unwrap();
        assert_eq!(
            got.fingerprints(),
            [a.fingerprint().to_string(), b.fingerprint().to_string()]
        );
        // Each of these exists, so the mode is on, and is refused rather than read as off.
        let private = SigningKey::from_seed(&[3; 32]).to_pkcs8_pem();
        let unended = a.to_spki_pem().replace("-----END PUBLIC KEY-----", "");
        for (text, why) in [
            ("", "no key"),
            ("# nobody\n", "no key"),
            ("sha256:abcd\n", "line 1: outside a key"),
            (private.as_str(), "private key"),
            (unended.as_str(), "does not end"),
        ] {
            let home = home_with(text);
            let e = Approvers::from_home(home.path()).unwrap_err();
            assert!(e.contains(why), "{text:?}: {e}");
            assert!(enforce(home.path(), None).is_err(), "{text:?}");
        }
    }
}
