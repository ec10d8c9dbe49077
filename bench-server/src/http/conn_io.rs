//! A connection's I/O as hyper sees it: marks when bytes move and when output is blocked (for the
//! watchdog), and closes with a lingering close when the answer left request bytes unread.
//!
//! hyper 1.x has no idle, body or send timeout of its own, and its `header_read_timeout` arms a timer per
//! request; the watchdog keeps all four. Marking activity costs a relaxed store per read/write and a few
//! per request (no clock read, no timer reset), so the watchdog is cheap.

use std::future::Future;
use std::io::{self, IoSlice};
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// What the I/O wrapper, the watchdog and the request handler know about one connection.
#[derive(Debug, Default)]
pub(crate) struct ConnState {
    /// Bytes were read since the watchdog last looked.
    pub(crate) read_moved: AtomicBool,
    /// Bytes were written since the watchdog last looked.
    pub(crate) write_moved: AtomicBool,
    /// The last write found the socket full (the peer is not reading as fast as we send).
    pub(crate) write_blocked: AtomicBool,
    /// The answer left request bytes unread: linger on close.
    linger: AtomicBool,
    /// Lingering discarded some request bytes.
    pub(crate) lingered: AtomicBool,
    /// hyper has a request head and is serving it (from its head until its answer is handed over): bytes
    /// read meanwhile are its body, or a request pipelined behind it.
    serving: AtomicBool,
    /// Bytes arrived while no request was being served: a request head has begun and is not complete.
    head_started: AtomicBool,
    /// Request heads completed so far.
    heads: AtomicU64,
    /// The answer being sent closes the connection: its session must not be ended for a rest.
    closing: AtomicBool,
    /// The hyper session is ending so that the connection rests: shutting the I/O down leaves the socket open.
    resting: AtomicBool,
}

impl ConnState {
    /// Asks for a lingering close when hyper shuts this connection down.
    pub(crate) fn linger(&self) {
        self.linger.store(true, Relaxed);
    }

    /// hyper has a complete request head (called as it hands the request to the service).
    pub(crate) fn request_started(&self) {
        self.serving.store(true, Relaxed);
        self.head_started.store(false, Relaxed);
        self.heads.fetch_add(1, Relaxed);
    }

    /// The service has handed its answer to hyper: what is read from now on starts the next head.
    pub(crate) fn request_answered(&self) {
        self.serving.store(false, Relaxed);
    }

    pub(crate) fn head_started(&self) -> bool {
        self.head_started.load(Relaxed)
    }

    pub(crate) fn heads(&self) -> u64 {
        self.heads.load(Relaxed)
    }

    /// The answer handed to hyper closes the connection.
    pub(crate) fn closing(&self) {
        self.closing.store(true, Relaxed);
    }

    /// Whether the session may end for a rest now: it has answered a request since head number `from`, is
    /// serving none, and its answers keep the connection open.
    pub(crate) fn may_rest(&self, from: u64) -> bool {
        !self.serving.load(Relaxed) && self.heads() > from && !self.closing.load(Relaxed)
    }

    /// Marks (or clears) the session's end as a rest: see [`ConnIo`]'s `poll_shutdown`.
    pub(crate) fn set_resting(&self, resting: bool) {
        self.resting.store(resting, Relaxed);
    }

    pub(crate) fn resting(&self) -> bool {
        self.resting.load(Relaxed)
    }
}

/// Wraps a connection's stream for hyper.
#[derive(Debug)]
pub(crate) struct ConnIo<T> {
    inner: T,
    state: Arc<ConnState>,
    linger_for: Duration,
    /// Set once the sending side is shut while lingering: the end of the linger.
    linger_until: Option<Pin<Box<Sleep>>>,
}

impl<T> ConnIo<T> {
    pub(crate) fn new(inner: T, linger_for: Duration) -> (Self, Arc<ConnState>) {
        let state = Arc::new(ConnState::default());
        let io = Self {
            inner,
            state: state.clone(),
            linger_for,
            linger_until: None,
        };
        (io, state)
    }

    /// The stream (to wait for the next request without a buffer).
    pub(crate) fn get_ref(&self) -> &T {
        &self.inner
    }

    fn wrote(&self, res: &Poll<io::Result<usize>>) {
        match res {
            Poll::Ready(Ok(n)) => {
                if *n > 0 {
                    self.state.write_moved.store(true, Relaxed);
                }
                self.state.write_blocked.store(false, Relaxed);
            }
            Poll::Pending => self.state.write_blocked.store(true, Relaxed),
            Poll::Ready(Err(_)) => {}
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for ConnIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let res = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = res {
            if buf.filled().len() > before {
                self.state.read_moved.store(true, Relaxed);
                if !self.state.serving.load(Relaxed) {
                    self.state.head_started.store(true, Relaxed);
                }
            }
        }
        res
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncWrite for ConnIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let res = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.wrote(&res);
        res
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let res = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.wrote(&res);
        res
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    /// Shuts the sending side (unless the session ends for a rest); when a lingering close was asked for, then reads and discards until the
    /// client closes too, a read fails, or the linger time is up.
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        // A session ended for a rest hands the open connection on to the next one.
        if this.state.resting() {
            return Poll::Ready(Ok(()));
        }
        if this.linger_until.is_none() {
            ready!(Pin::new(&mut this.inner).poll_shutdown(cx))?;
            if !this.state.linger.load(Relaxed) {
                return Poll::Ready(Ok(()));
            }
            this.linger_until = Some(Box::pin(tokio::time::sleep(this.linger_for)));
        }
        let until = this.linger_until.as_mut().expect("set above");
        let mut scratch = [MaybeUninit::<u8>::uninit(); 16 * 1024];
        // A bounded number of reads per poll, so a fast sender cannot monopolise the worker.
        for _ in 0..16 {
            if until.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Ok(()));
            }
            let mut buf = ReadBuf::uninit(&mut scratch);
            match Pin::new(&mut this.inner).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if buf.filled().is_empty() => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => this.state.lingered.store(true, Relaxed),
                Poll::Ready(Err(_)) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
