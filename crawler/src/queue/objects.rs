//! Results too large for one message of the server's: the worker puts the result's bytes in
//! JetStream's object store (the bucket [`OBJECTS`]) under its look id, and reports a reference
//! ([`Stored`]) instead; the coordinator fetches it, bounded, and checks it against the reference
//! before the strict reader sees it, then deletes it once the look is recorded.

use std::time::Duration;

use async_nats::jetstream::object_store::{GetErrorKind, InfoErrorKind, ObjectStore};
use tokio::io::AsyncReadExt;

use super::wire::{LookId, Refused, Stored, MAX_RESULT};
use super::{bounded, failed, Link, QueueError, CALL_TIMEOUT, OBJECTS};

/// The longest putting or reading one object may take: a few MiB, over a slow link.
const TRANSFER_TIMEOUT: Duration = Duration::from_secs(120);

/// The message that reports `result`, a result's bytes: the result itself if it fits the
/// server's messages, else a reference to it, put in the object store first.
pub(crate) async fn message(
    link: &Link,
    look: &LookId,
    result: Vec<u8>,
) -> Result<Vec<u8>, QueueError> {
    if result.len() + super::HEADROOM <= link.max_payload {
        return Ok(result);
    }
    let objects = bucket(link).await?;
    let what = format!("cannot put the result of {look} in {OBJECTS}");
    match tokio::time::timeout(
        TRANSFER_TIMEOUT,
        objects.put(look.as_str(), &mut result.as_slice()),
    )
    .await
    {
        Ok(Ok(_)) => Ok(Stored::of(look, &result).to_bytes()),
        Ok(Err(e)) => Err(failed(&what, e)),
        Err(_) => Err(QueueError(format!(
            "{what}: not done within {} s",
            TRANSFER_TIMEOUT.as_secs()
        ))),
    }
}

/// The bucket, as the coordinator declared it.
pub(crate) async fn bucket(link: &Link) -> Result<ObjectStore, QueueError> {
    bounded(
        &format!("no object store {OBJECTS} (is a coordinator running?)"),
        link.js.get_object_store(OBJECTS),
    )
    .await
}

/// What fetching a referenced result came to.
pub(crate) enum Fetched {
    /// The result's bytes, exactly as referenced.
    Read(Vec<u8>),
    /// The object breaks a rule: the result is refused.
    Refused(Refused),
    /// The server did not answer: the message is to be read again.
    Later(QueueError),
}

/// The referenced result, read with a bound: never more than one byte past the reference's
/// length, itself at most [`MAX_RESULT`].
pub(crate) async fn fetch(objects: &ObjectStore, s: &Stored) -> Fetched {
    let what = format!("cannot read the object {} of {OBJECTS}", s.name());
    let info = match tokio::time::timeout(CALL_TIMEOUT, objects.info(s.name())).await {
        Ok(Ok(info)) => info,
        Ok(Err(e)) if e.kind() == InfoErrorKind::NotFound => return Fetched::Refused(s.missing()),
        Ok(Err(e)) => return Fetched::Later(failed(&what, e)),
        Err(_) => return Fetched::Later(QueueError(format!("{what}: no answer"))),
    };
    if info.deleted {
        return Fetched::Refused(s.missing());
    }
    // Followed, a link would read another look's object, or another bucket's.
    if info.options.as_ref().is_some_and(|o| o.link.is_some()) {
        return Fetched::Refused(s.linked());
    }
    if info.size != s.length {
        return Fetched::Refused(s.length_differs(info.size));
    }
    let limit = s.length.min(MAX_RESULT) + 1;
    let read = async {
        let mut object = objects.get(s.name()).await.map_err(|e| match e.kind() {
            GetErrorKind::NotFound => Ok(s.missing()),
            _ => Err(failed(&what, e)),
        })?;
        let mut bytes = Vec::with_capacity(limit);
        (&mut object)
            .take(limit as u64)
            .read_to_end(&mut bytes)
            .await
            .map_err(|e| match e.kind() {
                // The chunks are not those its description's digest names.
                std::io::ErrorKind::InvalidData => Ok(s.damaged(&e.to_string())),
                _ => Err(failed(&what, e)),
            })?;
        Ok::<_, Result<Refused, QueueError>>(bytes)
    };
    match tokio::time::timeout(TRANSFER_TIMEOUT, read).await {
        Ok(Ok(bytes)) => match s.check(&bytes) {
            Ok(()) => Fetched::Read(bytes),
            Err(r) => Fetched::Refused(r),
        },
        Ok(Err(Ok(refused))) => Fetched::Refused(refused),
        Ok(Err(Err(e))) => Fetched::Later(e),
        Err(_) => Fetched::Later(QueueError(format!(
            "{what}: not done within {} s",
            TRANSFER_TIMEOUT.as_secs()
        ))),
    }
}

/// Deletes the object of a look that is recorded; one already gone is no error.
pub(crate) async fn discard(objects: &ObjectStore, look: &LookId) -> Result<(), QueueError> {
    match tokio::time::timeout(CALL_TIMEOUT, objects.delete(look.as_str())).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e))
            if e.kind() == async_nats::jetstream::object_store::DeleteErrorKind::NotFound =>
        {
            Ok(())
        }
        Ok(Err(e)) => Err(failed(
            &format!("cannot delete the object {look} of {OBJECTS}"),
            e,
        )),
        Err(_) => Err(QueueError(format!(
            "cannot delete the object {look} of {OBJECTS}: no answer"
        ))),
    }
}

/// Empties the bucket once a run is done: every look is recorded, so what is left (the objects
/// of results reported again, or put by a worker that could not report) is no one's. The next
/// run's jobs are not queued yet, so no worker is putting one of its results.
pub(crate) async fn empty(link: &Link) -> Result<(), QueueError> {
    let what = format!("cannot empty the object store {OBJECTS}");
    let stream = bounded(&what, link.js.get_stream(format!("OBJ_{OBJECTS}"))).await?;
    bounded(&what, std::future::IntoFuture::into_future(stream.purge())).await?;
    Ok(())
}
