//! The public log a user trusts, named once for every command that compares with it (`verify
//! --log`, the proxy, lookup): where it is, who must have signed its checkpoint (the log's key,
//! and witnesses with a quorum or a witness policy file), where what was verified is remembered,
//! how long opening it may take, and what a log that cannot be used means.
//!
//! [`PublicLog::open`] is the one way to read it: it returns a [`PublicRecord`], verified under
//! the whole policy before anything is asked of it, or why not within the deadline.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pinlog_core::exit::Failure;
use pinlog_core::files::read_setting;
use pinlog_log::fetch::{FetchOptions, LogAt};

use crate::checkpoint::Policy;
use crate::command::{pinned_policy, LogKeys};
use crate::outcome::{Location, Severity};
use crate::record::PublicRecord;
use crate::verify_log::{Options, State};
use crate::VerifyError;

/// How long opening the public log may take, by default: long enough for an incremental check
/// of a served log, short enough that a host that never answers does not hold a session up.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(5);

/// The file in the pinlog home naming the public log to use when `--log` is not given.
pub const SETTING: &str = "public-log";
/// Where the checkpoint of the log the setting names is kept, beside it.
const SETTING_STATE: &str = "public-log.state";
/// The largest setting read.
const MAX_SETTING: u64 = 64 << 10;

/// What a public log that cannot be used (unreachable, too slow, or failing verification) means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnUnavailable {
    /// Say so plainly on standard error and go on without it.
    #[default]
    Warn,
    /// Refuse: the session is blocked, the check fails.
    Block,
}

/// The public log, pinned.
#[derive(Debug, Clone)]
pub struct PublicLog {
    /// A log directory, or the http(s) URL serving one.
    pub at: String,
    /// The log's keys and the witnesses that must have cosigned.
    pub policy: Policy,
    /// Where the verified checkpoint is kept between runs (what the entry rules carry beside it,
    /// in `FILE.rules`): a later open checks only what was added.
    pub state: Option<PathBuf>,
    /// How long opening (fetching and verifying) may take in all.
    pub deadline: Duration,
    pub on_unavailable: OnUnavailable,
}

/// A public log being opened on a thread of its own, while the caller does something else.
pub struct Opening {
    answer: mpsc::Receiver<Result<PublicRecord<LogAt>, VerifyError>>,
    until: Instant,
    deadline: Duration,
}

impl Opening {
    /// The record, or why there is none; waits no later than the deadline set when opening began.
    /// A log still being read then is left to its thread, which ends on its own request timeouts.
    pub fn wait(self) -> Result<PublicRecord<LogAt>, VerifyError> {
        let left = self.until.saturating_duration_since(Instant::now());
        match self.answer.recv_timeout(left) {
            Ok(answer) => answer,
            Err(mpsc::RecvTimeoutError::Timeout) => Err(VerifyError::unreadable(
                Location::Checkpoint,
                format!(
                    "the log was not read and verified within {} (--log-deadline)",
                    humantime::format_duration(self.deadline)
                ),
            )),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(VerifyError::unreadable(
                Location::Checkpoint,
                "opening the log stopped without an answer",
            )),
        }
    }
}

impl PublicLog {
    /// Starts opening the log on a thread: [`Opening::wait`] gives the answer, within the
    /// deadline counted from now.
    pub fn start(&self) -> Opening {
        let (tx, answer) = mpsc::channel();
        let log = self.clone();
        std::thread::spawn(move || {
            // Nobody waiting any more is not an error: the answer came too late.
            let _ = tx.send(log.open_now());
        });
        Opening {
            answer,
            until: Instant::now() + self.deadline,
            deadline: self.deadline,
        }
    }

    /// Opens the log: verified under the whole policy, within the deadline.
    pub fn open(&self) -> Result<PublicRecord<LogAt>, VerifyError> {
        self.start().wait()
    }

    fn open_now(&self) -> Result<PublicRecord<LogAt>, VerifyError> {
        // No single request may outlast the whole deadline, nor be tried again past it.
        let fetch = FetchOptions {
            timeout: self.deadline.min(FetchOptions::default().timeout),
            ..FetchOptions::default()
        };
        let source = LogAt::parse(&self.at, fetch)
            .map_err(|e| VerifyError::unreadable(Location::Checkpoint, e))?;
        let options = Options {
            policy: self.policy.clone(),
            state: self.state.as_deref().map(State::at),
            generic: false,
        };
        PublicRecord::open(source, &options)
    }

    /// The public log the pinlog home's [`SETTING`] file names, if there is one. Its lines:
    /// `log DIR|URL` (one), `vkey VKEY` (one or more, unless a witness policy's `log` line
    /// holds the key), `witness VKEY` (any), `quorum K`, `witness-policy FILE` (relative to the
    /// home), `deadline DURATION`, `on-unavailable warn|block`; blank lines and lines starting
    /// `#` are skipped. Its state is kept in `public-log.state` beside it.
    pub fn from_home(home: &Path) -> Result<Option<PublicLog>, String> {
        let path = home.join(SETTING);
        let Some(text) = read_setting(&path, MAX_SETTING)? else {
            return Ok(None);
        };
        let at = |n: usize, why: &str| format!("{} line {n}: {why}", path.display());
        let mut log = None;
        let (mut vkey, mut witness) = (Vec::new(), Vec::new());
        let (mut quorum, mut witness_policy) = (None, None);
        let mut deadline = DEFAULT_DEADLINE;
        let mut on_unavailable = OnUnavailable::Warn;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let n = i + 1;
            let (word, value) = line
                .split_once(' ')
                .map_or((line, ""), |(w, v)| (w, v.trim()));
            let once = |set: bool| {
                if set {
                    Err(at(n, &format!("a second `{word}` line")))
                } else {
                    Ok(())
                }
            };
            match word {
                "log" => {
                    once(log.is_some())?;
                    log = Some(value.to_string());
                }
                "vkey" => vkey.push(value.to_string()),
                "witness" => witness.push(value.to_string()),
                "quorum" => {
                    once(quorum.is_some())?;
                    quorum = Some(
                        value
                            .parse()
                            .map_err(|_| at(n, "`quorum` takes a whole number"))?,
                    );
                }
                "witness-policy" => {
                    once(witness_policy.is_some())?;
                    witness_policy = Some(home.join(value));
                }
                "deadline" => {
                    deadline = humantime::parse_duration(value)
                        .map_err(|e| at(n, &format!("`deadline` takes a duration: {e}")))?;
                }
                "on-unavailable" => {
                    on_unavailable = match value {
                        "warn" => OnUnavailable::Warn,
                        "block" => OnUnavailable::Block,
                        _ => return Err(at(n, "`on-unavailable` is `warn` or `block`")),
                    };
                }
                _ => {
                    return Err(at(
                        n,
                        "a line is `log DIR|URL`, `vkey VKEY`, `witness VKEY`, `quorum K`, \
                         `witness-policy FILE`, `deadline DURATION` or `on-unavailable warn|block`",
                    ))
                }
            }
        }
        let log = log.ok_or_else(|| at(1, "no `log` line"))?;
        if vkey.is_empty() && witness_policy.is_none() {
            return Err(at(
                1,
                "no `vkey` line: the log's key must be pinned (or a `witness-policy` whose `log` \
                 line holds it)",
            ));
        }
        let policy = pinned_policy(&LogKeys {
            flags: "log-",
            vkey: &vkey,
            vkey_file: &[],
            witness: &witness,
            quorum,
            witness_policy: witness_policy.as_deref(),
        })
        .map_err(|f| format!("{}: {}", path.display(), f.message))?;
        Ok(Some(PublicLog {
            at: log,
            policy,
            state: Some(home.join(SETTING_STATE)),
            deadline,
            on_unavailable,
        }))
    }
}

/// Why a log was not used, in the words `verify-log` would print.
pub fn why_not(e: &VerifyError) -> String {
    match e.severity {
        Severity::Bad => format!("log BAD: {e}"),
        Severity::Unreadable => format!("it could not be read: {e}"),
    }
}

/// The failure a refused public log is, for a command asked to block on it: 1 for a log proven
/// bad, 4 for one that could not be read in time.
pub fn refused(e: &VerifyError) -> Failure {
    Failure::new(
        e.exit(),
        format!(
            "the public log could not be used ({}), and --on-public-unavailable block refuses to \
             go on without it",
            why_not(e)
        ),
    )
}
