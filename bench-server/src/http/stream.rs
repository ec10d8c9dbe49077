//! A large `get` response, streamed: the customers are serialised straight from the store a chunk at a
//! time as hyper sends them, so a 10 MB answer never sits in memory whole. At most one chunk per
//! connection is unsent at a time, and each is charged to the response budget until written, so a peer
//! that stops reading holds one chunk, and all of them together no more than the budget.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bench_proto::customer;
use bench_proto::soap::{end_element, envelope_end};

use super::app::App;
use super::budget::Charge;
use super::chunk::{Chunk, Gate};
use super::pool::PooledBuf;
use super::store::GetCursor;

/// A `get` response up to about this size is built whole and sent with a Content-Length; a larger one
/// streams (chunked transfer coding), this being its first chunk.
pub(crate) const FIRST_CHUNK: usize = 128 * 1024;
/// Bytes serialised per chunk after the first.
pub(crate) const CHUNK: usize = 64 * 1024;
/// Room reserved past a chunk's target for the customer that crosses it, so a chunk's buffer is allocated
/// once rather than doubled at the end.
pub(crate) const CHUNK_SLACK: usize = 8 * 1024;

/// The rest of a `get` response after its first chunk.
pub(crate) struct GetStream {
    app: Arc<App>,
    cursor: GetCursor,
    /// The first chunk, built with the response head, until hyper takes it.
    first: Option<(PooledBuf, Charge)>,
    /// Set while a chunk of this stream is unsent.
    gate: Arc<Gate>,
    done: bool,
    /// This stream's wait for room in the response budget, while it waits.
    waiting: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl fmt::Debug for GetStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GetStream")
            .field("cursor", &self.cursor)
            .field("done", &self.done)
            .field("waiting", &self.waiting.is_some())
            .finish_non_exhaustive()
    }
}

impl GetStream {
    /// The `get` whose first chunk is `first` (charged to the response budget), continuing at `cursor`.
    pub(crate) fn new(app: Arc<App>, cursor: GetCursor, first: PooledBuf, charge: Charge) -> Self {
        Self {
            app,
            cursor,
            first: Some((first, charge)),
            gate: Arc::default(),
            done: false,
            waiting: None,
        }
    }

    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    pub(crate) fn poll_chunk(&mut self, cx: &mut Context<'_>) -> Poll<Option<Chunk>> {
        if let Some((buf, charge)) = self.first.take() {
            return Poll::Ready(Some(Chunk::gated(buf, charge, Gate::take(&self.gate))));
        }
        if self.done {
            return Poll::Ready(None);
        }
        if self.gate.poll_free(cx).is_pending() {
            return Poll::Pending;
        }
        let budget = &self.app.response_budget;
        if self.waiting.is_none() && !budget.has_room() {
            let budget = budget.clone();
            self.waiting = Some(Box::pin(async move { budget.room().await }));
        }
        if let Some(wait) = &mut self.waiting {
            ready!(wait.as_mut().poll(cx));
            self.waiting = None;
        }
        let mut buf = PooledBuf::take();
        buf.reserve(CHUNK + CHUNK_SLACK);
        if self.app.store.write_get(&mut self.cursor, &mut buf, CHUNK) {
            write_get_tail(&mut buf);
            self.done = true;
        }
        self.app.metrics.sent(buf.len());
        let charge = budget.charge(buf.len());
        Poll::Ready(Some(Chunk::gated(buf, charge, Gate::take(&self.gate))))
    }
}

/// Appends the start of a `get` response: the envelope and the wrapper element.
pub(crate) fn write_get_head(out: &mut Vec<u8>) {
    customer::write_response(&customer::Response::Get(Vec::new()), out);
    let tail = get_tail_len();
    out.truncate(out.len() - tail);
}

/// Appends the end of a `get` response.
pub(crate) fn write_get_tail(out: &mut Vec<u8>) {
    let name = get_element();
    end_element(out, name);
    envelope_end(out);
}

fn get_element() -> &'static str {
    customer::Operation::Get
        .response_element()
        .unwrap_or("getResponse")
}

fn get_tail_len() -> usize {
    let mut tail = Vec::new();
    write_get_tail(&mut tail);
    tail.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_tail_around_customers_make_the_whole_response() {
        let customers = customer::generate(3, 7, 1);
        let mut whole = Vec::new();
        customer::write_response(&customer::Response::Get(customers.clone()), &mut whole);
        let mut pieces = Vec::new();
        write_get_head(&mut pieces);
        for c in &customers {
            customer::write_customer(&mut pieces, c);
        }
        write_get_tail(&mut pieces);
        assert_eq!(
            String::from_utf8(pieces).unwrap(),
            String::from_utf8(whole).unwrap()
        );
    }
}
