//! The policies `verify` checks, their stable tokens, and which of them gate (docs/GATE.md).

use std::fmt;

/// One rule about the served surface. The token ([`Policy::as_str`]) is a contract: it names the
/// policy on the command line, in every report format and as the SARIF rule id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Policy {
    ToolChanged,
    ToolAdded,
    ToolRemoved,
    ServerRenamed,
    PromptChanged,
    PromptAdded,
    PromptRemoved,
    InstructionsChanged,
    PackageChanged,
    ProtocolChanged,
    NameCollision,
    HiddenCharacters,
    MixedScriptName,
    InvalidToolName,
}

impl Policy {
    /// Every policy, in report order.
    pub const ALL: [Policy; 14] = [
        Policy::ToolChanged,
        Policy::ToolAdded,
        Policy::ToolRemoved,
        Policy::ServerRenamed,
        Policy::PromptChanged,
        Policy::PromptAdded,
        Policy::PromptRemoved,
        Policy::InstructionsChanged,
        Policy::PackageChanged,
        Policy::ProtocolChanged,
        Policy::NameCollision,
        Policy::HiddenCharacters,
        Policy::MixedScriptName,
        Policy::InvalidToolName,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Policy::ToolChanged => "tool-changed",
            Policy::ToolAdded => "tool-added",
            Policy::ToolRemoved => "tool-removed",
            Policy::ServerRenamed => "server-renamed",
            Policy::PromptChanged => "prompt-changed",
            Policy::PromptAdded => "prompt-added",
            Policy::PromptRemoved => "prompt-removed",
            Policy::InstructionsChanged => "instructions-changed",
            Policy::PackageChanged => "package-changed",
            Policy::ProtocolChanged => "protocol-changed",
            Policy::NameCollision => "name-collision",
            Policy::HiddenCharacters => "hidden-characters",
            Policy::MixedScriptName => "mixed-script-name",
            Policy::InvalidToolName => "invalid-tool-name",
        }
    }

    pub fn from_token(token: &str) -> Option<Policy> {
        Policy::ALL.into_iter().find(|p| p.as_str() == token)
    }

    /// Whether the policy compares the served surface with the approved one (as opposed to
    /// describing the served surface alone).
    pub fn compares(self) -> bool {
        !matches!(
            self,
            Policy::NameCollision
                | Policy::HiddenCharacters
                | Policy::MixedScriptName
                | Policy::InvalidToolName
        )
    }

    /// Whether the policy gates when `-fail-on` is not given: every comparison but
    /// protocol-changed, whose value depends on what the exporter asked for as much as on the
    /// server.
    pub fn gates_by_default(self) -> bool {
        self.compares() && self != Policy::ProtocolChanged
    }

    /// What a violation means, in one sentence.
    pub fn summary(self) -> &'static str {
        match self {
            Policy::ToolChanged => "an approved tool no longer canonicalises to what was approved",
            Policy::ToolAdded => "a server offers a tool nobody approved",
            Policy::ToolRemoved => "an approved tool is no longer offered",
            Policy::ServerRenamed => {
                "a server no longer calls itself what it called itself when it was approved"
            }
            Policy::PromptChanged => {
                "an approved prompt no longer canonicalises to what was approved"
            }
            Policy::PromptAdded => "a server offers a prompt nobody approved",
            Policy::PromptRemoved => "an approved prompt is no longer offered",
            Policy::InstructionsChanged => {
                "a server's instructions are not the text that was approved"
            }
            Policy::PackageChanged => {
                "a server runs another package, version or registry digest than the one approved"
            }
            Policy::ProtocolChanged => {
                "a server negotiated another protocol revision than the one it was approved over"
            }
            Policy::NameCollision => "two servers offer the same tool name",
            Policy::HiddenCharacters => {
                "a string in a tool, a prompt or the instructions carries characters that occupy \
                 no visible space"
            }
            Policy::MixedScriptName => "a tool or prompt name draws on several writing systems",
            Policy::InvalidToolName => "a tool name carries characters outside A-Za-z0-9._-",
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The policies that fail the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gate(Vec<Policy>);

impl Default for Gate {
    /// The default gate: tool-changed, tool-added, tool-removed, server-renamed, prompt-changed,
    /// prompt-added, prompt-removed, instructions-changed, package-changed.
    fn default() -> Self {
        Gate(
            Policy::ALL
                .into_iter()
                .filter(|p| p.gates_by_default())
                .collect(),
        )
    }
}

impl Gate {
    /// Reads `-fail-on`: `all`, `none`, or policy tokens separated by commas. `none` gates
    /// nothing and has to be written alone; an unknown token, an empty list or a repeated token is
    /// a usage error.
    pub fn parse(text: &str) -> Result<Gate, String> {
        match text {
            "all" => return Ok(Gate(Policy::ALL.to_vec())),
            "none" => return Ok(Gate(Vec::new())),
            _ => {}
        }
        let mut policies = Vec::new();
        for token in text.split(',') {
            let token = token.trim();
            if token == "all" || token == "none" {
                return Err(format!("{token} cannot be combined with other policies"));
            }
            let p = Policy::from_token(token).ok_or_else(|| {
                format!(
                    "unknown policy {}; known: all, none, {}",
                    pinlog_core::render::quoted(token, 40),
                    Policy::ALL.map(Policy::as_str).join(", ")
                )
            })?;
            if policies.contains(&p) {
                return Err(format!("{p} is named twice"));
            }
            policies.push(p);
        }
        policies.sort();
        Ok(Gate(policies))
    }

    pub fn gates(&self, p: Policy) -> bool {
        self.0.contains(&p)
    }

    pub fn policies(&self) -> &[Policy] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use crate::*;

    #[test]
    fn fail_on_reads_all_none_and_lists_and_refuses_the_rest() {
        assert_eq!(Gate::parse("all").unwrap().policies().len(), 14);
        assert!(Gate::parse("none").unwrap().is_empty());
        let g = Gate::parse("tool-added,hidden-characters").unwrap();
        assert!(g.gates(Policy::ToolAdded) && g.gates(Policy::HiddenCharacters));
        assert!(!g.gates(Policy::ToolChanged));
        for bad in [
            "",
            "tool-added,",
            "none,tool-added",
            "all,none",
            "tool",
            "tool-added,tool-added",
        ] {
            assert!(Gate::parse(bad).is_err(), "{bad:?}");
        }
        let d = Gate::default();
        assert_eq!(d.policies().len(), 9);
        assert!(d.gates(Policy::PackageChanged));
        assert!(!d.gates(Policy::ProtocolChanged) && !d.gates(Policy::NameCollision));
    }
}
