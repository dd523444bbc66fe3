//! The crawl past one machine: a coordinator plans the looks and puts one job per look on a NATS
//! JetStream work queue; any number of workers take jobs, look exactly as the single process
//! does, and put each result on a results stream; the coordinator, the only writer of the store
//! and the only holder of the key, applies each result once. A result too large for one message
//! of the server's goes through JetStream's object store (`objects`). docs/OPERATIONS.md
//! ("Workers") is the operator's page: streams, subjects, consumer settings, message formats,
//! faults.

pub mod coordinator;
mod ledger;
mod objects;
pub mod wire;
pub mod worker;

use std::fmt;
use std::future::{Future, IntoFuture};
use std::time::Duration;

use async_nats::jetstream::{self, consumer, object_store, stream};

/// The work queue of jobs, one per planned look.
pub const JOBS: &str = "PINLOG_JOBS";
pub const JOBS_SUBJECT: &str = "pinlog.jobs";
/// The workers' one shared consumer of the jobs.
pub const WORKERS: &str = "pinlog-workers";
/// The results, read by the coordinator alone.
pub const RESULTS: &str = "PINLOG_RESULTS";
pub const RESULTS_SUBJECT: &str = "pinlog.results";
pub const COORDINATOR: &str = "pinlog-coordinator";
/// What JetStream says of jobs that ran out of deliveries, kept until the coordinator reads it.
pub const UNDELIVERED: &str = "PINLOG_UNDELIVERED";
/// The object store's bucket of results too large for one message, each named by its look id.
pub const OBJECTS: &str = "PINLOG_LARGE_RESULTS";
/// The header naming a message's look: JetStream's own de-duplication id.
pub const LOOK_HEADER: &str = "Nats-Msg-Id";
/// Room left in a message for its headers and the protocol's framing: a result goes in the
/// message only if it fits the server's `max_payload` with this much to spare.
pub const HEADROOM: usize = 4 << 10;
/// The smallest `max_payload` taken: every job a plan makes must fit one message.
pub const MIN_PAYLOAD: usize = wire::MAX_JOB + HEADROOM;

/// A job published twice within this window (a coordinator restarted mid-plan) is stored once.
pub const DUPLICATE_WINDOW: Duration = Duration::from_secs(24 * 3600);
/// The longest any one exchange with the server may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the queue is and how deliveries go.
#[derive(Debug, Clone)]
pub struct Queue {
    /// `nats://HOST:PORT`.
    pub url: String,
    /// A job not acknowledged (nor reported in progress) for this long is delivered again.
    pub ack_wait: Duration,
    /// Deliveries of one job before it is recorded as `worker-gave-up`.
    pub max_deliver: u32,
}

/// Why the queue could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueError(pub String);

impl fmt::Display for QueueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "queue: {}", self.0)
    }
}

impl std::error::Error for QueueError {}

/// `what` of an async-nats error, as one line.
fn failed(what: &str, e: impl fmt::Display) -> QueueError {
    QueueError(format!("{what}: {e}"))
}

/// Runs `f` for at most [`CALL_TIMEOUT`].
async fn bounded<T, E: fmt::Display>(
    what: &str,
    f: impl Future<Output = Result<T, E>>,
) -> Result<T, QueueError> {
    match tokio::time::timeout(CALL_TIMEOUT, f).await {
        Ok(r) => r.map_err(|e| failed(what, e)),
        Err(_) => Err(QueueError(format!(
            "{what}: no answer within {} s",
            CALL_TIMEOUT.as_secs()
        ))),
    }
}

/// An open connection to the queue's server.
pub(crate) struct Link {
    pub js: jetstream::Context,
    /// The largest message the server takes, headers included.
    pub max_payload: usize,
}

impl Link {
    /// Connects to `url`, which must be `nats://HOST:PORT`, and checks that the server has
    /// JetStream and takes messages as large as the largest job.
    pub async fn connect(url: &str, name: &str) -> Result<Link, QueueError> {
        check_url(url)?;
        let client = bounded(
            &format!("cannot connect to {url}"),
            async_nats::ConnectOptions::new()
                .name(name)
                .connection_timeout(CALL_TIMEOUT)
                .request_timeout(Some(CALL_TIMEOUT))
                .connect(url),
        )
        .await?;
        let info = client.server_info();
        if !info.jetstream {
            return Err(QueueError(format!(
                "the server at {url} has no JetStream: start nats-server with -js, and -sd DIR \
                 for where it keeps the queue"
            )));
        }
        let max_payload = info.max_payload;
        if max_payload < MIN_PAYLOAD {
            return Err(QueueError(format!(
                "the server at {url} takes messages of at most {max_payload} bytes; a job may be \
                 {MIN_PAYLOAD} with its headers (remove max_payload from its configuration: \
                 nats-server's default, 1 MiB, will do)"
            )));
        }
        let mut js = jetstream::new(client);
        js.set_timeout(CALL_TIMEOUT);
        Ok(Link { js, max_payload })
    }

    /// The three streams, two consumers and the bucket of large results, created or brought to
    /// these settings.
    pub async fn declare(&self, q: &Queue) -> Result<(), QueueError> {
        // Results are bounded by the server's max_payload only: one past MAX_RESULT reaches
        // the coordinator, which records it refused rather than leaving its look unrecorded.
        // One larger than a message goes through the object store, bounded the same way.
        let file = |name: &str, subject: String, max_bytes: Option<usize>| stream::Config {
            name: name.to_string(),
            subjects: vec![subject],
            retention: stream::RetentionPolicy::WorkQueue,
            storage: stream::StorageType::File,
            duplicate_window: DUPLICATE_WINDOW,
            max_message_size: max_bytes.map_or(-1, |b| b as i32),
            ..Default::default()
        };
        for config in [
            file(JOBS, JOBS_SUBJECT.to_string(), Some(wire::MAX_JOB)),
            file(RESULTS, RESULTS_SUBJECT.to_string(), None),
            // Advisories are a few hundred bytes.
            file(
                UNDELIVERED,
                format!("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{JOBS}.{WORKERS}"),
                Some(64 << 10),
            ),
        ] {
            let name = config.name.clone();
            bounded(
                &format!("cannot declare the stream {name}"),
                self.js.create_or_update_stream(config),
            )
            .await?;
        }
        let pull = |name: &str, ack_wait: Duration, max_deliver: i64| consumer::pull::Config {
            durable_name: Some(name.to_string()),
            ack_policy: consumer::AckPolicy::Explicit,
            ack_wait,
            max_deliver,
            ..Default::default()
        };
        for (stream, config) in [
            (JOBS, pull(WORKERS, q.ack_wait, i64::from(q.max_deliver))),
            // A result the coordinator fails to apply is delivered again, without end: it is
            // never lost, and the coordinator's writes are idempotent by look.
            (RESULTS, pull(COORDINATOR, Duration::from_secs(60), -1)),
            (UNDELIVERED, pull(COORDINATOR, Duration::from_secs(60), -1)),
        ] {
            bounded(
                &format!("cannot declare the consumer of {stream}"),
                self.js.create_consumer_on_stream(config, stream),
            )
            .await?;
        }
        bounded(
            &format!("cannot declare the object store {OBJECTS}"),
            self.js.create_object_store(object_store::Config {
                bucket: OBJECTS.to_string(),
                storage: stream::StorageType::File,
                ..Default::default()
            }),
        )
        .await?;
        Ok(())
    }

    pub async fn consumer(
        &self,
        stream: &str,
        name: &str,
    ) -> Result<consumer::PullConsumer, QueueError> {
        bounded(
            &format!("no consumer {name} on {stream} (is a coordinator running?)"),
            self.js.get_consumer_from_stream(name, stream),
        )
        .await
    }

    /// Publishes `payload` on `subject` under the de-duplication id `id`, and waits until the
    /// server has stored it.
    pub async fn publish(
        &self,
        subject: &'static str,
        id: &str,
        payload: Vec<u8>,
    ) -> Result<(), QueueError> {
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(LOOK_HEADER, id);
        let ack = bounded(
            &format!("cannot publish on {subject}"),
            self.js
                .publish_with_headers(subject, headers, payload.into()),
        )
        .await?;
        bounded(&format!("{subject} did not store {id}"), ack.into_future()).await?;
        Ok(())
    }
}

/// The runtime the queue's two sides run on: a few threads, since looks run on blocking ones.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, QueueError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| failed("cannot start the async runtime", e))
}

/// `nats://HOST:PORT`: the one form taken, so that a typing mistake is not a connection to
/// somewhere else.
pub fn check_url(url: &str) -> Result<(), QueueError> {
    let rest = url.strip_prefix("nats://").ok_or_else(|| {
        QueueError(format!(
            "{} is not nats://HOST:PORT",
            pinlog_core::render::quoted(url, 120)
        ))
    })?;
    let (host, port) = rest.rsplit_once(':').ok_or_else(|| {
        QueueError(format!(
            "{} names no port: nats://HOST:PORT",
            pinlog_core::render::quoted(url, 120)
        ))
    })?;
    if host.is_empty() || port.parse::<u16>().is_err() || host.contains(['/', '@', '?', '#']) {
        return Err(QueueError(format!(
            "{} is not nats://HOST:PORT",
            pinlog_core::render::quoted(url, 120)
        )));
    }
    Ok(())
}

/// The look a message is about, from its de-duplication id.
fn look_of(headers: Option<&async_nats::HeaderMap>) -> Option<wire::LookId> {
    let id = headers?.get(LOOK_HEADER)?;
    wire::LookId::parse(id.as_str()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_nats_host_port_is_taken() {
        assert!(check_url("nats://127.0.0.1:4222").is_ok());
        assert!(check_url("nats://queue.example:4222").is_ok());
        for bad in [
            "127.0.0.1:4222",
            "nats://127.0.0.1",
            "nats://:4222",
            "nats://u:p@host:4222",
            "tls://host:4222",
            "nats://host:99999",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
    }
}
