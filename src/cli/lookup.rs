//! `pinlog lookup [--log DIR|URL --log-vkey VKEY] [--http ADDR]`. Exit codes: 0 when the client
//! closed the connection, 2 for a wrong command line (a malformed key, a non-loopback address,
//! --log without a key), 1 or 4 when `--on-public-unavailable block` finds the log bad or
//! unreadable, 4 when the address cannot be bound or the streams fail.

use clap::Args;
use pinlog_core::exit::{Exit, Failure};
use pinlog_lookup::safe::SiteUrl;
use pinlog_lookup::serve::{serve, LookupOptions};
use pinlog_proxy::store::Store;
use pinlog_verifier::cli::PublicLogArgs;

#[derive(Args, Debug)]
pub struct LookupArgs {
    /// The public log to answer from (without --log, the one the pinlog home's `public-log`
    /// setting names): verified under its pinned key and witnesses before anything is answered
    /// from it
    #[command(flatten)]
    pub public: PublicLogArgs,
    /// Serve Streamable HTTP at this loopback address (PORT, or HOST:PORT with a loopback host)
    /// instead of stdio; only the public tools are offered there, never this machine's pins
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// The base URL of the log's site (as `pinlog site build --base-url` was given it):
    /// pinlog_server_status then gives each server's page there
    #[arg(long, value_name = "URL", value_parser = SiteUrl::parse)]
    pub site_url: Option<SiteUrl>,
}

/// `pinlog lookup`: serves until the client goes away.
pub fn lookup(args: LookupArgs) -> Result<Exit, Failure> {
    let home = Store::home().ok();
    serve(LookupOptions {
        log: args.public.public_log_or_home(home.as_deref())?,
        http: args.http,
        site: args.site_url,
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
        let log_config = |a: &LookupArgs| a.public.public_log();
        let no_key = parse(&["--log", "/nowhere"]).unwrap();
        assert_eq!(log_config(&no_key).unwrap_err().exit, Exit::Usage);
        let bad_key = parse(&["--log", "/nowhere", "--vkey", "not+a+key"]).unwrap();
        assert_eq!(log_config(&bad_key).unwrap_err().exit, Exit::Usage);
        let key = pinlog_log::note::SignerKey::generate("log.example/x")
            .unwrap()
            .verifier()
            .to_string();
        let ok = parse(&["--log", "/nowhere", "--vkey", &key]).unwrap();
        assert_eq!(log_config(&ok).unwrap().unwrap().policy.log_keys.len(), 1);
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
