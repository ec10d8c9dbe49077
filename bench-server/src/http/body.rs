//! Request and response bodies: reading a request body under a size limit, a deadline and the request
//! budget (streamed, never buffered past the limit), and the response body type (static bytes, a pooled
//! buffer handed to hyper without a copy, or a stream of chunks produced as hyper sends them).

use std::convert::Infallible;
use std::future::{poll_fn, Future as _};
use std::ops::Deref;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Buf, Frame, Incoming, SizeHint};

use super::budget::{Budget, Charge};
use super::chunk::Chunk;
use super::pool::PooledBuf;
use super::stream::GetStream;

/// Request bodies without a Content-Length take their budget in steps of this.
const BUDGET_STEP: usize = 64 * 1024;

/// Why a request body could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadBodyError {
    #[error("request body larger than {limit} bytes")]
    TooLarge { limit: usize },
    #[error("the request body did not arrive within {0:?}")]
    Timeout(Duration),
    #[error("no memory for the request body within {0:?} (request budget spent)")]
    Busy(Duration),
    #[error("reading the request body failed: {0}")]
    Io(#[from] hyper::Error),
}

/// A request body read in full, and its share of the request budget (returned when both are dropped).
#[derive(Debug)]
pub(crate) struct ReadBody {
    pub(crate) bytes: BodyBytes,
    pub(crate) _charge: Charge,
}

/// A request body's bytes: hyper's own frame when the body came whole in one, else the frames copied into a
/// pooled buffer.
#[derive(Debug)]
pub(crate) enum BodyBytes {
    Frame(Bytes),
    Pooled(PooledBuf),
}

impl Deref for BodyBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Self::Frame(b) => b,
            Self::Pooled(b) => b,
        }
    }
}

/// Reads `body`, failing as soon as more than `limit` bytes arrive or when the whole body has not arrived
/// within `timeout`. `declared` is the Content-Length, if any (already checked against `limit` by the
/// caller): that much of `budget` is taken before reading; a body of unknown length takes it as it grows.
pub(crate) async fn read_limited(
    body: Incoming,
    declared: Option<u64>,
    limit: usize,
    budget: &Arc<Budget>,
    timeout: Duration,
) -> Result<ReadBody, ReadBodyError> {
    let mut waiting_for_budget = false;
    let res = {
        let read = read_within_budget(body, declared, limit, budget, &mut waiting_for_budget);
        let mut read = pin!(read);
        // A body already in hyper's buffer is read by the first poll: it needs no timer. Only one still
        // arriving (or waiting for the budget) arms the deadline, counted from that first poll.
        match poll_fn(|cx| Poll::Ready(read.as_mut().poll(cx))).await {
            Poll::Ready(res) => Ok(res),
            Poll::Pending => tokio::time::timeout(timeout, read).await,
        }
    };
    // `cargo xtask gate --scenarios --inject-regression` builds with this cfg: an extra copy of every request
    // body, the regression the scenario gate must catch and name.
    #[cfg(wsbench_gate_extra_copy)]
    if let Ok(Ok(body)) = &res {
        std::hint::black_box(body.bytes.to_vec());
    }
    match res {
        Ok(res) => res,
        Err(_) if waiting_for_budget => Err(ReadBodyError::Busy(timeout)),
        Err(_) => Err(ReadBodyError::Timeout(timeout)),
    }
}

async fn read_within_budget(
    mut body: Incoming,
    declared: Option<u64>,
    limit: usize,
    budget: &Arc<Budget>,
    waiting_for_budget: &mut bool,
) -> Result<ReadBody, ReadBodyError> {
    // `declared <= limit` here, so this cannot reserve more than the limit (nor the budget, which is
    // at least the limit).
    let first = declared.map_or(0, |n| usize::try_from(n).unwrap_or(limit).min(limit));
    let mut charge = take(budget, first, waiting_for_budget).await;
    let mut buf: Option<PooledBuf> = None;
    let mut len = 0;
    while !body.is_end_stream() {
        let Some(frame) = body.frame().await else {
            break;
        };
        let Ok(data) = frame?.into_data() else {
            continue;
        };
        if data.len() > limit - len {
            return Err(ReadBodyError::TooLarge { limit });
        }
        let need = len + data.len();
        if need > charge.bytes() {
            let step = (need - charge.bytes())
                .next_multiple_of(BUDGET_STEP)
                .min(limit - charge.bytes());
            charge.absorb(take(budget, step, waiting_for_budget).await);
        }
        len = need;
        // A body whole in its first frame (nearly all: hyper reads it with the head) is parsed where hyper
        // put it. Others are copied frame by frame: holding a frame would keep hyper's read buffer shared,
        // and its next read would allocate another (measured: +5,000 instructions per 100 KB echo).
        if buf.is_none() && body.is_end_stream() {
            return Ok(ReadBody {
                bytes: BodyBytes::Frame(data),
                _charge: charge,
            });
        }
        buf.get_or_insert_with(|| {
            let mut b = PooledBuf::take();
            b.reserve(first);
            b
        })
        .extend_from_slice(&data);
    }
    Ok(ReadBody {
        bytes: buf.map_or_else(|| BodyBytes::Frame(Bytes::new()), BodyBytes::Pooled),
        _charge: charge,
    })
}

async fn take(budget: &Arc<Budget>, bytes: usize, waiting: &mut bool) -> Charge {
    if let Some(charge) = budget.try_reserve(bytes) {
        return charge;
    }
    *waiting = true;
    let charge = budget.reserve(bytes).await;
    *waiting = false;
    charge
}

/// The body of every response.
#[derive(Debug)]
pub(crate) enum ResponseBody {
    /// Nothing, or one chunk of known length (so hyper sets Content-Length); `None` once sent.
    Once(Option<Chunk>),
    /// Produced chunk by chunk as hyper sends it (chunked transfer coding).
    Stream(Box<GetStream>),
}

impl ResponseBody {
    pub(crate) fn empty() -> Self {
        Self::Once(None)
    }

    /// A serialised response, charged to `charge` until written.
    pub(crate) fn pooled(buf: PooledBuf, charge: Charge) -> Self {
        Self::Once(Some(Chunk::charged(buf, charge)))
    }

    /// The body's length in bytes when known up front (for the bytes-sent counter; a stream counts its
    /// own).
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Once(c) => c.as_ref().map_or(0, Buf::remaining),
            Self::Stream(_) => 0,
        }
    }
}

impl From<Bytes> for ResponseBody {
    fn from(b: Bytes) -> Self {
        Self::Once(Some(Chunk::shared(b)))
    }
}

impl From<String> for ResponseBody {
    fn from(s: String) -> Self {
        Bytes::from(s).into()
    }
}

impl From<&'static str> for ResponseBody {
    fn from(s: &'static str) -> Self {
        Bytes::from_static(s.as_bytes()).into()
    }
}

impl Body for ResponseBody {
    type Data = Chunk;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Chunk>, Infallible>>> {
        match self.get_mut() {
            Self::Once(c) => Poll::Ready(c.take().map(|c| Ok(Frame::data(c)))),
            Self::Stream(s) => s.poll_chunk(cx).map(|c| c.map(|c| Ok(Frame::data(c)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Self::Once(c) => c.is_none(),
            Self::Stream(s) => s.is_done(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Self::Once(_) => SizeHint::with_exact(self.len() as u64),
            Self::Stream(_) => SizeHint::default(),
        }
    }
}
