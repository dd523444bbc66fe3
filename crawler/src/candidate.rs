//! A server the crawler may probe: its identity in the log, what to run or where to connect, and
//! what discovery learnt about it.

use pinlog_core::ServerId;

use crate::start::Start;

/// What runs, or where the server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// An npm package; `version` is an exact version or a dist-tag, `None` for `latest`.
    Npm {
        name: String,
        version: Option<String>,
    },
    /// A PyPI project; `version` exact, `None` for the newest.
    Pypi {
        name: String,
        version: Option<String>,
    },
    /// A container image by digest.
    Oci { image: String, digest: String },
    /// A remote endpoint.
    Remote { url: String, transport: Remote },
}

/// How a remote endpoint is spoken to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remote {
    StreamableHttp,
    Sse,
}

/// An environment variable a registry says the server reads. Only its name is ever recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvVar {
    pub name: String,
    pub required: bool,
    pub secret: bool,
}

/// Where a candidate was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SourceKind {
    Registry,
    Npm,
    Github,
    Seeds,
}

impl SourceKind {
    pub const ALL: [SourceKind; 4] = [
        SourceKind::Registry,
        SourceKind::Npm,
        SourceKind::Github,
        SourceKind::Seeds,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Registry => "registry",
            SourceKind::Npm => "npm",
            SourceKind::Github => "github",
            SourceKind::Seeds => "seeds",
        }
    }

    pub fn parse(s: &str) -> Option<SourceKind> {
        SourceKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// One server found by discovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub id: ServerId,
    pub launch: Launch,
    pub env: Vec<EnvVar>,
    /// Every source that named it, in order, without repeats.
    pub found_by: Vec<SourceKind>,
    /// Other names it goes by (its name in the MCP registry), for opt-out matching.
    pub aliases: Vec<String>,
    /// The arguments and environment it is started with (packages only).
    pub start: Start,
}

impl Candidate {
    /// A candidate for `launch`, named by the identity the log gives it: `npm:<pkg>`,
    /// `pypi:<pkg>`, `oci:<image>` or `remote:<url>`. Versions are not part of the identity: a
    /// new version of a package is the same server, whose surface may have moved.
    pub fn new(launch: Launch, found_by: SourceKind) -> Result<Candidate, String> {
        let id = match &launch {
            Launch::Npm { name, .. } => format!("npm:{name}"),
            Launch::Pypi { name, .. } => format!("pypi:{}", pypi_normalized(name)),
            Launch::Oci { image, .. } => format!("oci:{image}"),
            Launch::Remote { url, .. } => format!("remote:{url}"),
        };
        let id: ServerId = id
            .parse()
            .map_err(|e: pinlog_core::server::ServerIdError| {
                format!("{}: {}", pinlog_core::render::quoted(&id, 120), e.0)
            })?;
        Ok(Candidate {
            id,
            launch,
            env: Vec::new(),
            found_by: vec![found_by],
            aliases: Vec::new(),
            start: Start::default(),
        })
    }

    /// Takes in what another source knew about the same server: the first source's way to run
    /// it stands unless it named no version and this one does; environment names are joined.
    /// How to start it comes from the first source that says, except that a seed line's word
    /// beats a registry's: the operator wrote it for this crawler.
    pub fn merge(&mut self, other: Candidate) {
        debug_assert_eq!(self.id, other.id);
        let pinned = |l: &Launch| match l {
            Launch::Npm { version, .. } | Launch::Pypi { version, .. } => version.is_some(),
            _ => true,
        };
        if !pinned(&self.launch) && pinned(&other.launch) {
            self.launch = other.launch;
        }
        if !other.start.is_empty()
            && (self.start.is_empty() || other.found_by.contains(&SourceKind::Seeds))
        {
            self.start = other.start;
        }
        for var in other.env {
            if !self.env.iter().any(|v| v.name == var.name) {
                self.env.push(var);
            }
        }
        for a in other.aliases {
            if !self.aliases.contains(&a) {
                self.aliases.push(a);
            }
        }
        for s in other.found_by {
            if !self.found_by.contains(&s) {
                self.found_by.push(s);
            }
        }
    }
}

pub use pinlog_core::package::pypi_normalized;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pypi_names_normalise_as_pep_503_says() {
        // The examples of PEP 503's "Normalized Names" section all name one project.
        for n in [
            "friendly-bard",
            "Friendly-Bard",
            "FRIENDLY-BARD",
            "friendly.bard",
            "friendly_bard",
            "friendly--bard",
            "FrIeNdLy-._.-bArD",
        ] {
            assert_eq!(pypi_normalized(n), "friendly-bard", "{n}");
        }
    }

    #[test]
    fn merging_keeps_the_pinned_version_and_joins_sources() {
        let a = Candidate::new(
            Launch::Npm {
                name: "x".into(),
                version: None,
            },
            SourceKind::Npm,
        )
        .unwrap();
        let mut b = Candidate::new(
            Launch::Npm {
                name: "x".into(),
                version: Some("1.2.3".into()),
            },
            SourceKind::Registry,
        )
        .unwrap();
        b.env.push(EnvVar {
            name: "API_KEY".into(),
            required: true,
            secret: true,
        });
        let mut merged = a.clone();
        merged.merge(b);
        assert_eq!(
            merged.launch,
            Launch::Npm {
                name: "x".into(),
                version: Some("1.2.3".into())
            }
        );
        assert_eq!(merged.found_by, [SourceKind::Npm, SourceKind::Registry]);
        assert_eq!(merged.env.len(), 1);
    }

    #[test]
    fn a_seed_lines_start_beats_the_registrys_and_an_empty_one_replaces_nothing() {
        let c = |source| {
            Candidate::new(
                Launch::Npm {
                    name: "x".into(),
                    version: None,
                },
                source,
            )
            .unwrap()
        };
        let with = |source, arg: &str| {
            let mut k = c(source);
            k.start
                .positional(crate::start::Given::Text(arg.into()))
                .unwrap();
            k
        };
        let mut m = with(SourceKind::Registry, "from-registry");
        m.merge(c(SourceKind::Npm));
        assert_eq!(m.start.args(), ["from-registry"]);
        m.merge(with(SourceKind::Seeds, "from-seed"));
        assert_eq!(m.start.args(), ["from-seed"]);
        let mut m = c(SourceKind::Npm);
        m.merge(with(SourceKind::Registry, "from-registry"));
        assert_eq!(m.start.args(), ["from-registry"]);
    }
}
