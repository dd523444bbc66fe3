//! One crawl: discover, drop the opted-out and the recently seen, look at the rest with bounded
//! concurrency, and append to the log as each look comes back. Every look is committed on its
//! own, so a crawl killed part-way loses nothing already committed and the next run goes on with
//! the servers not yet looked at.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, SystemTime};

use pinlog_core::json::{self, Limits};
use pinlog_core::ServerId;
use pinlog_log::entry::{Previous, Probe, Timestamp};
use pinlog_log::entry_builder::EntryBuilder;
use pinlog_log::store::{Store, StoreError};

use crate::candidate::Candidate;
use crate::discover::{self, Discovery, SourceReport, Sources};
use crate::look::{Install, Look, Looker};
use crate::optout::OptOut;
use crate::outcome::{LookFailure, Reason};
use crate::queue::QueueError;
use crate::records::{LookRow, Records};
use pinlog_log::surface_blob::{self, SurfaceBlob};

/// Everything one run needs.
#[derive(Debug, Clone)]
pub struct Crawl {
    pub db: PathBuf,
    /// The log's name, for a store created by this run.
    pub origin: String,
    pub sources: Sources,
    pub optout: PathBuf,
    /// At most this many servers looked at in this run.
    pub limit: Option<usize>,
    pub concurrency: usize,
    /// Look at every planned server, even one looked at today (after an incident; benchmarks).
    pub relook: bool,
    pub looker: Looker,
}

/// How a look ended, as the summary and the store count it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    New(u64),
    Changed(u64),
    Unchanged,
    Failed(LookFailure),
}

impl Verdict {
    pub fn token(&self) -> &'static str {
        match self {
            Verdict::New(_) => "new",
            Verdict::Changed(_) => "changed",
            Verdict::Unchanged => "unchanged",
            Verdict::Failed(f) => f.reason.as_str(),
        }
    }
}

/// One server's result, as shown while the crawl runs.
#[derive(Debug, Clone)]
pub struct Reported {
    pub server: ServerId,
    pub verdict: Verdict,
    pub version: Option<String>,
    pub labels: Vec<String>,
    /// How the package came to be there, with an install cache.
    pub install: Option<Install>,
    /// What the look's row says beside its outcome, safe to print.
    pub detail: Option<String>,
    pub took: Duration,
}

/// What the run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub run: i64,
    pub started: String,
    pub finished: String,
    pub candidates: usize,
    pub opted_out: usize,
    pub recent: usize,
    pub beyond_limit: usize,
    pub looked: usize,
    pub ok: usize,
    pub new: usize,
    pub changed: usize,
    pub unchanged: usize,
    pub failed: BTreeMap<&'static str, usize>,
    pub log_size: u64,
    pub sources: Vec<SourceReport>,
}

impl Summary {
    /// Counts one look's verdict.
    pub fn count(&mut self, verdict: &Verdict) {
        self.looked += 1;
        match verdict {
            Verdict::New(_) => self.new += 1,
            Verdict::Changed(_) => self.changed += 1,
            Verdict::Unchanged => self.unchanged += 1,
            Verdict::Failed(f) => *self.failed.entry(f.reason.as_str()).or_default() += 1,
        }
    }

    /// The summary as canonical JSON, as stored in `crawl_runs.summary`.
    pub fn to_json(&self) -> String {
        let mut o = Vec::new();
        let num = |o: &mut Vec<u8>, k: &str, v: u64| {
            o.extend_from_slice(format!(",\"{k}\":{v}").as_bytes());
        };
        o.extend_from_slice(format!("{{\"beyond_limit\":{}", self.beyond_limit).as_bytes());
        num(&mut o, "candidates", self.candidates as u64);
        num(&mut o, "changed", self.changed as u64);
        o.extend_from_slice(b",\"failed\":{");
        for (i, (k, v)) in self.failed.iter().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            json::write_string(&mut o, k);
            o.extend_from_slice(format!(":{v}").as_bytes());
        }
        o.push(b'}');
        o.extend_from_slice(b",\"finished\":");
        json::write_string(&mut o, &self.finished);
        num(&mut o, "log_size", self.log_size);
        num(&mut o, "looked", self.looked as u64);
        num(&mut o, "new", self.new as u64);
        num(&mut o, "ok", self.ok as u64);
        num(&mut o, "opted_out", self.opted_out as u64);
        num(&mut o, "recent", self.recent as u64);
        num(&mut o, "run", self.run as u64);
        o.extend_from_slice(b",\"sources\":[");
        for (i, s) in self.sources.iter().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            o.extend_from_slice(format!("{{\"found\":{},\"name\":", s.found).as_bytes());
            json::write_string(&mut o, s.source.as_str());
            o.extend_from_slice(b",\"problems\":");
            json::write_strings(&mut o, s.problems.iter().map(String::as_str));
            o.extend_from_slice(format!(",\"skipped\":{}}}", s.skipped).as_bytes());
        }
        o.extend_from_slice(b"],\"started\":");
        json::write_string(&mut o, &self.started);
        num(&mut o, "unchanged", self.unchanged as u64);
        o.push(b'}');
        String::from_utf8(o).expect("UTF-8 JSON")
    }
}

/// Told about the run as it goes (a progress bar, or log lines).
pub trait Observer {
    /// Discovery is done; `planned` servers will be looked at.
    fn planned(&mut self, discovery: &Discovery, planned: usize);
    fn looked(&mut self, result: &Reported);
    /// Something that is not a look: a queued run resumed, a message refused, the queue's
    /// server out of reach.
    fn note(&mut self, _line: &str) {}
}

#[derive(Debug)]
pub enum CrawlError {
    Store(StoreError),
    Records(rusqlite::Error),
    OptOut(String),
    Queue(QueueError),
}

impl std::fmt::Display for CrawlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CrawlError::Store(e) => e.fmt(f),
            CrawlError::Records(e) => write!(f, "store: {e}"),
            CrawlError::OptOut(m) => f.write_str(m),
            CrawlError::Queue(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for CrawlError {}

impl From<StoreError> for CrawlError {
    fn from(e: StoreError) -> Self {
        CrawlError::Store(e)
    }
}

impl From<QueueError> for CrawlError {
    fn from(e: QueueError) -> Self {
        CrawlError::Queue(e)
    }
}

impl From<rusqlite::Error> for CrawlError {
    fn from(e: rusqlite::Error) -> Self {
        CrawlError::Records(e)
    }
}

/// Opens the store at `db`, creating it for `origin` if there is none.
pub fn open_store(db: &std::path::Path, origin: &str) -> Result<Store, StoreError> {
    if db.exists() {
        Store::open(db)
    } else {
        Store::create(db, origin)
    }
}

/// Reads the opt-out list: a list that is missing or unreadable stops the run before any probe.
pub fn read_optout(path: &Path) -> Result<OptOut, CrawlError> {
    match std::fs::read(path) {
        Ok(b) => Ok(OptOut::parse(&String::from_utf8(b).map_err(|_| {
            CrawlError::OptOut(format!(
                "{} is not UTF-8; fix it before crawling",
                path.display()
            ))
        })?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(CrawlError::OptOut(format!(
            "there is no opt-out list at {}; give the project's with --optout (an empty file \
             if there is none), so that no server that asked out is probed by mistake",
            path.display()
        ))),
        Err(e) => Err(CrawlError::OptOut(format!(
            "cannot read the opt-out list {}: {e}; nothing is probed without it",
            path.display()
        ))),
    }
}

/// What a run will look at.
pub(crate) struct Planned {
    pub discovery: Discovery,
    /// In the order they are due.
    pub servers: Vec<Candidate>,
}

/// Which of the servers a run may look at it takes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Due {
    /// At most this many.
    pub limit: Option<usize>,
    /// Those looked at within a day too.
    pub relook: bool,
}

/// Discovers, records the opted-out, leaves out the servers looked at within a day (unless
/// `due.relook`), and keeps at most `due.limit` of the rest in the order they are due; counts
/// each step in `summary`.
pub(crate) fn plan(
    sources: &Sources,
    optout: &OptOut,
    optout_path: &Path,
    due: Due,
    store: &Store,
    records: &mut Records,
    summary: &mut Summary,
) -> Result<Planned, CrawlError> {
    let discovery = discover::discover(sources);
    summary.candidates = discovery.candidates.len();
    summary.sources = discovery.reports.clone();

    let now = SystemTime::now();
    let mut fresh: Vec<(Option<String>, Candidate)> = Vec::new();
    for cand in &discovery.candidates {
        if optout.covers(cand) {
            summary.opted_out += 1;
            records.record(&LookRow {
                run: summary.run,
                server: cand.id.to_string(),
                at: pinlog_core::clock::now(),
                outcome: Reason::OptOut.as_str().into(),
                exit_code: None,
                detail: Some(format!("named in {}", optout_path.display())),
                version: None,
                registry_digest: None,
                env_wanted: None,
                entry_index: None,
                took_ms: 0,
                caps: None,
                install: None,
                look_id: None,
                python: None,
            })?;
            continue;
        }
        let last = store.liveness(&cand.id)?.and_then(|l| l.last_probe);
        if !due.relook && last.as_deref().is_some_and(|t| looked_today(t, now)) {
            summary.recent += 1;
            continue;
        }
        fresh.push((last, cand.clone()));
    }
    let limit = due.limit.unwrap_or(usize::MAX);
    summary.beyond_limit = fresh.len().saturating_sub(limit);
    Ok(Planned {
        servers: due_order(fresh, limit),
        discovery,
    })
}

/// Runs one crawl.
pub fn crawl(c: &Crawl, observer: &mut dyn Observer) -> Result<Summary, CrawlError> {
    // The opt-out list first: if it cannot be read, nothing may be probed.
    let optout = read_optout(&c.optout)?;
    let mut store = open_store(&c.db, &c.origin)?;
    let mut records = Records::open(&c.db)?;
    let mut summary = Summary {
        started: pinlog_core::clock::now(),
        ..Summary::default()
    };
    summary.run = records.start_run(&summary.started)?;
    let planned = plan(
        &c.sources,
        &optout,
        &c.optout,
        Due {
            limit: c.limit,
            relook: c.relook,
        },
        &store,
        &mut records,
        &mut summary,
    )?;
    observer.planned(&planned.discovery, planned.servers.len());

    let queue = Mutex::new(planned.servers.into_iter().collect::<VecDeque<_>>());
    let (tx, rx) = mpsc::channel::<(Candidate, Look)>();
    let workers = c.concurrency.max(1);
    std::thread::scope(|scope| -> Result<(), CrawlError> {
        for slot in 0..workers {
            let tx = tx.clone();
            let queue = &queue;
            let looker = &c.looker;
            scope.spawn(move || loop {
                let Some(cand) = queue.lock().expect("queue").pop_front() else {
                    break;
                };
                let look = look_guarded(looker, &cand, slot);
                if tx.send((cand, look)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (cand, look) in rx {
            let conditions = Conditions::of(&c.looker, &look);
            let reported = settle(
                &mut store,
                &mut records,
                summary.run,
                &cand,
                look,
                &conditions,
                None,
            )?;
            summary.count(&reported.verdict);
            observer.looked(&reported);
        }
        Ok(())
    })?;
    summary.ok = summary.new + summary.changed + summary.unchanged;
    summary.log_size = store.size()?;
    summary.finished = pinlog_core::clock::now();
    records.finish_run(summary.run, &summary.finished, &summary.to_json())?;
    Ok(summary)
}

/// One look, in which a bug met on one server's answer is that server's `internal-error` and
/// does not end the run, the daemon or the worker.
pub fn look_guarded(looker: &Looker, cand: &Candidate, slot: usize) -> Look {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| looker.look(cand, slot)))
        .unwrap_or_else(|_| {
            Look::failed(LookFailure::new(
                Reason::Internal,
                "the crawler failed while looking at this server (a bug: please report it)",
            ))
        })
}

/// What an entry's probe conditions say of the crawler that looked: its version, the protocol
/// revision it asked for, and what the server ran in. A worker's look carries its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conditions {
    pub crawler: String,
    pub asked: String,
    pub sandbox: String,
}

impl Conditions {
    pub fn of(looker: &Looker, look: &Look) -> Conditions {
        Conditions {
            crawler: crawler_version(),
            asked: looker
                .options
                .revision
                .map_or("auto", |r| r.as_str())
                .to_string(),
            sandbox: match look.transport {
                "stdio" => looker.isolation.as_ref().map_or("none", |i| i.name()),
                _ => "ssrf-guard",
            }
            .to_string(),
        }
    }
}

/// This crawler, as entries name it.
pub fn crawler_version() -> String {
    format!("pinlog/{}", env!("CARGO_PKG_VERSION"))
}

/// Two looks at one server are at least this far apart.
const MIN_GAP: Duration = Duration::from_secs(12 * 3600);

/// Whether a server last looked at `t` was looked at "today": on the same UTC day as `now`, or
/// less than [`MIN_GAP`] ago. A daily schedule thus looks at every server every day, however long
/// each run takes, and never twice in one day.
fn looked_today(t: &str, now: SystemTime) -> bool {
    let Ok(then) = humantime::parse_rfc3339(t) else {
        // A time this crawler did not write: look again rather than never.
        return false;
    };
    let today = humantime::format_rfc3339_seconds(now).to_string();
    // A look recorded in the future (a clock that went back since) counts as recent.
    let recent = now.duration_since(then).map_or(true, |age| age < MIN_GAP);
    recent || t.get(..10) == today.get(..10)
}

/// The servers to look at, at most `limit`: never-seen and longest-unseen servers taken in turn,
/// so that a stream of new packages cannot keep known servers from being looked at again.
fn due_order(fresh: Vec<(Option<String>, Candidate)>, limit: usize) -> Vec<Candidate> {
    let (mut seen, unseen): (Vec<_>, Vec<_>) =
        fresh.into_iter().partition(|(last, _)| last.is_some());
    seen.sort_by(|a, b| a.0.cmp(&b.0));
    let mut seen = seen.into_iter().map(|(_, c)| c);
    let mut unseen = unseen.into_iter().map(|(_, c)| c);
    let mut out = Vec::new();
    while out.len() < limit {
        match (unseen.next(), seen.next()) {
            (None, None) => break,
            (a, b) => out.extend(a.into_iter().chain(b).take(limit - out.len())),
        }
    }
    out
}

/// Writes what one look found: an entry when the surface is new or moved, liveness always, and
/// the look's row; a look of the queue carries its id, by which it is recorded once.
pub(crate) fn settle(
    store: &mut Store,
    records: &mut Records,
    run: i64,
    cand: &Candidate,
    look: Look,
    conditions: &Conditions,
    look_id: Option<&str>,
) -> Result<Reported, CrawlError> {
    let mut at = pinlog_core::clock::now();
    let mut ts = Timestamp::parse(&at).expect("now() writes the entry time format");
    // A clock stepped back must not make the entry unappendable: time in the log never goes back.
    if let Some(last) = store.last_observed_at()? {
        if last > ts {
            at = last.to_string();
            ts = last;
        }
    }
    let mut labels = Vec::new();
    let verdict = match look.outcome.as_ref().map_err(Clone::clone).and_then(|s| {
        guarded(|| {
            surface_blob::build(s.instructions.as_deref(), &s.prompts, &s.tools)
                .map_err(LookFailure::from_blob)
        })
        .map(|b| (s, b))
    }) {
        Err(f) => Verdict::Failed(f),
        Ok((surface, blob)) => {
            let latest = store.latest(&cand.id)?;
            match latest {
                Some(l) if l.surface == blob.surface() => Verdict::Unchanged,
                _ => {
                    let old = latest.map(|l| store.blob(&l.blob)).transpose()?.flatten();
                    let computed = guarded(|| Ok(change_labels(old.as_deref(), &blob)));
                    labels = computed.clone().unwrap_or_default();
                    let entry = EntryBuilder {
                        observed_at: ts.clone(),
                        server: cand.id.clone(),
                        surface: &blob,
                        previous: latest.map(|l| Previous {
                            index: l.index,
                            surface: l.surface,
                        }),
                        labels: labels.clone(),
                        probe: Probe {
                            crawler: conditions.crawler.clone(),
                            package_version: look.version.clone(),
                            protocol_asked: conditions.asked.clone(),
                            protocol_negotiated: surface.revision.as_str().to_string(),
                            transport: look.transport.to_string(),
                            sandbox: conditions.sandbox.clone(),
                            env_supplied: look.env_supplied.clone(),
                            env_placeholders: look.env_placeholders.clone(),
                            arg_placeholders: look.arg_placeholders.clone(),
                        },
                    };
                    let appended = computed.map(|_| {
                        entry
                            .to_bytes()
                            .map_err(StoreError::from)
                            .and_then(|bytes| store.append(&bytes, Some(blob.bytes())))
                    });
                    match appended {
                        Err(f) => Verdict::Failed(f),
                        Ok(Ok(index)) if latest.is_some() => Verdict::Changed(index),
                        Ok(Ok(index)) => Verdict::New(index),
                        Ok(Err(StoreError::Entry(e))) => {
                            Verdict::Failed(LookFailure::new(Reason::Refused, e.to_string()))
                        }
                        Ok(Err(e)) => return Err(e.into()),
                    }
                }
            }
        }
    };
    match &verdict {
        Verdict::Failed(f) => store.record_probe(&cand.id, &ts, Err(f.reason.as_str()))?,
        Verdict::Unchanged => store.record_probe(&cand.id, &ts, Ok(()))?,
        // The append updated liveness in the same transaction.
        Verdict::New(_) | Verdict::Changed(_) => {}
    }
    // What else the look did to read the server is said in its detail, whatever came of it.
    let notes = look.notes.join("; ");
    let (detail, exit_code) = match &verdict {
        Verdict::Failed(f) if notes.is_empty() => (Some(f.detail.clone()), f.exit_code),
        Verdict::Failed(f) => (Some(format!("{}; {notes}", f.detail)), f.exit_code),
        _ => ((!notes.is_empty()).then_some(notes), None),
    };
    records.record(&LookRow {
        run,
        server: cand.id.to_string(),
        at,
        outcome: verdict.token().to_string(),
        exit_code,
        detail: detail.clone(),
        version: look.version.clone(),
        registry_digest: look.registry_digest.clone(),
        env_wanted: (!look.env_wanted.is_empty()).then(|| look.env_wanted.join(",")),
        entry_index: match verdict {
            Verdict::New(i) | Verdict::Changed(i) => Some(i),
            _ => None,
        },
        took_ms: look.took.as_millis() as u64,
        caps: look.caps.map(|c| c.to_string()),
        install: look.install.as_ref().map(Install::to_string),
        look_id: look_id.map(str::to_string),
        python: look.python.clone(),
    })?;
    Ok(Reported {
        server: cand.id.clone(),
        verdict,
        version: look.version,
        labels,
        install: look.install,
        detail,
        took: look.took,
    })
}

/// `f`'s result, or an `internal-error` failure if it panicked: a bug met on one server's
/// surface is recorded against that server, and the run goes on.
fn guarded<T>(f: impl FnOnce() -> Result<T, LookFailure>) -> Result<T, LookFailure> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(LookFailure::new(
            Reason::Internal,
            "the crawler failed on this server's surface (a bug: please report it)",
        ))
    })
}

/// The change labels of a new surface against the one before it (none for a new server).
fn change_labels(old: Option<&[u8]>, new: &SurfaceBlob) -> Vec<String> {
    fn read(b: &[u8]) -> Option<json::Value<'_>> {
        json::parse(b, Limits::default()).ok()
    }
    let new_value = read(new.bytes());
    let old_value = old.and_then(read);
    let Some(new_value) = new_value else {
        return Vec::new();
    };
    let mut labels: Vec<String> =
        pinlog_core::labels::surface_labels(old_value.as_ref(), &new_value)
            .into_iter()
            .map(|l| l.as_str().to_string())
            .collect();
    labels.sort();
    labels.dedup();
    labels
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::{Launch, SourceKind};

    fn at(t: &str) -> SystemTime {
        humantime::parse_rfc3339(t).unwrap()
    }

    #[test]
    fn a_server_is_looked_at_once_a_day_and_never_twice_within_twelve_hours() {
        let now = at("2026-11-30T09:00:00Z");
        assert!(looked_today("2026-11-30T00:00:01Z", now), "same day");
        assert!(
            looked_today("2026-11-29T22:00:00Z", now),
            "eleven hours ago"
        );
        assert!(
            !looked_today("2026-11-29T20:59:59Z", now),
            "yesterday, over twelve hours ago"
        );
        // A daily run at 03:00 that reached the server at 03:40 yesterday looks again today.
        assert!(!looked_today(
            "2026-11-29T03:40:00Z",
            at("2026-11-30T03:00:00Z")
        ));
        assert!(!looked_today("not a time", now));
    }

    #[test]
    fn the_limit_takes_new_and_longest_unseen_servers_in_turn() {
        let c = |n: &str| {
            Candidate::new(
                Launch::Npm {
                    name: n.into(),
                    version: None,
                },
                SourceKind::Npm,
            )
            .unwrap()
        };
        let fresh = vec![
            (None, c("new-a")),
            (Some("2026-11-20T00:00:00Z".to_string()), c("seen-late")),
            (None, c("new-b")),
            (Some("2026-11-01T00:00:00Z".to_string()), c("seen-early")),
            (None, c("new-c")),
        ];
        let names = |v: Vec<Candidate>| {
            v.into_iter()
                .map(|c| c.id.name().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(due_order(fresh.clone(), 3)),
            ["new-a", "seen-early", "new-b"]
        );
        assert_eq!(
            names(due_order(fresh, usize::MAX)),
            ["new-a", "seen-early", "new-b", "seen-late", "new-c"]
        );
    }
}
