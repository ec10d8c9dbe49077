//! The per-connection watchdog: closes a connection on which nothing moved for the idle timeout, or whose
//! output has been blocked (the peer not reading) for the send timeout. One timer per connection, ticking
//! at a quarter of the shorter timeout; nothing is reset per read or write. The connection's task wakes
//! several times per request, so the watchdog is polled only when its own timer woke it ([`on_own_wake`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use tokio::time::{interval_at, Instant, MissedTickBehavior};

use super::conn_io::ConnState;

/// Why the watchdog closed a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// No byte moved either way for the idle timeout.
    Idle,
    /// Output waited on a full socket, without a byte written, for the send timeout.
    SendStalled,
}

/// Completes when the connection is to be closed, saying why. A connection is closed between one timeout
/// and one timeout plus a tick after the condition began.
pub(crate) async fn watchdog(state: Arc<ConnState>, idle: Duration, send: Duration) -> Cut {
    let tick = (idle.min(send) / 4).max(Duration::from_millis(1));
    let ticks = |d: Duration| d.as_nanos().div_ceil(tick.as_nanos()).max(1);
    let (idle_ticks, send_ticks) = (ticks(idle), ticks(send));
    let mut timer = interval_at(Instant::now() + tick, tick);
    timer.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let (mut quiet, mut stalled) = (0, 0);
    loop {
        timer.tick().await;
        let read = state.read_moved.swap(false, Relaxed);
        let wrote = state.write_moved.swap(false, Relaxed);
        quiet = if read || wrote { 0 } else { quiet + 1 };
        stalled = if wrote || !state.write_blocked.load(Relaxed) {
            0
        } else {
            stalled + 1
        };
        if stalled >= send_ticks {
            return Cut::SendStalled;
        }
        if quiet >= idle_ticks {
            return Cut::Idle;
        }
    }
}

/// `fut`, polled only on its first poll and after its own waker fired, not whenever the task that awaits it
/// wakes: polling the watchdog's interval on each of the connection task's wakes cost about 130
/// instructions each, several times per request.
pub(crate) fn on_own_wake<F: Future>(fut: F) -> OnOwnWake<F> {
    let wake = Arc::new(OwnWake {
        woken: AtomicBool::new(true),
        task: Mutex::new(None),
    });
    OnOwnWake {
        fut: Box::pin(fut),
        own: Waker::from(wake.clone()),
        wake,
        task: None,
    }
}

/// See [`on_own_wake`].
pub(crate) struct OnOwnWake<F> {
    fut: Pin<Box<F>>,
    wake: Arc<OwnWake>,
    /// The waker `fut` is polled with (it marks `wake` and wakes the task).
    own: Waker,
    /// The task's waker as last passed on to `wake` (compared without its lock).
    task: Option<Waker>,
}

/// Set by `fut`'s waker; forwards the wake to the awaiting task.
struct OwnWake {
    woken: AtomicBool,
    task: Mutex<Option<Waker>>,
}

impl Wake for OwnWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, SeqCst);
        if let Some(task) = &*self.task.lock().unwrap_or_else(PoisonError::into_inner) {
            task.wake_by_ref();
        }
    }
}

impl<F: Future> Future for OnOwnWake<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        if !this.task.as_ref().is_some_and(|t| t.will_wake(cx.waker())) {
            // A new task waker (once per connection): hand it over, and poll `fut` in case a wake was sent
            // to the old one.
            *this
                .wake
                .task
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(cx.waker().clone());
            this.task = Some(cx.waker().clone());
            this.wake.woken.store(true, SeqCst);
        }
        // Cleared before polling: a wake during or after the poll below polls `fut` again.
        if !this.wake.woken.swap(false, SeqCst) {
            return Poll::Pending;
        }
        this.fut.as_mut().poll(&mut Context::from_waker(&this.own))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Counts wakes of the task.
    struct Task(AtomicUsize);

    impl Wake for Task {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    /// Pending until polled after its waker was used; counts its polls.
    struct Inner {
        polls: Arc<AtomicUsize>,
        waker: Arc<Mutex<Option<Waker>>>,
    }

    impl Future for Inner {
        type Output = ();
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            let n = self.polls.fetch_add(1, SeqCst);
            if n > 0 {
                return Poll::Ready(());
            }
            *self.waker.lock().unwrap() = Some(cx.waker().clone());
            Poll::Pending
        }
    }

    #[test]
    fn polled_only_when_its_own_waker_fired() {
        let (polls, inner_waker) = (Arc::new(AtomicUsize::new(0)), Arc::default());
        let mut fut = on_own_wake(Inner {
            polls: polls.clone(),
            waker: Arc::clone(&inner_waker),
        });
        let task = Arc::new(Task(AtomicUsize::new(0)));
        let waker = Waker::from(task.clone());
        let mut cx = Context::from_waker(&waker);
        // First poll reaches it; the task's other wakes do not.
        for _ in 0..3 {
            assert!(Pin::new(&mut fut).poll(&mut cx).is_pending());
        }
        assert_eq!(polls.load(SeqCst), 1);
        // Its own wake reaches the task, and the next poll reaches it.
        inner_waker.lock().unwrap().take().unwrap().wake();
        assert_eq!(task.0.load(SeqCst), 1);
        assert!(Pin::new(&mut fut).poll(&mut cx).is_ready());
        assert_eq!(polls.load(SeqCst), 2);
    }
}
