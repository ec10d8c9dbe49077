//! Idle timeout: an I/O wrapper that marks a connection active whenever bytes move, and a watchdog that
//! closes the connection when a whole period passes without activity.
//!
//! hyper 1.x has no idle or body-read timeout of its own, only `header_read_timeout`. Marking activity costs
//! one relaxed store per read/write (no clock read, no timer reset), so the watchdog is cheap on the hot path.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Wraps a connection's stream; every successful non-empty read or write sets the shared activity flag.
#[derive(Debug)]
pub(crate) struct ActivityIo<T> {
    inner: T,
    active: Arc<AtomicBool>,
}

impl<T> ActivityIo<T> {
    /// Wraps `inner`; returns the wrapper and the flag for [`watchdog`].
    pub(crate) fn new(inner: T) -> (Self, Arc<AtomicBool>) {
        let active = Arc::new(AtomicBool::new(true));
        (
            Self {
                inner,
                active: active.clone(),
            },
            active,
        )
    }

    fn mark(&self, n: usize) {
        if n > 0 {
            self.active.store(true, Ordering::Relaxed);
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for ActivityIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let res = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = res {
            self.mark(buf.filled().len() - before);
        }
        res
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for ActivityIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let res = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = res {
            self.mark(n);
        }
        res
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let res = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = res {
            self.mark(n);
        }
        res
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Completes once a full `period` has passed with no activity; the caller then drops the connection.
/// A connection is therefore closed after between one and two idle periods.
pub(crate) async fn watchdog(active: Arc<AtomicBool>, period: Duration) {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    loop {
        ticks.tick().await;
        if !active.swap(false, Ordering::Relaxed) {
            return;
        }
    }
}
