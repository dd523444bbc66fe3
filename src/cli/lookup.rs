//! `pinlog lookup [--log DIR --vkey VKEY] [--http ADDR]`. Exit codes: 0 when the client closed
//! the connection, 2 for a wrong command line (a malformed key, a non-loopback address, --log
//! without a key), 4 when the address cannot be bound or the streams fail.

use std::path::PathBuf;

use clap::Args;
use pinlog_core::exit::{Exit, Failure};
use pinlog_log::keyfile::pinned_keys;
use pinlog_lookup::history::LogConfig;
use pinlog_lookup::serve::{serve, LookupOptions};

#[derive(Args, Debug)]
pub struct LookupArgs {
    /// A local copy of the published log (checkpoint, tile/, blobs/): verified against the key
    /// before anything is answered from it
    #[arg(long, value_name = "DIR")]
    pub log: Option<PathBuf>,
    /// The log's public key, `name+hex8+base64`, pinned from a source you trust (never the copy
    /// shipped beside the data)
    #[arg(long, value_name = "VKEY", requires = "log")]
    pub vkey: Vec<String>,
    /// A file holding the log's public key (one per line; `#` starts a comment)
    #[arg(long, value_name = "FILE", requires = "log")]
    pub vkey_file: Vec<PathBuf>,
    /// Serve Streamable HTTP at this loopback address (PORT, or HOST:PORT with a loopback host)
    /// instead of stdio; only the public tools are offered there, never this machine's pins
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
}

/// The log to answer from, if one was given: its directory and pinned keys.
fn log_config(args: &LookupArgs) -> Result<Option<LogConfig>, Failure> {
    let Some(dir) = &args.log else {
        return Ok(None);
    };
    let mut keys = Vec::new();
    for pinned in pinned_keys("--vkey", &args.vkey, &args.vkey_file)? {
        if pinned.key.is_cosignature() {
            return Err(Failure::usage(format!(
                "{}: {} is a witness cosignature key, not a log key",
                pinned.from,
                pinned.key.name()
            )));
        }
        keys.push(pinned.key);
    }
    if keys.is_empty() {
        return Err(Failure::usage(
            "--log needs the log's public key, pinned from a source you trust: --vkey or \
             --vkey-file (docs/VERIFYING.md says where to get it)",
        ));
    }
    Ok(Some(LogConfig {
        dir: dir.clone(),
        keys,
    }))
}

/// `pinlog lookup`: serves until the client goes away.
pub fn lookup(args: LookupArgs) -> Result<Exit, Failure> {
    serve(LookupOptions {
        log: log_config(&args)?,
        http: args.http,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: LookupArgs,
    }

    fn parse(args: &[&str]) -> Result<LookupArgs, clap::Error> {
        Cli::try_parse_from(["lookup"].iter().chain(args)).map(|c| c.args)
    }

    #[test]
    fn a_log_needs_a_pinned_key_and_http_a_loopback_address() {
        assert!(parse(&["--vkey", "x"]).is_err(), "--vkey without --log");
        let no_key = parse(&["--log", "/nowhere"]).unwrap();
        assert_eq!(log_config(&no_key).unwrap_err().exit, Exit::Usage);
        let bad_key = parse(&["--log", "/nowhere", "--vkey", "not+a+key"]).unwrap();
        assert_eq!(log_config(&bad_key).unwrap_err().exit, Exit::Usage);
        let key = pinlog_log::note::SignerKey::generate("log.example/x")
            .unwrap()
            .verifier()
            .to_string();
        let ok = parse(&["--log", "/nowhere", "--vkey", &key]).unwrap();
        assert_eq!(log_config(&ok).unwrap().unwrap().keys.len(), 1);
        assert!(log_config(&parse(&[]).unwrap()).unwrap().is_none());
        // Refused before anything is bound.
        assert_eq!(
            lookup(parse(&["--http", "0.0.0.0:8787"]).unwrap())
                .unwrap_err()
                .exit,
            Exit::Usage
        );
    }
}
