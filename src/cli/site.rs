//! `pinlog site build` and `pinlog report month`.

use std::path::PathBuf;
use std::time::SystemTime;

use clap::{Args, Subcommand};
use pinlog_core::exit::{Exit, Failure};
use pinlog_site::build::{self, Options};
use pinlog_site::report;

use crate::io;

#[derive(Subcommand)]
pub enum SiteCommand {
    /// Render every page: the index, a page, badge and feed per server, monthly reports, the
    /// log's page with its files and an inclusion proof per entry
    ///
    /// Only entries covered by the published checkpoint are shown; the store's entries must hash
    /// to its root. Pages whose data did not change since the last build are not rendered again,
    /// and files whose bytes did not change are not written. See docs/SITE.md.
    Build(SiteArgs),
}

#[derive(Subcommand)]
pub enum ReportCommand {
    /// The monthly drift report as JSON: totals of the month's changes, never per named server
    Month(ReportArgs),
}

#[derive(Args)]
pub struct SiteSource {
    /// The SQLite store
    #[arg(long, value_name = "FILE", default_value = "data/log.db")]
    pub db: PathBuf,
    /// The published log directory (as `pinlog log publish` or `crawl --publish` wrote it)
    #[arg(long, value_name = "DIR")]
    pub log: PathBuf,
    /// The log's verifier key: the checkpoint must be signed by it, and the log page shows it
    #[arg(long, value_name = "VKEY", conflicts_with = "vkey_file")]
    pub vkey: Option<String>,
    /// A file holding the verifier key
    #[arg(long, value_name = "FILE")]
    pub vkey_file: Option<PathBuf>,
    /// The time to compute badges and reports at (RFC 3339; default: now)
    #[arg(long, value_name = "RFC3339")]
    pub now: Option<String>,
}

#[derive(Args)]
pub struct SiteArgs {
    #[command(flatten)]
    pub source: SiteSource,
    /// Where to write the site
    #[arg(long, value_name = "DIR", default_value = "public")]
    pub out: PathBuf,
    /// Where the site is served, for the links in feeds and badge snippets
    #[arg(long, value_name = "URL", default_value = "https://pinlog.local", value_parser = parse_base_url)]
    pub base_url: String,
}

#[derive(Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub source: SiteSource,
    /// The month, YYYY-MM
    #[arg(long, value_name = "YYYY-MM")]
    pub month: String,
    /// Write to this file instead of standard output
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// An absolute http(s) URL: feeds need absolute ids and links.
fn parse_base_url(s: &str) -> Result<String, String> {
    let rest = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"));
    match rest {
        Some(r)
            if !r.is_empty() && !r.starts_with('/') && s.bytes().all(|b| b.is_ascii_graphic()) =>
        {
            Ok(s.to_string())
        }
        _ => Err("the base URL must be absolute, http:// or https://, without spaces".into()),
    }
}

impl SiteSource {
    fn vkey(&self) -> Result<Option<String>, Failure> {
        match (&self.vkey, &self.vkey_file) {
            (Some(v), _) => Ok(Some(v.trim().to_string())),
            (None, Some(f)) => std::fs::read_to_string(f)
                .map(|t| Some(t.trim().to_string()))
                .map_err(|e| Failure::unreadable(format!("cannot read {}: {e}", f.display()))),
            (None, None) => Ok(None),
        }
    }

    fn now(&self) -> Result<SystemTime, Failure> {
        match &self.now {
            None => Ok(SystemTime::now()),
            Some(t) => humantime::parse_rfc3339(t)
                .map_err(|e| Failure::usage(format!("--now {t:?} is not an RFC 3339 time: {e}"))),
        }
    }
}

pub fn build(args: SiteArgs) -> Result<Exit, Failure> {
    let options = Options {
        db: args.source.db.clone(),
        log: args.source.log.clone(),
        out: args.out.clone(),
        now: args.source.now()?,
        base_url: args.base_url.clone(),
        vkey: args.source.vkey()?,
    };
    let b = build::build(&options).map_err(|e| Failure::unreadable(e.to_string()))?;
    println!(
        "site built in {}: {} servers ({} rendered), {} entries, {} files written ({} new proofs)",
        args.out.display(),
        b.servers,
        b.rendered,
        b.entries,
        b.written,
        b.proofs_written
    );
    Ok(Exit::Ok)
}

pub fn report(args: ReportArgs) -> Result<Exit, Failure> {
    let vkey = args.source.vkey()?;
    let r = report::month_report(
        &args.source.db,
        &args.source.log,
        vkey.as_deref(),
        &args.month,
        args.source.now()?,
    )
    .map_err(|e| match e {
        pinlog_site::model::ModelError::Log(m) if m.contains("YYYY-MM") => Failure::usage(m),
        other => Failure::unreadable(other.to_string()),
    })?;
    let text = format!("{}\n", r.to_json());
    match &args.output {
        Some(path) => io::write_atomic(path, text.as_bytes())?,
        None => print!("{text}"),
    }
    Ok(Exit::Ok)
}
