//! The per-connection watchdog: closes a connection on which nothing moved for the idle timeout, whose
//! output has been blocked (the peer not reading) for the send timeout, or whose request head has been
//! arriving for the header timeout. One timer per connection, ticking at a quarter of the shortest timeout;
//! nothing is reset per read, write or request (hyper's own header timeout armed and dropped a timer for
//! every request: about 1,400 instructions each). The connection's task wakes several times per request,
//! so the watchdog is polled only when its own timer woke it ([`on_own_wake`]).

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
    /// A request head began to arrive and was not complete within the header timeout (while no output
    /// moved: time spent writing an answer to a slow reader is not the head's).
    HeaderTimeout,
}

/// The connection's timeouts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    pub(crate) idle: Duration,
    pub(crate) send: Duration,
    pub(crate) header: Duration,
}

/// Completes when the connection is to be closed, saying why. A connection is closed between one timeout
/// and one timeout plus a tick after the condition began.
pub(crate) async fn watchdog(state: Arc<ConnState>, timeouts: Timeouts) -> Cut {
    let tick =
        (timeouts.idle.min(timeouts.send).min(timeouts.header) / 4).max(Duration::from_millis(1));
    let mut counts = Counts::new(timeouts, tick);
    let mut timer = interval_at(Instant::now() + tick, tick);
    timer.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        timer.tick().await;
        let seen = Seen {
            read: state.read_moved.swap(false, Relaxed),
            wrote: state.write_moved.swap(false, Relaxed),
            write_blocked: state.write_blocked.load(Relaxed),
            head_started: state.head_started(),
            heads: state.heads(),
        };
        if let Some(cut) = counts.tick(seen) {
            return cut;
        }
    }
}

/// What one tick found.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    read: bool,
    wrote: bool,
    write_blocked: bool,
    /// Bytes of a request head have arrived and the head is not complete.
    head_started: bool,
    /// Request heads completed so far.
    heads: u64,
}

/// The ticks counted towards each timeout: the watchdog's decisions, apart from its timer.
#[derive(Debug)]
struct Counts {
    idle_ticks: u128,
    send_ticks: u128,
    header_ticks: u128,
    quiet: u128,
    stalled: u128,
    heading: u128,
    heads: u64,
}

impl Counts {
    fn new(timeouts: Timeouts, tick: Duration) -> Self {
        let ticks = |d: Duration| d.as_nanos().div_ceil(tick.as_nanos()).max(1);
        Self {
            idle_ticks: ticks(timeouts.idle),
            send_ticks: ticks(timeouts.send),
            header_ticks: ticks(timeouts.header),
            quiet: 0,
            stalled: 0,
            heading: 0,
            heads: 0,
        }
    }

    fn tick(&mut self, seen: Seen) -> Option<Cut> {
        self.quiet = if seen.read || seen.wrote {
            0
        } else {
            self.quiet + 1
        };
        self.stalled = if seen.wrote || !seen.write_blocked {
            0
        } else {
            self.stalled + 1
        };
        // A head completed since the last tick starts the count again: one head's wait is not the next's.
        if seen.heads != self.heads || !seen.head_started {
            self.heads = seen.heads;
            self.heading = 0;
        }
        if seen.head_started && !seen.wrote {
            self.heading += 1;
        }
        if self.stalled >= self.send_ticks {
            return Some(Cut::SendStalled);
        }
        if self.heading >= self.header_ticks {
            return Some(Cut::HeaderTimeout);
        }
        if self.quiet >= self.idle_ticks {
            return Some(Cut::Idle);
        }
        None
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

    fn counts(header_ticks: u32) -> Counts {
        let tick = Duration::from_millis(10);
        Counts::new(
            Timeouts {
                idle: tick * 100,
                send: tick * 100,
                header: tick * header_ticks,
            },
            tick,
        )
    }

    /// A head that keeps trickling in is cut after the header timeout, reads or not.
    #[test]
    fn a_head_arriving_for_the_header_timeout_is_cut() {
        let mut c = counts(4);
        let trickle = Seen {
            read: true,
            head_started: true,
            ..Seen::default()
        };
        for _ in 0..3 {
            assert_eq!(c.tick(trickle), None);
        }
        assert_eq!(c.tick(trickle), Some(Cut::HeaderTimeout));
    }

    /// Heads completed between ticks restart the count: a busy keep-alive connection, always with a head on
    /// its way, is never cut; nor is one writing an answer while the next head waits behind it.
    #[test]
    fn completed_heads_and_moving_output_stop_the_count() {
        let mut c = counts(4);
        for heads in 0..100 {
            let busy = Seen {
                read: true,
                head_started: true,
                heads,
                ..Seen::default()
            };
            assert_eq!(c.tick(busy), None);
        }
        let writing = Seen {
            wrote: true,
            head_started: true,
            heads: 100,
            ..Seen::default()
        };
        for _ in 0..50 {
            assert_eq!(c.tick(writing), None);
        }
        // Then the output stops: the head's own wait begins.
        let waiting = Seen {
            read: true,
            wrote: false,
            ..writing
        };
        assert_eq!(c.tick(waiting), None);
        assert_eq!(c.tick(waiting), None);
        assert_eq!(c.tick(waiting), None);
        assert_eq!(c.tick(waiting), Some(Cut::HeaderTimeout));
    }

    /// No head on its way: only the idle timeout applies.
    #[test]
    fn an_idle_connection_is_cut_by_the_idle_timeout_only() {
        let mut c = counts(2);
        for _ in 0..99 {
            assert_eq!(c.tick(Seen::default()), None);
        }
        assert_eq!(c.tick(Seen::default()), Some(Cut::Idle));
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
