//! The clap definition of `verify-log`, shared by the two binaries that offer it (`pinlog` and
//! `pinlog-verify`). Built only with the `cli` feature; the command is [`crate::command`].

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::command::VerifyLogOptions;

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
