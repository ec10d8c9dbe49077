//! One chunk of a response body as hyper holds it until written: its bytes, its share of the response
//! budget, and (for a streamed body) the gate that lets its stream make the next chunk once it is gone.

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use hyper::body::Buf;

use super::budget::Charge;
use super::pool::PooledBuf;

#[derive(Debug)]
enum Data {
    /// Static or shared bytes (WSDL, metrics, small texts).
    Bytes(Bytes),
    /// A serialised SOAP response; its buffer returns to the pool once hyper has written it.
    Pooled(PooledBuf),
}

/// A chunk of a response body. Dropped by hyper once written (or with the connection), which returns its
/// budget and frees its gate.
#[derive(Debug)]
pub(crate) struct Chunk {
    data: Data,
    _charge: Option<Charge>,
    _gate: Option<GateToken>,
}

impl Chunk {
    /// Bytes that cost nothing per response (static, or made once).
    pub(crate) fn shared(bytes: Bytes) -> Self {
        Self {
            data: Data::Bytes(bytes),
            _charge: None,
            _gate: None,
        }
    }

    /// A serialised response held against the response budget.
    pub(crate) fn charged(buf: PooledBuf, charge: Charge) -> Self {
        Self {
            data: Data::Pooled(buf),
            _charge: Some(charge),
            _gate: None,
        }
    }

    /// A chunk of a streamed body, which also holds its stream's gate.
    pub(crate) fn gated(buf: PooledBuf, charge: Charge, gate: GateToken) -> Self {
        Self {
            data: Data::Pooled(buf),
            _charge: Some(charge),
            _gate: Some(gate),
        }
    }
}

impl Buf for Chunk {
    fn remaining(&self) -> usize {
        match &self.data {
            Data::Bytes(b) => b.remaining(),
            Data::Pooled(b) => b.remaining(),
        }
    }

    fn chunk(&self) -> &[u8] {
        match &self.data {
            Data::Bytes(b) => b.chunk(),
            Data::Pooled(b) => b.chunk(),
        }
    }

    fn advance(&mut self, cnt: usize) {
        match &mut self.data {
            Data::Bytes(b) => b.advance(cnt),
            Data::Pooled(b) => b.advance(cnt),
        }
    }
}

/// One unsent chunk per stream: taken when a chunk is made, given back (waking the stream) when hyper
/// drops that chunk.
#[derive(Debug, Default)]
pub(crate) struct Gate {
    busy: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

/// The gate, held by the unsent chunk.
#[derive(Debug)]
pub(crate) struct GateToken(Arc<Gate>);

impl Gate {
    /// Ready when no chunk of this stream is unsent; otherwise the chunk's drop wakes the caller.
    pub(crate) fn poll_free(&self, cx: &mut Context<'_>) -> Poll<()> {
        if !self.busy.load(SeqCst) {
            return Poll::Ready(());
        }
        *self.waker.lock().unwrap_or_else(PoisonError::into_inner) = Some(cx.waker().clone());
        if self.busy.load(SeqCst) {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }

    /// Marks a chunk unsent until the returned token is dropped.
    pub(crate) fn take(gate: &Arc<Gate>) -> GateToken {
        gate.busy.store(true, SeqCst);
        GateToken(gate.clone())
    }
}

impl Drop for GateToken {
    fn drop(&mut self) {
        self.0.busy.store(false, SeqCst);
        let waker = self
            .0
            .waker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(w) = waker {
            w.wake();
        }
    }
}
