//! The clap definition of `verify-log`, shared by the two binaries that offer it (`pinlog` and
//! `pinlog-verify`). Built only with the `cli` feature; the command is [`crate::command`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, ValueEnum};
use pinlog_core::exit::Failure;

use crate::command::{pinned_policy, LogKeys, VerifyLogOptions};
use crate::public_log::{OnUnavailable, PublicLog, DEFAULT_DEADLINE};

/// The keys a log is verified against: its own, and its witnesses'. `verify-log` and `log
/// mirror` take them alike.
#[derive(Args, Debug)]
pub struct LogKeyArgs {
    /// The log's public key, `name+hex8+base64`, pinned from a source you trust (never the copy
    /// shipped beside the data)
    #[arg(long, value_name = "VKEY")]
    pub vkey: Vec<String>,
    /// A file holding the log's public key (one per line; `#` starts a comment)
    #[arg(long, value_name = "FILE")]
    pub vkey_file: Vec<PathBuf>,
    /// A witness's cosignature key (tlog-cosignature/v1); repeat for each witness
    #[arg(long, value_name = "VKEY")]
    pub witness: Vec<String>,
    /// How many of the witnesses must have cosigned [default: all of them]
    #[arg(long, value_name = "K")]
    pub quorum: Option<usize>,
    /// A witness policy file (C2SP tlog-policy: `log`, `witness NAME KEY [URL]`, `group`,
    /// `quorum` lines; docs/WITNESSING.md) whose quorum the checkpoint's cosignatures must meet;
    /// its `log` vkeys stand for --vkey when none is given
    #[arg(long, value_name = "FILE")]
    pub witness_policy: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct VerifyLogArgs {
    /// The log: a directory holding `checkpoint`, `tile/`, `blobs/`, or the http(s) URL that
    /// serves them
    #[arg(value_name = "DIR|URL", required_unless_present = "proof")]
    pub log: Option<String>,
    #[command(flatten)]
    pub keys: LogKeyArgs,
    /// Remember the verified checkpoint in FILE, and prove the log consistent with the one
    /// remembered there (a rollback or a fork fails)
    #[arg(long, value_name = "FILE", conflicts_with = "proof")]
    pub state: Option<PathBuf>,
    /// For a URL: keep the fetched files in DIR and read them from there next time (each is
    /// verified again all the same)
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// For a URL: how long one request may take before it is tried again
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
    /// Check only the tlog-tiles layers, for a log that is not pinlog's
    #[arg(long)]
    pub generic: bool,
    /// Check one c2sp.org/tlog-proof@v1 receipt instead of the whole log
    #[arg(long, value_name = "FILE")]
    pub proof: Option<PathBuf>,
    /// No progress bar
    #[arg(long, short)]
    pub quiet: bool,
}

impl VerifyLogArgs {
    pub fn options(&self) -> VerifyLogOptions {
        VerifyLogOptions {
            log: self.log.clone(),
            cache: self.cache.clone(),
            timeout: self.timeout,
            vkey: self.keys.vkey.clone(),
            vkey_file: self.keys.vkey_file.clone(),
            witness: self.keys.witness.clone(),
            quorum: self.keys.quorum,
            witness_policy: self.keys.witness_policy.clone(),
            state: self.state.clone(),
            generic: self.generic,
            proof: self.proof.clone(),
            quiet: self.quiet,
        }
    }
}

/// The public log a command compares with, named the same way by `verify`, `proxy` and `lookup`:
/// where it is, and who must have signed it.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "The public log")]
pub struct PublicLogArgs {
    /// The public log: a directory (checkpoint, tile/, blobs/) or the http(s) URL serving one,
    /// verified before use
    #[arg(long, value_name = "DIR|URL")]
    pub log: Option<String>,
    /// The public log's key, `name+hex8+base64`, pinned from a source you trust
    #[arg(long, value_name = "VKEY", requires = "log", alias = "vkey")]
    pub log_vkey: Vec<String>,
    /// A file holding the public log's key (one per line; `#` starts a comment)
    #[arg(long, value_name = "FILE", requires = "log", alias = "vkey-file")]
    pub log_vkey_file: Vec<PathBuf>,
    /// A witness's cosignature key the log's checkpoint must carry; repeat for each witness
    #[arg(long, value_name = "VKEY", requires = "log")]
    pub log_witness: Vec<String>,
    /// How many of the --log-witness keys must have cosigned [default: all of them]
    #[arg(long, value_name = "K", requires = "log")]
    pub log_quorum: Option<usize>,
    /// A witness policy file (docs/WITNESSING.md) whose quorum the log's checkpoint must meet;
    /// its `log` vkeys stand for --log-vkey when none is given
    #[arg(long, value_name = "FILE", requires = "log")]
    pub log_witness_policy: Option<PathBuf>,
    /// Remember the verified checkpoint in FILE (and what the checks carry in FILE.rules): the
    /// next run proves the log extends it and reads only what was added
    #[arg(long, value_name = "FILE", requires = "log")]
    pub log_state: Option<PathBuf>,
    /// How long fetching and verifying the public log may take in all [default: 5s]
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub log_deadline: Option<Duration>,
    /// What a public log that cannot be fetched in time or does not verify means: `warn` (the
    /// default) says so on standard error and goes on without it, `block` refuses
    #[arg(long, value_enum, value_name = "WHAT")]
    pub on_public_unavailable: Option<UnavailableMode>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum UnavailableMode {
    /// Say so, and go on without the public log
    Warn,
    /// Refuse to go on without it
    Block,
}

impl PublicLogArgs {
    /// The public log the flags name, checked before anything is read (a wrong key or quorum
    /// is a usage error); `None` without `--log`.
    pub fn public_log(&self) -> Result<Option<PublicLog>, Failure> {
        let Some(log) = &self.log else {
            return Ok(None);
        };
        let policy = pinned_policy(&LogKeys {
            flags: "log-",
            vkey: &self.log_vkey,
            vkey_file: &self.log_vkey_file,
            witness: &self.log_witness,
            quorum: self.log_quorum,
            witness_policy: self.log_witness_policy.as_deref(),
        })?;
        // A malformed URL is a wrong command line, said before anything is read.
        pinlog_log::fetch::LogAt::parse(log, Default::default())
            .map_err(|e| Failure::usage(format!("--log {e}")))?;
        Ok(Some(self.overriding(PublicLog {
            at: log.clone(),
            policy,
            state: self.log_state.clone(),
            deadline: DEFAULT_DEADLINE,
            on_unavailable: OnUnavailable::Warn,
        })))
    }

    /// The public log the flags name, else the one the pinlog home's setting names (its
    /// deadline and what an unavailable log means overridden by the flags given); `Err` for a
    /// setting that breaks its rules, naming its line.
    pub fn public_log_or_home(&self, home: Option<&Path>) -> Result<Option<PublicLog>, Failure> {
        if self.log.is_some() {
            return self.public_log();
        }
        let Some(home) = home else {
            return Ok(None);
        };
        match PublicLog::from_home(home) {
            Ok(log) => Ok(log.map(|l| self.overriding(l))),
            Err(why) => Err(Failure::unreadable(why)),
        }
    }

    fn overriding(&self, mut log: PublicLog) -> PublicLog {
        if let Some(d) = self.log_deadline {
            log.deadline = d;
        }
        if let Some(m) = self.on_public_unavailable {
            log.on_unavailable = match m {
                UnavailableMode::Warn => OnUnavailable::Warn,
                UnavailableMode::Block => OnUnavailable::Block,
            };
        }
        log
    }
}
