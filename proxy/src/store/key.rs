//! A server's key in the pin store, derived from how it is launched or reached.

use std::ffi::OsString;
use std::fmt;

use pinlog_core::Digest;

/// A server's identity in the store: 24 lowercase hex digits, the first 96 bits of a SHA-256 over
/// its launch. 96 bits make an accidental collision between one user's servers unthinkable, and
/// the id stays short enough to type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerKey(String);

impl ServerKey {
    /// The key of a server launched as `argv` (program and arguments, exactly as given): each
    /// part length-prefixed after a domain tag, so that no two argument lists share an encoding.
    pub fn from_argv(argv: &[OsString]) -> ServerKey {
        Self::derive(
            b"pinlog proxy server key v1: argv\0",
            argv.iter().map(|a| a.as_encoded_bytes()),
        )
    }

    /// The key of a server reached at `url` (Streamable HTTP); the URL is not stored either.
    pub fn from_url(url: &str) -> ServerKey {
        Self::derive(b"pinlog proxy server key v1: url\0", [url.as_bytes()])
    }

    fn derive<'p>(domain: &[u8], parts: impl IntoIterator<Item = &'p [u8]>) -> ServerKey {
        let mut buf = domain.to_vec();
        for p in parts {
            buf.extend_from_slice(&(p.len() as u64).to_be_bytes());
            buf.extend_from_slice(p);
        }
        ServerKey(Digest::of(&buf).hex()[..24].to_string())
    }

    /// A key as written by [`ServerKey::as_str`]; `None` for anything else.
    pub fn parse(text: &str) -> Option<ServerKey> {
        let ok = text.len() == 24
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        ok.then(|| ServerKey(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ServerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
