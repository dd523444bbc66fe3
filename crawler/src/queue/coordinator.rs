//! The coordinator: plans a run exactly as the single process does (discovery, opt-out, the
//! once-a-day rule, the limit), records the plan, puts one job per look on the work queue, and
//! applies each result as it comes back: the only writer of the store.
//!
//! A run is done when every planned look has its row in `crawl_looks`: a result applied, a
//! result refused, or a job that ran out of deliveries. Every write is keyed by the look's id,
//! so a result delivered twice, or again after a crash between the write and its
//! acknowledgement, is applied once. A coordinator that starts while a queued run is unfinished
//! goes on with that run rather than planning another.

use std::future::IntoFuture;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use async_nats::jetstream::consumer::PullConsumer;
use async_nats::jetstream::object_store::ObjectStore;
use async_nats::jetstream::stream::RawMessageErrorKind;
use async_nats::jetstream::Message;
use futures_util::StreamExt;
use pinlog_core::json::{self, Limits};
use pinlog_log::store::Store;

use super::ledger::Ledger;
use super::objects::{self, Fetched};
use super::wire::{Job, LookId, LookResult, Reported, RunToken};
use super::{bounded, look_of, Link, Queue, QueueError};
use super::{COORDINATOR, JOBS, JOBS_SUBJECT, RESULTS, UNDELIVERED};
use crate::candidate::Candidate;
use crate::discover::{Discovery, Sources};
use crate::look::Look;
use crate::outcome::{LookFailure, Reason};
use crate::records::Records;
use crate::run::{
    crawler_version, open_store, plan, read_optout, settle, Conditions, CrawlError, Due, Observer,
    Summary,
};

/// Everything a coordinator needs.
#[derive(Debug, Clone)]
pub struct Coordinator {
    pub db: PathBuf,
    pub origin: String,
    pub sources: Sources,
    pub optout: PathBuf,
    pub limit: Option<usize>,
    /// Look at every planned server, even one looked at today.
    pub relook: bool,
    pub queue: Queue,
    /// How long a run waits for its results, from its start; the looks still outstanding then
    /// are recorded as `no-result` and their jobs withdrawn.
    pub deadline: Duration,
}

/// Runs (or goes on with) one queued crawl, until every planned look is recorded.
pub fn coordinate(c: &Coordinator, observer: &mut dyn Observer) -> Result<Summary, CrawlError> {
    // The opt-out list first: if it cannot be read, nothing may be planned.
    let optout = read_optout(&c.optout)?;
    let rt = super::runtime()?;
    let link = rt.block_on(async {
        let link = Link::connect(&c.queue.url, "pinlog-coordinator").await?;
        link.declare(&c.queue).await?;
        Ok::<_, QueueError>(link)
    })?;
    // Planning outside the runtime: discovery's HTTP client has a runtime of its own.
    let mut store = open_store(&c.db, &c.origin)?;
    let mut records = Records::open(&c.db)?;
    let mut ledger = Ledger::open(&c.db)?;
    let (run, discovery) = match ledger.open_run()? {
        Some(open) => {
            let mut s = Summary {
                run: open.run,
                started: open.started,
                ..Summary::default()
            };
            [s.candidates, s.opted_out, s.recent, s.beyond_limit] = open.counts;
            observer.note(&format!(
                "going on with run {} (token {}), planned by an earlier coordinator",
                open.run,
                open.token.as_str()
            ));
            (s, Discovery::default())
        }
        None => {
            let mut s = Summary {
                started: pinlog_core::clock::now(),
                ..Summary::default()
            };
            s.run = records.start_run(&s.started)?;
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
                &mut s,
            )?;
            let token = RunToken::random();
            let jobs: Vec<Job> = planned
                .servers
                .into_iter()
                .enumerate()
                .map(|(i, candidate)| Job {
                    look: LookId::new(&token, i as u64),
                    candidate,
                })
                .collect();
            ledger.plan(&token, &s, &jobs)?;
            (s, planned.discovery)
        }
    };
    let mut summary = run;
    let outstanding = ledger.outstanding(summary.run)?;
    rt.block_on(async {
        let deadline = humantime::parse_rfc3339(&summary.started)
            .unwrap_or_else(|_| SystemTime::now())
            + c.deadline;
        // Every outstanding job again: JetStream drops those it holds already (the same id
        // within its duplicate window), and one it lost is queued anew.
        for job in &outstanding {
            retrying(deadline, observer, || {
                link.publish(JOBS_SUBJECT, job.look.as_str(), job.to_bytes())
            })
            .await?;
        }
        observer.planned(&discovery, outstanding.len());
        let objects = objects::bucket(&link).await?;
        let mut app = Applier {
            store: &mut store,
            records: &mut records,
            ledger: &ledger,
            objects: &objects,
            run: summary.run,
            observer,
        };
        let results = link.consumer(RESULTS, COORDINATOR).await?;
        let undelivered = link.consumer(UNDELIVERED, COORDINATOR).await?;
        while app.ledger.count_outstanding(app.run)? > 0 {
            if SystemTime::now() >= deadline {
                // Results already waiting are applied before any look is called missing; for a
                // bounded time, so that a stream of results cannot hold the run open.
                let until = tokio::time::Instant::now() + Duration::from_secs(60);
                while tokio::time::Instant::now() < until {
                    match take(&results, 64, Duration::ZERO).await {
                        Ok(messages) if !messages.is_empty() => {
                            for m in messages {
                                if app.result(&m).await? {
                                    acked(&m, app.observer).await;
                                }
                            }
                        }
                        _ => break,
                    }
                }
                if app.ledger.count_outstanding(app.run)? > 0 {
                    app.withdraw(&link, c.deadline).await?;
                }
                break;
            }
            match take(&results, 64, Duration::from_secs(1)).await {
                Ok(messages) => {
                    for m in messages {
                        if app.result(&m).await? {
                            acked(&m, app.observer).await;
                        }
                    }
                }
                Err(e) => app.pause(&e).await,
            }
            match take(&undelivered, 16, Duration::ZERO).await {
                Ok(messages) => {
                    for m in messages {
                        if app.undelivered(&link, &m, c.queue.max_deliver).await? {
                            acked(&m, app.observer).await;
                        }
                    }
                }
                Err(e) => app.pause(&e).await,
            }
        }
        if let Err(e) = objects::empty(&link).await {
            observer.note(&e.to_string());
        }
        for (outcome, _) in records.outcomes(summary.run)? {
            match outcome.as_str() {
                "new" => summary.new += 1,
                "changed" => summary.changed += 1,
                "unchanged" => summary.unchanged += 1,
                token => {
                    if let Some(r) = Reason::parse(token) {
                        *summary.failed.entry(r.as_str()).or_default() += 1;
                    }
                }
            }
            summary.looked += 1;
        }
        summary.ok = summary.new + summary.changed + summary.unchanged;
        summary.log_size = store.size()?;
        summary.finished = pinlog_core::clock::now();
        records.finish_run(summary.run, &summary.finished, &summary.to_json())?;
        Ok(summary)
    })
}

/// Applies what comes back, each write keyed by its look.
struct Applier<'a> {
    store: &'a mut Store,
    records: &'a mut Records,
    ledger: &'a Ledger,
    objects: &'a ObjectStore,
    run: i64,
    observer: &'a mut dyn Observer,
}

impl Applier<'_> {
    /// Applies one result: settled as the single process settles a look, or recorded as
    /// `result-refused` if it breaks a rule. Never appended twice: a look already recorded is
    /// passed over. A result in the object store is fetched and checked first, and its object
    /// deleted once its look is recorded. Whether the message is done with: one whose object
    /// the server did not give is left to come back.
    async fn result(&mut self, m: &Message) -> Result<bool, CrawlError> {
        let Some(look) = look_of(m.headers.as_ref()) else {
            self.observer
                .note("refused a result with no look id (Nats-Msg-Id): nothing recorded");
            return Ok(true);
        };
        let Some((run, job)) = self.ledger.job(&look)? else {
            self.observer.note(&format!(
                "refused a result for the look {look}, which no run of this store planned"
            ));
            return Ok(true);
        };
        let reported = Reported::read(&m.payload);
        let stored = matches!(&reported, Ok(Reported::Stored(s)) if s.look == look);
        if !self.records.has_look(look.as_str())? {
            let result = match reported {
                Ok(Reported::Inline(r)) => Ok(*r),
                Ok(Reported::Stored(s)) if s.look != look => Err(format!(
                    "the reference is about the look {}, its message id names {look}",
                    s.look
                )),
                Ok(Reported::Stored(s)) => match objects::fetch(self.objects, &s).await {
                    Fetched::Read(bytes) => LookResult::read(&bytes)
                        .map_err(|e| format!("the worker's result was refused: {e}")),
                    Fetched::Refused(e) => Err(format!("the worker's result was refused: {e}")),
                    Fetched::Later(e) => return self.later(&e),
                },
                Err(e) => Err(format!("the worker's result was refused: {e}")),
            };
            let (found, conditions) = match result {
                Ok(r) if r.look != look => refused(format!(
                    "the result is about the look {}, its message id names {look}",
                    r.look
                )),
                Ok(r) if r.server != job.candidate.id => refused(format!(
                    "the result is about {}, the look was of {}",
                    r.server, job.candidate.id
                )),
                Ok(r) => r.into_look(),
                Err(detail) => refused(detail),
            };
            self.settle(run, &job.candidate, found, &conditions, &look)?;
        }
        if stored {
            // Left behind, it goes when the run is done.
            if let Err(e) = objects::discard(self.objects, &look).await {
                self.observer.note(&e.to_string());
            }
        }
        Ok(true)
    }

    /// A job JetStream stopped delivering: recorded as `worker-gave-up`, and removed. Whether
    /// the advisory is done with: one met with a queue error is left to come back.
    async fn undelivered(
        &mut self,
        link: &Link,
        m: &Message,
        max_deliver: u32,
    ) -> Result<bool, CrawlError> {
        let Some(seq) = advisory_sequence(&m.payload) else {
            self.observer
                .note("an advisory of the undelivered stream did not read; passed over");
            return Ok(true);
        };
        let jobs = match bounded("cannot open the jobs stream", link.js.get_stream(JOBS)).await {
            Ok(j) => j,
            Err(e) => return self.later(&e),
        };
        let raw = match tokio::time::timeout(super::CALL_TIMEOUT, jobs.get_raw_message(seq)).await {
            Ok(Ok(raw)) => raw,
            // Removed already: recorded before a restart.
            Ok(Err(e)) if e.kind() == RawMessageErrorKind::NoMessageFound => return Ok(true),
            Ok(Err(e)) => return self.later(&super::failed("cannot read an undelivered job", e)),
            Err(_) => return self.later(&QueueError("no answer for an undelivered job".into())),
        };
        if let Some(look) = look_of(Some(&raw.headers)) {
            if let Some((run, job)) = self.ledger.job(&look)? {
                if !self.records.has_look(look.as_str())? {
                    let failure = LookFailure::new(
                        Reason::WorkerGaveUp,
                        format!(
                            "no worker finished this look in {max_deliver} deliveries (a \
                             worker killed, or one that could not read or report it)"
                        ),
                    );
                    self.settle(
                        run,
                        &job.candidate,
                        Look::failed(failure),
                        &own_conditions(),
                        &look,
                    )?;
                }
            }
        }
        // Recorded (or nobody's): a second reading of this advisory finds it recorded.
        match bounded("cannot remove an undelivered job", jobs.delete_message(seq)).await {
            Ok(_) => Ok(true),
            Err(e) => self.later(&e),
        }
    }

    /// A queue error met while applying a message: said, and the message left to come back.
    fn later(&mut self, e: &QueueError) -> Result<bool, CrawlError> {
        self.observer
            .note(&format!("{e}; the message will be read again"));
        Ok(false)
    }

    /// The run's deadline passed: its outstanding looks are recorded as `no-result`, and their
    /// jobs withdrawn from the queue.
    async fn withdraw(&mut self, link: &Link, deadline: Duration) -> Result<(), CrawlError> {
        for job in self.ledger.outstanding(self.run)? {
            let failure = LookFailure::new(
                Reason::NoResult,
                format!(
                    "no result came within the run's deadline of {}",
                    humantime::format_duration(deadline)
                ),
            );
            self.settle(
                self.run,
                &job.candidate,
                Look::failed(failure),
                &own_conditions(),
                &job.look,
            )?;
        }
        // Recorded already: a purge that fails leaves jobs whose results will be passed over.
        let purged = async {
            let jobs = bounded("cannot open the jobs stream", link.js.get_stream(JOBS)).await?;
            bounded("cannot withdraw the jobs", jobs.purge().into_future()).await
        };
        if let Err(e) = purged.await {
            self.observer.note(&e.to_string());
        }
        Ok(())
    }

    fn settle(
        &mut self,
        run: i64,
        cand: &Candidate,
        found: Look,
        conditions: &Conditions,
        look: &LookId,
    ) -> Result<(), CrawlError> {
        let reported = settle(
            self.store,
            self.records,
            run,
            cand,
            found,
            conditions,
            Some(look.as_str()),
        )?;
        if run == self.run {
            self.observer.looked(&reported);
        }
        Ok(())
    }

    /// The queue's server did not answer: said once a pause, and tried again.
    async fn pause(&mut self, e: &QueueError) {
        self.observer.note(&format!("{e}; trying again"));
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// A result the coordinator will not apply: the look is recorded as refused.
fn refused(detail: String) -> (Look, Conditions) {
    (
        Look::failed(LookFailure::new(Reason::ResultRefused, detail)),
        own_conditions(),
    )
}

/// The conditions of a look the coordinator records itself; nothing is appended for one, so
/// they are never written.
fn own_conditions() -> Conditions {
    Conditions {
        crawler: crawler_version(),
        asked: "auto".into(),
        sandbox: "none".into(),
    }
}

/// At most `n` messages, waiting up to `wait` for the first (not at all for zero).
async fn take(c: &PullConsumer, n: usize, wait: Duration) -> Result<Vec<Message>, QueueError> {
    let mut batch = if wait.is_zero() {
        bounded("cannot fetch", c.fetch().max_messages(n).messages()).await?
    } else {
        bounded(
            "cannot fetch",
            c.batch().max_messages(n).expires(wait).messages(),
        )
        .await?
    };
    let mut out = Vec::new();
    let until = tokio::time::Instant::now() + wait + super::CALL_TIMEOUT;
    while let Ok(Some(m)) = tokio::time::timeout_at(until, batch.next()).await {
        out.push(m.map_err(|e| super::failed("cannot fetch", e))?);
    }
    Ok(out)
}

/// Acknowledges a message applied; one whose acknowledgement is lost comes back, and is passed
/// over as recorded.
async fn acked(m: &Message, observer: &mut dyn Observer) {
    if let Err(e) = bounded("cannot acknowledge", m.ack()).await {
        observer.note(&e.to_string());
    }
}

/// Tries `f` until it succeeds or the run's deadline passes, a second apart.
async fn retrying<F, Fut>(
    deadline: SystemTime,
    observer: &mut dyn Observer,
    mut f: F,
) -> Result<(), QueueError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), QueueError>>,
{
    loop {
        match f().await {
            Ok(()) => return Ok(()),
            Err(e) if SystemTime::now() < deadline => {
                observer.note(&format!("{e}; trying again"));
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// The jobs stream's sequence number a max-deliveries advisory names (JetStream's
/// `io.nats.jetstream.advisory.v1.max_deliver`).
fn advisory_sequence(payload: &[u8]) -> Option<u64> {
    let doc = json::parse(payload, Limits::with_max_bytes(64 << 10)).ok()?;
    let o = doc.as_object()?;
    if o.get("stream")?.as_str()? != JOBS {
        return None;
    }
    match o.get("stream_seq")? {
        json::Value::Number(n) => n.literal().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_advisory_names_a_job_of_the_jobs_stream_or_nothing() {
        let a = br#"{"type":"io.nats.jetstream.advisory.v1.max_deliver","id":"x","timestamp":"2026-12-02T10:00:00Z","stream":"PINLOG_JOBS","consumer":"pinlog-workers","stream_seq":17,"deliveries":3}"#;
        assert_eq!(advisory_sequence(a), Some(17));
        let other = br#"{"stream":"OTHER","stream_seq":17}"#;
        assert_eq!(advisory_sequence(other), None);
        assert_eq!(
            advisory_sequence(br#"{"stream":"PINLOG_JOBS","stream_seq":-1}"#),
            None
        );
        assert_eq!(advisory_sequence(b"not json"), None);
    }
}
