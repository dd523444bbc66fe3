//! The public log, for the proxy: verified before use, then asked, on first use and on a change,
//! whether what this machine is served is what the public log saw of the same server.
//!
//! The server is named by its public identity ([`PublicIdentity`]): a runner's package and
//! version, a locked package, or the HTTP endpoint. Each outcome is said in one of three ways:
//! **matches the public record**, **differs from the public record**, **not in the public
//! record**. A log that does not verify is never used: the proxy says so and pins as it would
//! without one.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use pinlog_core::files::read_bounded;
use pinlog_core::identity::PublicIdentity;
use pinlog_core::render::{quoted, safe};
use pinlog_gate::lock::{approve, Approval};
use pinlog_log::fetch::{FetchOptions, LogAt};
use pinlog_log::note::VerifierKey;
use pinlog_log::surface_blob::{self, SurfaceBlob};
use pinlog_verifier::checkpoint::Policy;
use pinlog_verifier::record::{Compared, Observed, PublicRecord};
use pinlog_verifier::verify_log::{Options, State};

use crate::check::Served;
use crate::session::{OnPublicMismatch, Public, PublicVerdict};
use crate::store::Store;

/// Where the public log is and how it is trusted.
#[derive(Debug, Clone)]
pub struct PublicLogOptions {
    /// A log directory, or the http(s) URL serving one.
    pub log: String,
    /// The log's key (or keys), pinned by the user.
    pub keys: Vec<VerifierKey>,
    /// Where the verified checkpoint is kept between runs (and the entry rules' memory beside
    /// it): a later start checks only what was added.
    pub state: Option<PathBuf>,
}

/// The file in the pinlog home naming the public log to use when `--log` is not given.
pub const SETTING: &str = "public-log";
/// Where the checkpoint of the log the setting names is kept, beside it.
const SETTING_STATE: &str = "public-log.state";
/// The largest setting read.
const MAX_SETTING: u64 = 64 << 10;

impl PublicLogOptions {
    /// The public log the pinlog home's [`SETTING`] file names, if there is one: lines `log
    /// DIR|URL` (one) and `vkey VKEY` (one or more); blank lines and lines starting `#` are
    /// skipped. Its state is kept in `public-log.state` beside it.
    pub fn from_home(home: &Path) -> Result<Option<PublicLogOptions>, String> {
        let path = home.join(SETTING);
        let bytes = match read_bounded(&path, MAX_SETTING) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let at = |n: usize, why: &str| format!("{} line {n}: {why}", path.display());
        let text = std::str::from_utf8(&bytes).map_err(|_| at(1, "not UTF-8"))?;
        let (mut log, mut keys) = (None, Vec::new());
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match line.split_once(' ') {
                Some(("log", value)) if log.is_none() => log = Some(value.trim().to_string()),
                Some(("log", _)) => return Err(at(i + 1, "a second `log` line")),
                Some(("vkey", value)) => keys.push(
                    VerifierKey::parse(value.trim())
                        .map_err(|e| at(i + 1, &format!("not a vkey: {e}")))?,
                ),
                _ => {
                    return Err(at(
                        i + 1,
                        "a line is `log DIR|URL` or `vkey NAME+HEX8+BASE64`",
                    ))
                }
            }
        }
        let log = log.ok_or_else(|| at(1, "no `log` line"))?;
        if keys.is_empty() {
            return Err(at(1, "no `vkey` line: the log's key must be pinned"));
        }
        Ok(Some(PublicLogOptions {
            log,
            keys,
            state: Some(home.join(SETTING_STATE)),
        }))
    }
}

/// The public log of `options` (else the one the pinlog home's setting names), verified, for the
/// server `identity` names; `None` without one, or when it does not verify: that is said, and the
/// proxy pins as without it.
pub fn open_public(
    options: Option<&PublicLogOptions>,
    on: OnPublicMismatch,
    identity: Option<PublicIdentity>,
) -> Option<(Box<dyn Public + Send>, OnPublicMismatch)> {
    let configured;
    let options = match options {
        Some(o) => o,
        None => {
            let home = Store::home().ok()?;
            configured = match PublicLogOptions::from_home(&home) {
                Ok(o) => o?,
                Err(why) => {
                    eprintln!("pinlog: {}; pinning as without the public log", safe(&why));
                    return None;
                }
            };
            &configured
        }
    };
    match PublicLog::open(options, identity) {
        Ok(log) => Some((Box::new(log), on)),
        Err(line) => {
            eprintln!("pinlog: {line}; pinning as without it");
            None
        }
    }
}

/// A verified public log, and who the server is in it.
pub struct PublicLog {
    record: PublicRecord<LogAt>,
    identity: Option<PublicIdentity>,
}

impl PublicLog {
    /// Verifies the log. `Err` says why it is not used, in a line safe to print.
    pub fn open(
        o: &PublicLogOptions,
        identity: Option<PublicIdentity>,
    ) -> Result<PublicLog, String> {
        let source =
            LogAt::parse(&o.log, FetchOptions::default()).map_err(|e| safe(&e).into_owned())?;
        let options = Options {
            policy: Policy {
                log_keys: o.keys.clone(),
                witnesses: Vec::new(),
                quorum: 0,
                witness_policy: None,
            },
            state: o.state.as_deref().map(State::at),
            generic: false,
        };
        let record = PublicRecord::open(source, &options).map_err(|e| {
            format!(
                "the public log {} does not verify ({}), so it is not used",
                quoted(&o.log, 200),
                safe(&e.to_string())
            )
        })?;
        Ok(PublicLog { record, identity })
    }

    fn origin(&self) -> String {
        safe(&self.record.checkpoint().origin).into_owned()
    }
}

impl Public for PublicLog {
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
        let origin = self.origin();
        let outcome =
            self.record
                .compare(&identity.id, identity.version.as_deref(), &blob.surface());
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
                     surface; either this machine's configuration changes the surface, or this \
                     client is served something the public was not",
                    o.index,
                    observed_version(&o)
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
                return (
                    vec![format!(
                        "the public record could not be read ({}); {who} was not compared",
                        safe(&e.to_string())
                    )],
                    None,
                )
            }
        };
        (Vec::new(), Some(verdict))
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
