//! The public log, for the proxy: opened on a thread of its own while the server starts, verified
//! under the whole pinned policy (the log's key, witnesses and quorum) within a deadline, then
//! asked, on first use and on a change, whether what this machine is served is what the public log
//! saw of the same server.
//!
//! The server is named by its public identity ([`PublicIdentity`]): a runner's package and
//! version, a locked package, or the HTTP endpoint. Each outcome is said in one of three ways:
//! **matches the public record**, **differs from the public record**, **not in the public
//! record**. A log that cannot be used (not read in time, or not verifying) is never used: under
//! `--on-public-unavailable warn` the proxy says so and pins as it would without one; under `block`
//! the session is blocked whenever the log is needed.

use std::time::{Duration, SystemTime};

use pinlog_core::identity::PublicIdentity;
use pinlog_core::render::{quoted, safe};
use pinlog_core::resolution;
use pinlog_gate::lock::{approve, Approval};
use pinlog_log::fetch::LogAt;
use pinlog_log::surface_blob::{self, SurfaceBlob};
use pinlog_verifier::public_log::{why_not, OnUnavailable, Opening, PublicLog};
use pinlog_verifier::record::{Compared, Observed, PublicRecord};

use crate::check::Served;
use crate::session::{OnPublicMismatch, Public, PublicVerdict, PUBLIC_UNAVAILABLE};

/// Starts opening `log` for the server `identity` names; `None` without a log.
pub fn open_public(
    log: Option<&PublicLog>,
    on: OnPublicMismatch,
    identity: Option<PublicIdentity>,
) -> Option<(Box<dyn Public + Send>, OnPublicMismatch)> {
    let log = log?;
    let public = PublicCheck {
        at: log.at.clone(),
        on_unavailable: log.on_unavailable,
        record: Record::Opening(log.start()),
        identity,
        said: false,
    };
    Some((Box::new(public), on))
}

/// The public log as far as it got.
enum Record {
    Opening(Opening),
    Ready(Box<PublicRecord<LogAt>>),
    /// Why it cannot be used, in a line safe to print.
    Unusable(String),
}

/// The public log being opened or opened, and who the server is in it.
pub struct PublicCheck {
    at: String,
    on_unavailable: OnUnavailable,
    record: Record,
    identity: Option<PublicIdentity>,
    /// Whether a log that cannot be used was said already.
    said: bool,
}

impl PublicCheck {
    /// The verified record, waiting for it (no later than its deadline) the first time.
    fn record(&mut self) -> Result<&PublicRecord<LogAt>, String> {
        let record = std::mem::replace(&mut self.record, Record::Unusable(String::new()));
        self.record = match record {
            Record::Opening(opening) => match opening.wait() {
                Ok(r) => Record::Ready(Box::new(r)),
                Err(e) => Record::Unusable(format!(
                    "the public log {} cannot be used, {}",
                    quoted(&self.at, 200),
                    safe(&why_not(&e))
                )),
            },
            known => known,
        };
        match &self.record {
            Record::Ready(r) => Ok(r),
            Record::Unusable(why) => Err(why.clone()),
            Record::Opening(_) => Err("the public log was not opened".into()),
        }
    }

    fn origin(record: &PublicRecord<LogAt>) -> String {
        safe(&record.checkpoint().origin).into_owned()
    }

    /// What a log that cannot be used means here: said once and nothing else under `warn`; a
    /// verdict the session blocks on under `block`.
    fn unusable(&mut self, why: String) -> (Vec<String>, Option<PublicVerdict>) {
        match self.on_unavailable {
            OnUnavailable::Warn => {
                let lines = if self.said {
                    Vec::new()
                } else {
                    vec![format!(
                        "{why}; pinning as without it (--on-public-unavailable block refuses \
                         instead)"
                    )]
                };
                self.said = true;
                (lines, None)
            }
            OnUnavailable::Block => (
                Vec::new(),
                Some(PublicVerdict {
                    line: format!("{why}, and --on-public-unavailable block refuses to go on"),
                    outcome: PUBLIC_UNAVAILABLE,
                    public_lock: None,
                }),
            ),
        }
    }
}

impl Public for PublicCheck {
    fn compare(&mut self, served: &Served, id: &str) -> (Vec<String>, Option<PublicVerdict>) {
        let Some(identity) = &self.identity else {
            return (
                vec![format!(
                    "{} has no public identity (not run through npx, uvx, pipx, node or python \
                     -m, and no locked package): not compared with the public log",
                    quoted(id, 64)
                )],
                None,
            );
        };
        let who = match &identity.version {
            Some(v) => format!("{} {}", identity.id, safe(v)),
            None => identity.id.to_string(),
        };
        let blob = match surface_blob::build(
            served.instructions.as_deref(),
            &served.prompts,
            &served.tools,
        ) {
            Ok(b) => b,
            Err(e) => {
                return (
                    vec![format!(
                        "the surface of {who} has no digest to compare with the public log ({})",
                        safe(&e.to_string())
                    )],
                    None,
                )
            }
        };
        let identity = identity.clone();
        let record = match self.record() {
            Ok(r) => r,
            Err(why) => return self.unusable(why),
        };
        let origin = Self::origin(record);
        let outcome = record.compare(&identity.id, identity.version.as_deref(), &blob.surface());
        let verdict = match outcome {
            Ok(Compared::Matches(o)) => PublicVerdict {
                line: format!(
                    "{who} matches the public record: entry {} of {origin}{}, unchanged for {} \
                     day(s); the pin is backed by public observation",
                    o.index,
                    observed_version(&o),
                    days_since(&o)
                ),
                outcome: "public-matches",
                public_lock: None,
            },
            Ok(Compared::Differs(o, public)) => PublicVerdict {
                line: format!(
                    "{who} DIFFERS FROM THE PUBLIC RECORD: entry {} of {origin}{} holds another \
                     surface; {}",
                    o.index,
                    observed_version(&o),
                    why_it_differs(&public, served, &identity, &o)
                ),
                outcome: "public-differs",
                public_lock: Some((public_lock(&public, served, id), id.to_string())),
            },
            Ok(Compared::Absent) => PublicVerdict {
                line: format!("{who} is not in the public record of {origin}"),
                outcome: "public-absent",
                public_lock: None,
            },
            Err(e) => {
                return self.unusable(format!(
                    "the public record could not be read ({}), so {who} was not compared",
                    safe(&e.to_string())
                ))
            }
        };
        (Vec::new(), Some(verdict))
    }
}

/// What a difference most likely is: dependency resolution, when only the schema keys a
/// generator writes differ (with how to check it); else this machine's configuration, or a
/// surface the public was not served.
fn why_it_differs(
    public: &SurfaceBlob,
    served: &Served,
    identity: &PublicIdentity,
    o: &Observed,
) -> String {
    let parts = public.parts();
    let public_surface = resolution::Surface {
        instructions: parts.instructions.as_deref(),
        tools: &parts.tools,
        prompts: &parts.prompts,
    };
    let served_surface = resolution::Surface {
        instructions: served.instructions.as_deref(),
        tools: &served.tools,
        prompts: &served.prompts,
    };
    if !resolution::only_generated_schema_keys(public_surface, served_surface) {
        return "either this machine's configuration changes the surface, or this client is \
                served something the public was not"
            .to_string();
    }
    let check = o
        .version
        .as_deref()
        .or(identity.version.as_deref())
        .and_then(|v| resolution::how_to_check(identity.id.kind(), identity.id.name(), &safe(v)));
    match check {
        Some(check) => format!("{}; {check}", resolution::LIKELY),
        None => resolution::LIKELY.to_string(),
    }
}

/// `, observed at version V` when the log recorded one.
fn observed_version(o: &Observed) -> String {
    match &o.version {
        Some(v) => format!(", observed at version {}", safe(v)),
        None => String::new(),
    }
}

/// Whole days since the log first saw the surface.
fn days_since(o: &Observed) -> u64 {
    humantime::parse_rfc3339(o.since.as_str())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .unwrap_or(Duration::ZERO)
        .as_secs()
        / 86_400
}

/// The public surface as a lockfile for the server `id`, to be compared with what is served as
/// a pin is (lookup compares a pin with it the same way). A blob that does not read as a surface
/// gives an empty one: everything differs.
pub fn public_lock(public: &SurfaceBlob, served: &Served, id: &str) -> Vec<u8> {
    let parts = public.parts();
    let surface = Served {
        reported_name: served.reported_name.clone(),
        protocol_version: served.protocol_version.clone(),
        instructions: parts.instructions,
        tools: parts.tools,
        prompts: parts.prompts,
    };
    match approve(&surface.manifest(id), None) {
        Ok(Approval::Moved(l)) => l.to_bytes(),
        _ => Vec::new(),
    }
}
