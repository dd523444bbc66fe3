//! A client's stream: what the proxy queues for it, bounded, and the event stream its answer
//! body writes.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Frame;
use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};
use tokio::sync::mpsc;

use super::response::respond;
use super::{Body, Delivery};
use crate::queue::Budget;

/// A client's stream as the proxy fills it: what waits in it is bounded by its [`Budget`], which
/// the upstream answer feeding it waits on.
#[derive(Clone)]
pub(super) struct Stream {
    pub(super) tx: mpsc::UnboundedSender<Delivery>,
    pub(super) budget: Budget,
}

impl Stream {
    /// Queues `d`, or gives it back when the client's side is gone.
    pub(super) fn send(&self, d: Delivery) -> Result<(), Delivery> {
        let n = d.bytes.len();
        self.budget.add(n);
        self.tx.send(d).map_err(|e| {
            self.budget.remove(n);
            e.0
        })
    }
}

/// The client's side of a [`Stream`].
pub(super) struct Inbox {
    rx: mpsc::UnboundedReceiver<Delivery>,
    budget: Budget,
}

impl Inbox {
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Delivery>> {
        let polled = self.rx.poll_recv(cx);
        if let Poll::Ready(Some(d)) = &polled {
            self.budget.remove(d.bytes.len());
        }
        polled
    }

    pub(super) async fn recv(&mut self) -> Option<Delivery> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }
}

pub(super) fn stream() -> (Stream, Inbox) {
    let (tx, rx) = mpsc::unbounded_channel();
    let budget = Budget::default();
    let inbox = Inbox {
        rx,
        budget: budget.clone(),
    };
    (Stream { tx, budget }, inbox)
}

/// A POST's or a GET's event stream: `first`, then what arrives, until an answer ends it or the
/// senders are gone.
struct Events {
    first: Option<Delivery>,
    rx: Inbox,
    done: bool,
}

impl hyper::body::Body for Events {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.done {
            return Poll::Ready(None);
        }
        let d = match self.first.take() {
            Some(d) => d,
            None => match self.rx.poll_recv(cx) {
                Poll::Ready(Some(d)) => d,
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            },
        };
        self.done = d.last;
        // CR and LF only ever stand between JSON tokens: each piece becomes a data line, and
        // the reader joins them with LF, which is whitespace as well.
        let mut event = b"event: message\n".to_vec();
        for piece in d.bytes.split(|b| *b == b'\n' || *b == b'\r') {
            event.extend_from_slice(b"data: ");
            event.extend_from_slice(piece);
            event.push(b'\n');
        }
        event.push(b'\n');
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(event)))))
    }
}

pub(super) fn events(first: Option<Delivery>, rx: Inbox) -> Response<Body> {
    let mut resp = respond(
        StatusCode::OK,
        "text/event-stream",
        Events {
            first,
            rx,
            done: false,
        }
        .boxed(),
    );
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}
