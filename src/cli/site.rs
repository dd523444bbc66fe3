//! `pinlog site build` and `pinlog report month`.

use std::time::SystemTime;

use pinlog_site::build::{self, Options};
use pinlog_site::report;

use crate::io;
use crate::{ReportArgs, SiteArgs, SiteSource};
use pinlog_core::exit::{Exit, Failure};

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
