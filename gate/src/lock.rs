//! `lock`: a manifest approved as it stands, written as a version 2 lockfile.

use pinlog_core::format::nfc;
use pinlog_core::lockfile::{InstructionsPin, LockServer, Lockfile, Pin, MAX_SERIAL};
use pinlog_core::manifest::Manifest;

/// What approving a manifest did.
#[derive(Debug)]
pub enum Approval<'a> {
    /// The approved surface did not move: the lockfile on disk stays as it is, bytes and serial.
    Unchanged,
    /// The lockfile to write, its serial one above the previous one's (1 for a first approval).
    Moved(Lockfile<'a>),
}

/// Why a manifest could not be approved over the previous lockfile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockError(pub String);

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Approves `manifest` over `previous`, the lockfile already at the destination if any.
///
/// An unscoped manifest is the whole surface: the lockfile becomes exactly its servers. A scoped
/// one replaces only the servers it covers and keeps the others as they were approved, which a
/// version 1 lockfile cannot do (it lacks the approved objects a version 2 file keeps), so that
/// case is refused.
pub fn approve<'a>(
    manifest: &Manifest<'a>,
    previous: Option<&Lockfile<'a>>,
) -> Result<Approval<'a>, LockError> {
    let mut servers: Vec<LockServer<'a>> = manifest
        .servers
        .iter()
        .map(|s| LockServer {
            id: s.id.clone(),
            reported_name: s.reported_name.clone(),
            protocol_version: Some(s.protocol_version.clone()),
            package: s.package.clone(),
            instructions: InstructionsPin::Approved(s.instructions.clone()),
            // The manifest reader guarantees each item an object with a string name.
            tools: s.tools.iter().filter_map(Pin::approve).collect(),
            prompts: Some(s.prompts.iter().filter_map(Pin::approve).collect()),
        })
        .collect();
    if let (Some(_), Some(previous)) = (&manifest.scope, previous) {
        // Ids equal after NFC are one server: the manifest's spelling replaces the old one.
        let covered: Vec<String> = manifest.servers.iter().map(|s| nfc(&s.id)).collect();
        let kept = previous
            .servers
            .iter()
            .filter(|p| !covered.contains(&nfc(&p.id)));
        for p in kept {
            if previous.schema_version < 2 {
                return Err(LockError(
                    "the lockfile is version 1, which keeps digests only, and this manifest is \
                     scoped: servers outside the scope cannot be carried into version 2. Export \
                     the whole surface (no -server) and lock that"
                        .into(),
                ));
            }
            servers.push(p.clone());
        }
    }
    let serial = previous.map_or(0, |p| p.approval_serial);
    let mut candidate = Lockfile {
        schema_version: pinlog_core::lockfile::SCHEMA_VERSION,
        approval_serial: serial,
        servers,
    };
    if let Some(previous) = previous {
        if previous.schema_version >= 2 && candidate.to_bytes() == previous.to_bytes() {
            return Ok(Approval::Unchanged);
        }
    }
    candidate.approval_serial = serial
        .checked_add(1)
        .filter(|s| *s <= MAX_SERIAL)
        .ok_or_else(|| LockError("approval_serial cannot grow past 2^53".into()))?;
    Ok(Approval::Moved(candidate))
}
