//! What the proxy holds for one direction: messages waiting for the surface to be checked, and
//! messages waiting for a side that reads slower than the other writes. Each is bounded by
//! messages and bytes (docs/PROXY.md, "Memory"): a queue takes a message while it holds fewer than
//! [`MAX_MESSAGES`] and fewer than [`MAX_BYTES`], so it never holds more than that count, nor more
//! than its byte bound and one message. A transport stops reading the side that feeds a full queue
//! (backpressure); what cannot wait is cut off.

use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// The most messages one queue holds.
pub const MAX_MESSAGES: usize = 256;
/// The bytes past which a queue takes nothing more.
pub const MAX_BYTES: usize = 8 << 20;

fn full(messages: usize, bytes: usize) -> bool {
    messages >= MAX_MESSAGES || bytes >= MAX_BYTES
}

/// What the bounds say, for messages.
pub fn bounds() -> String {
    format!("{MAX_MESSAGES} messages or {} MiB", MAX_BYTES >> 20)
}

/// Messages held in order until they can be passed on.
#[derive(Debug, Default)]
pub struct Held {
    lines: Vec<Vec<u8>>,
    bytes: usize,
}

impl Held {
    pub fn is_full(&self) -> bool {
        full(self.lines.len(), self.bytes)
    }

    /// Holds `line`, or gives it back when the queue is full.
    pub fn push(&mut self, line: Vec<u8>) -> Result<(), Vec<u8>> {
        if self.is_full() {
            return Err(line);
        }
        self.bytes += line.len();
        self.lines.push(line);
        Ok(())
    }
}

impl IntoIterator for Held {
    type Item = Vec<u8>;
    type IntoIter = std::vec::IntoIter<Vec<u8>>;

    fn into_iter(self) -> Self::IntoIter {
        self.lines.into_iter()
    }
}

/// The messages and bytes queued for a writer, shared by the side that queues them (which reads
/// only while there is room) and the one that writes them out (which frees the room).
#[derive(Clone, Default)]
pub struct Budget(Arc<Shared>);

#[derive(Default)]
struct Shared {
    /// Messages and bytes queued.
    used: Mutex<(usize, usize)>,
    freed: Notify,
}

impl Budget {
    fn used(&self) -> std::sync::MutexGuard<'_, (usize, usize)> {
        self.0.used.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A message of `bytes` is queued.
    pub fn add(&self, bytes: usize) {
        let mut used = self.used();
        used.0 += 1;
        used.1 += bytes;
    }

    /// A message of `bytes` left the queue.
    pub fn remove(&self, bytes: usize) {
        {
            let mut used = self.used();
            used.0 = used.0.saturating_sub(1);
            used.1 = used.1.saturating_sub(bytes);
        }
        self.0.freed.notify_waiters();
    }

    pub fn has_room(&self) -> bool {
        let used = self.used();
        !full(used.0, used.1)
    }

    /// Waits until the queue has room.
    pub async fn room(&self) {
        loop {
            // Made before the check, so a message leaving in between is not missed.
            let freed = self.0.freed.notified();
            if self.has_room() {
                return;
            }
            freed.await;
        }
    }
}
