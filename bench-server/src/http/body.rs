//! Request and response bodies: reading a request body under a size limit (streamed, never buffered past
//! the limit) and the response body type (static bytes, or a pooled buffer handed to hyper without a copy).

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Buf, Frame, Incoming, SizeHint};

use super::pool::PooledBuf;

/// Why a request body could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadBodyError {
    #[error("request body larger than {limit} bytes")]
    TooLarge { limit: usize },
    #[error("reading the request body failed: {0}")]
    Io(#[from] hyper::Error),
}

/// Reads `body` into a pooled buffer, failing as soon as more than `limit` bytes arrive. `declared` is the
/// Content-Length, if any, used only to size the buffer (and already checked against `limit` by the caller).
pub(crate) async fn read_limited(
    mut body: Incoming,
    declared: Option<u64>,
    limit: usize,
) -> Result<PooledBuf, ReadBodyError> {
    let mut buf = PooledBuf::take();
    if let Some(n) = declared {
        // `declared <= limit` here, so this cannot reserve more than the limit.
        buf.reserve(usize::try_from(n).unwrap_or(limit).min(limit));
    }
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            if data.len() > limit - buf.len() {
                return Err(ReadBodyError::TooLarge { limit });
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok(buf)
}

/// One chunk of a response body.
#[derive(Debug)]
pub(crate) enum Chunk {
    /// Static or shared bytes (WSDL, metrics, small texts).
    Bytes(Bytes),
    /// A serialised SOAP response; its buffer returns to the pool once hyper has written it.
    Pooled(PooledBuf),
}

impl Buf for Chunk {
    fn remaining(&self) -> usize {
        match self {
            Chunk::Bytes(b) => b.remaining(),
            Chunk::Pooled(b) => b.remaining(),
        }
    }

    fn chunk(&self) -> &[u8] {
        match self {
            Chunk::Bytes(b) => b.chunk(),
            Chunk::Pooled(b) => b.chunk(),
        }
    }

    fn advance(&mut self, cnt: usize) {
        match self {
            Chunk::Bytes(b) => b.advance(cnt),
            Chunk::Pooled(b) => b.advance(cnt),
        }
    }
}

/// The body of every response: empty or a single chunk of known length (so hyper sets Content-Length).
#[derive(Debug)]
pub(crate) struct ResponseBody(Option<Chunk>);

impl ResponseBody {
    pub(crate) fn empty() -> Self {
        Self(None)
    }

    pub(crate) fn pooled(buf: PooledBuf) -> Self {
        Self(Some(Chunk::Pooled(buf)))
    }

    /// The body's length in bytes (for the bytes-sent counter).
    pub(crate) fn len(&self) -> usize {
        self.0.as_ref().map_or(0, Buf::remaining)
    }
}

impl From<Bytes> for ResponseBody {
    fn from(b: Bytes) -> Self {
        Self(Some(Chunk::Bytes(b)))
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
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Chunk>, Infallible>>> {
        Poll::Ready(self.get_mut().0.take().map(|c| Ok(Frame::data(c))))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.len() as u64)
    }
}
