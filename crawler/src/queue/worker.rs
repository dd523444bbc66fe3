//! A worker: takes jobs from the work queue, looks exactly as the single process does, and puts
//! each result on the results stream. It holds no store and no key: what it reports is applied
//! (or refused) by the coordinator.
//!
//! While a look runs the worker tells JetStream it is in progress, a third of the ack wait
//! apart, so a long install is not delivered to a second worker; a worker killed mid-look stops
//! telling, and its job is delivered again once the ack wait has passed.

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::consumer::PullConsumer;
use async_nats::jetstream::{AckKind, Message};
use futures_util::StreamExt;
use pinlog_core::ServerId;
use tokio::sync::RwLock;

use super::wire::{Job, LookId, LookResult};
use super::{bounded, Link, QueueError, CALL_TIMEOUT, JOBS, RESULTS_SUBJECT, WORKERS};
use crate::look::Looker;
use crate::run::{look_guarded, Conditions, CrawlError};

/// Everything a worker needs.
#[derive(Debug, Clone)]
pub struct Worker {
    /// `nats://HOST:PORT`.
    pub url: String,
    /// Looks made at once.
    pub concurrency: usize,
    pub looker: Looker,
}

/// What a worker does, as it does it.
#[derive(Debug)]
pub enum Event<'a> {
    /// A job taken; `delivery` counts from 1.
    Taken {
        look: &'a LookId,
        server: &'a ServerId,
        delivery: i64,
    },
    /// A result stored on the results stream.
    Reported {
        look: &'a LookId,
        server: &'a ServerId,
        outcome: &'a str,
        took: Duration,
    },
    /// Anything else the operator should know: a job refused, the server out of reach.
    Note(&'a str),
}

/// How many times, a second apart, a result is offered before the job is left to be delivered
/// again: enough to ride out a restart of the server.
const PUBLISH_TRIES: u32 = 30;

/// Takes and makes looks until the process is stopped. Returns only when the queue's server
/// cannot be reached, has no JetStream, or will not take a job of the largest size.
pub fn work(w: &Worker, on: &(dyn Fn(Event<'_>) + Send + Sync)) -> Result<(), CrawlError> {
    let rt = super::runtime()?;
    rt.block_on(async {
        let link = Arc::new(Link::connect(&w.url, "pinlog-worker").await?);
        // A worker may start before any coordinator has declared the queue: it waits for one.
        let consumer = loop {
            match link.consumer(JOBS, WORKERS).await {
                Ok(c) => break c,
                Err(e) => {
                    on(Event::Note(&format!("{e}; waiting for a coordinator")));
                    tokio::time::sleep(Duration::from_secs(2)).await;
                }
            }
        };
        let ack_wait = consumer.cached_info().config.ack_wait;
        let looker = Arc::new(w.looker.clone());
        // Looks hold it shared; a job of a new run takes it alone to empty the installers'
        // caches first, as each run of the single process starts with them empty.
        let run = Arc::new(RwLock::new(String::new()));
        let slots = (0..w.concurrency.max(1)).map(|slot| {
            let (link, consumer, looker, run) =
                (link.clone(), consumer.clone(), looker.clone(), run.clone());
            async move {
                loop {
                    match take_one(&consumer).await {
                        Ok(Some(m)) => {
                            handle(&link, m, slot, ack_wait, &looker, &run, on).await;
                        }
                        Ok(None) => {}
                        Err(e) => {
                            on(Event::Note(&format!("{e}; trying again")));
                            tokio::time::sleep(Duration::from_secs(1)).await;
                        }
                    }
                }
            }
        });
        futures_util::future::join_all(slots).await;
        Ok::<(), QueueError>(())
    })?;
    Ok(())
}

/// One job, waiting a few seconds for it.
async fn take_one(c: &PullConsumer) -> Result<Option<Message>, QueueError> {
    let wait = Duration::from_secs(5);
    let mut batch = bounded(
        "cannot ask for a job",
        c.batch().max_messages(1).expires(wait).messages(),
    )
    .await?;
    match tokio::time::timeout(wait + CALL_TIMEOUT, batch.next()).await {
        Ok(Some(m)) => m
            .map(Some)
            .map_err(|e| super::failed("cannot take a job", e)),
        Ok(None) | Err(_) => Ok(None),
    }
}

async fn handle(
    link: &Link,
    m: Message,
    slot: usize,
    ack_wait: Duration,
    looker: &Arc<Looker>,
    run: &RwLock<String>,
    on: &(dyn Fn(Event<'_>) + Send + Sync),
) {
    let delivery = m.info().map_or(1, |i| i.delivered);
    let job = match Job::read(&m.payload) {
        Ok(j) => j,
        Err(e) => {
            // Not acknowledged: delivered again (perhaps to a worker that reads it) until the
            // delivery limit, after which the coordinator records it.
            on(Event::Note(&format!("refused a job: {e}")));
            let _ = bounded("cannot refuse a job", m.ack_with(AckKind::Nak(None))).await;
            return;
        }
    };
    on(Event::Taken {
        look: &job.look,
        server: &job.candidate.id,
        delivery,
    });
    let token = job
        .look
        .as_str()
        .split_once('-')
        .map_or("", |(t, _)| t)
        .to_string();
    if *run.read().await != token {
        let mut current = run.write().await;
        if *current != token {
            let home = &looker.installers.home;
            let _ = std::fs::remove_dir_all(home);
            let _ = std::fs::create_dir_all(home);
            *current = token;
        }
    }
    let guard = run.read().await;
    let (looker2, cand) = (looker.clone(), job.candidate.clone());
    // A thread of its own, outside the runtime: a look runs a runtime of its own for the
    // probe, which a runtime's blocking threads may not.
    let (tx, mut looking) = tokio::sync::oneshot::channel();
    let started = std::thread::Builder::new().spawn(move || {
        let look = look_guarded(&looker2, &cand, slot);
        let conditions = Conditions::of(&looker2, &look);
        let _ = tx.send((look, conditions));
    });
    if let Err(e) = started {
        // Not acknowledged: the job goes to another worker after the ack wait.
        on(Event::Note(&format!(
            "cannot start a thread for a look: {e}"
        )));
        return;
    }
    let mut beat = tokio::time::interval((ack_wait / 3).max(Duration::from_millis(100)));
    beat.tick().await;
    let looked = loop {
        tokio::select! {
            r = &mut looking => break r,
            _ = beat.tick() => {
                let _ = bounded("cannot report progress", m.ack_with(AckKind::Progress)).await;
            }
        }
    };
    drop(guard);
    let Ok((look, conditions)) = looked else {
        // The look's thread ended without a look (look_guarded catches its panics): leave the
        // job to be delivered again.
        return;
    };
    let took = look.took;
    let result = LookResult::of(job.look.clone(), job.candidate.id.clone(), look, conditions);
    let outcome = match &result.found {
        Ok(_) => "surface",
        Err(f) => f.reason.as_str(),
    };
    let bytes = result.to_bytes();
    for attempt in 1..=PUBLISH_TRIES {
        let reported = async {
            let message = super::objects::message(link, &job.look, bytes.clone()).await?;
            link.publish(RESULTS_SUBJECT, job.look.as_str(), message)
                .await
        };
        match reported.await {
            Ok(()) => {
                if let Err(e) = bounded("cannot acknowledge the job", m.double_ack()).await {
                    // The job comes back; its second result is dropped by id.
                    on(Event::Note(&e.to_string()));
                }
                on(Event::Reported {
                    look: &job.look,
                    server: &job.candidate.id,
                    outcome,
                    took,
                });
                return;
            }
            Err(e) => {
                on(Event::Note(&format!(
                    "{e} (try {attempt} of {PUBLISH_TRIES})"
                )));
                let _ = bounded("cannot report progress", m.ack_with(AckKind::Progress)).await;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}
