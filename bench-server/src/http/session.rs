//! A connection's life as a series of hyper sessions. While more than `rest_above` connections are open,
//! a session ends once it has answered a keep-alive request, freeing hyper's per-connection buffers (an
//! 8 KiB read buffer, the write buffer, the session itself: about 14 KiB of the 17 KiB a connection held);
//! the connection then rests, waiting for its next request with a one-byte `peek` (no buffer), and a fresh
//! session serves it. What a session had read of the next request is handed to the next one. Graceful
//! shutdown is [`Stop`]'s: hyper-util's watcher follows one session, not a connection's series.

use std::convert::Infallible;
use std::future::{poll_fn, Future as _};
use std::net::SocketAddr;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::task::Poll;

use bytes::{Bytes, BytesMut};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::{service_fn, HttpService};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::sync::Notify;

use super::app::App;
use super::body::ResponseBody;
use super::conn_io::{ConnIo, ConnState};
use super::prefixed::Prefixed;
use super::service;
use super::watchdog::on_own_wake;

/// The server's stop signal, as each connection sees it: on stop, a session finishes the request it is
/// serving (its answer says `Connection: close`), and a resting connection closes at once.
#[derive(Debug, Clone, Default)]
pub(crate) struct Stop(Arc<StopState>);

#[derive(Debug, Default)]
struct StopState {
    stopped: AtomicBool,
    notify: Notify,
}

impl Stop {
    pub(crate) fn stop(&self) {
        self.0.stopped.store(true, SeqCst);
        self.0.notify.notify_waiters();
    }

    fn is_stopped(&self) -> bool {
        self.0.stopped.load(SeqCst)
    }

    /// Completes once [`Stop::stop`] has been called.
    async fn stopped(&self) {
        let mut notified = pin!(self.0.notify.notified());
        // Registered before the flag is read, so a stop in between still wakes it.
        notified.as_mut().enable();
        if self.is_stopped() {
            return;
        }
        notified.await;
    }
}

/// What every connection's sessions share.
pub(crate) struct Sessions {
    pub(crate) builder: http1::Builder,
    pub(crate) app: Arc<App>,
    pub(crate) local: SocketAddr,
    /// Above this many open connections, sessions end after answering (see the module's note).
    pub(crate) rest_above: usize,
    pub(crate) stop: Stop,
}

type Io = TokioIo<Prefixed<ConnIo<TcpStream>>>;

/// Serves `io` until the client closes, hyper closes it, or the server stops; the socket closes when `io`
/// is dropped. The caller's watchdog bounds the rests as it bounds idle keep-alive: no byte moves.
pub(crate) async fn serve(
    sessions: Arc<Sessions>,
    mut io: ConnIo<TcpStream>,
    state: Arc<ConnState>,
) -> hyper::Result<()> {
    let mut prefix = Bytes::new();
    // A fresh session reserves its read buffer at once: above the threshold a new connection rests until
    // its first byte, or 10,000 connections made at once would each hold one until their first request.
    if sessions.app.metrics.connections_open() > sessions.rest_above
        && !rest(&io, &sessions.stop).await
    {
        return Ok(());
    }
    loop {
        let (app, conn_state, local) = (sessions.app.clone(), state.clone(), sessions.local);
        let svc = service_fn(move |req| {
            conn_state.request_started();
            service::handle(app.clone(), conn_state.clone(), local, req)
        });
        // Boxed: a resting connection's task then holds no room for a session.
        let mut conn = Box::new(
            sessions
                .builder
                .serve_connection(TokioIo::new(Prefixed::new(prefix, io)), svc),
        );
        if !session(&mut conn, &sessions, &state).await? {
            return Ok(());
        }
        sessions.app.metrics.connection_rested();
        let parts = conn.into_parts();
        let (unread, inner) = parts.io.into_inner().into_parts();
        io = inner;
        state.set_resting(false);
        prefix = join(parts.read_buf, unread);
        if prefix.is_empty() && !rest(&io, &sessions.stop).await {
            return Ok(());
        }
        if sessions.stop.is_stopped() {
            return Ok(());
        }
    }
}

/// Drives one session to its end; true when it ended for a rest (the connection stays open).
async fn session<S>(
    conn: &mut http1::Connection<Io, S>,
    sessions: &Sessions,
    state: &ConnState,
) -> hyper::Result<bool>
where
    S: HttpService<Incoming, ResBody = ResponseBody, Error = Infallible>,
    http1::Connection<Io, S>: Unpin,
{
    let from = state.heads();
    // Polled only when a stop wakes it, not on each of the session's many wakes.
    let mut stop = pin!(on_own_wake(sessions.stop.stopped()));
    let mut ending = false;
    poll_fn(|cx| loop {
        if let Poll::Ready(res) = Pin::new(&mut *conn).poll(cx) {
            return Poll::Ready(res.map(|()| state.resting()));
        }
        if ending {
            return Poll::Pending;
        }
        if stop.as_mut().poll(cx).is_ready() {
            // As hyper-util's graceful shutdown: finish what is in flight, close when idle.
            ending = true;
            Pin::new(&mut *conn).graceful_shutdown();
            continue;
        }
        // After the answer's head is written (it is, once the service has answered), ending keep-alive
        // adds no `Connection: close`: hyper finishes the answer, flushes it and ends the session.
        let open = sessions.app.metrics.connections_open();
        if open > sessions.rest_above && state.may_rest(from) {
            ending = true;
            state.set_resting(true);
            Pin::new(&mut *conn).graceful_shutdown();
            continue;
        }
        return Poll::Pending;
    })
    .await
}

/// Waits for the client's next byte without reading it (no buffer); false if the connection is to close
/// instead: the client closed it, it failed, or the server stops.
async fn rest(io: &ConnIo<TcpStream>, stop: &Stop) -> bool {
    let mut byte = [0u8; 1];
    tokio::select! {
        biased;
        () = stop.stopped() => false,
        peeked = io.get_ref().peek(&mut byte) => matches!(peeked, Ok(n) if n > 0),
    }
}

/// What the next session reads first: what hyper had read and not parsed, then what it had not read of
/// its own prefix. Empty ones are dropped, not kept: an empty `Bytes` cut from hyper's read buffer still
/// holds all of its 8 KiB (a resting connection kept it: 8.2 KiB a connection instead of 2).
fn join(read_buf: Bytes, unread: Bytes) -> Bytes {
    match (read_buf.is_empty(), unread.is_empty()) {
        (true, true) => Bytes::new(),
        (false, true) => read_buf,
        (true, false) => unread,
        (false, false) => {
            let mut both = BytesMut::with_capacity(read_buf.len() + unread.len());
            both.extend_from_slice(&read_buf);
            both.extend_from_slice(&unread);
            both.freeze()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nothing left to read holds no buffer.
    #[test]
    fn an_empty_join_holds_no_buffer() {
        let mut buf = BytesMut::with_capacity(8192);
        buf.extend_from_slice(b"GET");
        let mut read_buf = buf.freeze();
        read_buf.clear();
        let joined = join(read_buf, Bytes::new());
        assert!(joined.is_empty());
        // `Bytes::new()` is static: dropping the last reference to hyper's buffer frees it.
        assert_eq!(joined, Bytes::new());
        assert_eq!(
            join(Bytes::from_static(b"GE"), Bytes::from_static(b"T ")),
            "GET "
        );
    }
}
