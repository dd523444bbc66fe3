//! Server identities: where a server comes from, written `<kind>:<name>`.

use std::fmt;
use std::str::FromStr;

/// Where a server's code or endpoint comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ServerKind {
    /// An npm package: `npm:@scope/name`.
    Npm,
    /// A PyPI package: `pypi:name`.
    Pypi,
    /// An OCI image: `oci:registry/repo`.
    Oci,
    /// A remote endpoint: `remote:https://…`.
    Remote,
    /// A name in the MCP registry: `registry:io.github.owner/name`.
    Registry,
}

impl ServerKind {
    pub fn prefix(self) -> &'static str {
        match self {
            ServerKind::Npm => "npm",
            ServerKind::Pypi => "pypi",
            ServerKind::Oci => "oci",
            ServerKind::Remote => "remote",
            ServerKind::Registry => "registry",
        }
    }

    const ALL: [ServerKind; 5] = [
        ServerKind::Npm,
        ServerKind::Pypi,
        ServerKind::Oci,
        ServerKind::Remote,
        ServerKind::Registry,
    ];
}

/// A server's identity, e.g. `npm:@modelcontextprotocol/server-everything`.
///
/// The name after the kind is 1 to 512 printable ASCII characters without spaces: identities are
/// printed on terminals and pages, and non-ASCII names would let two look alike.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerId {
    kind: ServerKind,
    text: String,
}

/// Why a server identity was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerIdError(pub &'static str);

impl fmt::Display for ServerIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad-server-id: {}", self.0)
    }
}

impl std::error::Error for ServerIdError {}

/// The longest name after the kind.
pub const MAX_SERVER_NAME: usize = 512;

impl ServerId {
    pub fn kind(&self) -> ServerKind {
        self.kind
    }

    /// The part after `<kind>:`.
    pub fn name(&self) -> &str {
        &self.text[self.kind.prefix().len() + 1..]
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl FromStr for ServerId {
    type Err = ServerIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (prefix, name) = s.split_once(':').ok_or(ServerIdError(
            "a server identity is <kind>:<name>, kind one of npm, pypi, oci, remote, registry",
        ))?;
        let kind = ServerKind::ALL
            .into_iter()
            .find(|k| k.prefix() == prefix)
            .ok_or(ServerIdError(
                "unknown kind (known: npm, pypi, oci, remote, registry)",
            ))?;
        if name.is_empty() || name.len() > MAX_SERVER_NAME {
            return Err(ServerIdError(
                "the name after the kind is empty or over 512 bytes",
            ));
        }
        if !name.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(ServerIdError(
                "the name holds a space, a control or a non-ASCII character",
            ));
        }
        Ok(ServerId {
            kind,
            text: s.to_string(),
        })
    }
}

impl fmt::Display for ServerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_kind_and_refuses_the_rest() {
        let id: ServerId = "npm:@modelcontextprotocol/server-everything"
            .parse()
            .unwrap();
        assert_eq!(id.kind(), ServerKind::Npm);
        assert_eq!(id.name(), "@modelcontextprotocol/server-everything");
        for ok in [
            "pypi:mcp-server-time",
            "oci:ghcr.io/org/image",
            "remote:https://mcp.example.com/mcp",
            "registry:io.github.org/name",
        ] {
            assert_eq!(ok.parse::<ServerId>().unwrap().as_str(), ok);
        }
        for bad in [
            "",
            "npm",
            "npm:",
            "cargo:x",
            "NPM:x",
            "npm:a b",
            "npm:caf\u{e9}",
            "npm:a\u{7}",
            &format!("npm:{}", "a".repeat(513)),
        ] {
            assert!(bad.parse::<ServerId>().is_err(), "{bad:?}");
        }
    }
}
