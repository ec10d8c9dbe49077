//! A worker's own timer: one timerfd per worker thread, read through tokio's I/O driver, in place of tokio's
//! time driver. The workers' runtimes are built without that driver, whose clock reads on every turn of the
//! runtime and timer-wheel entry per call cost instructions on every call; here a sleep costs nothing until
//! it is polled, and the per-call timeout is the watchdog's (`watchdog.rs`), not a sleep per call.
//!
//! Sleeps register their deadline and waker; the timerfd is armed for the earliest, and [`Timer::drive`] (a
//! task of the worker) wakes those that are due when it fires.

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::io;
use std::os::fd::{AsFd as _, AsRawFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use tokio::io::unix::AsyncFd;
use tokio::time::Instant;

/// The timerfd, as tokio's `AsyncFd` takes it.
#[derive(Debug)]
struct Fd(TimerFd);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

/// The sleeps waiting for their deadline: an entry per sleep (reused once it ends, with a new generation),
/// and a heap of deadlines whose stale items (sleeps dropped before their time) are skipped when they
/// surface. O(log n) a sleep, so that an open loop of thousands of connections per worker stays cheap.
#[derive(Debug, Default)]
struct Waiting {
    entries: Vec<Entry>,
    free: Vec<usize>,
    heap: BinaryHeap<Reverse<(Instant, usize, u64)>>,
}

#[derive(Debug, Default)]
struct Entry {
    generation: u64,
    waker: Option<Waker>,
}

/// A sleep's entry: its index and generation.
type Key = (usize, u64);

impl Waiting {
    fn add(&mut self, at: Instant, waker: Waker) -> Key {
        let i = self.free.pop().unwrap_or_else(|| {
            self.entries.push(Entry::default());
            self.entries.len() - 1
        });
        let e = &mut self.entries[i];
        e.generation += 1;
        e.waker = Some(waker);
        self.heap.push(Reverse((at, i, e.generation)));
        (i, e.generation)
    }

    /// The entry of `key` if it still waits.
    fn get(&mut self, (i, generation): Key) -> Option<&mut Entry> {
        self.entries
            .get_mut(i)
            .filter(|e| e.generation == generation && e.waker.is_some())
    }

    fn remove(&mut self, key: Key) {
        if let Some(e) = self.get(key) {
            e.waker = None;
            self.free.push(key.0);
        }
    }

    /// Wakes and removes the sleeps due at `now`; the earliest deadline still waiting.
    fn wake_due(&mut self, now: Instant) -> Option<Instant> {
        while let Some(&Reverse((at, i, generation))) = self.heap.peek() {
            let live = self.get((i, generation)).is_some();
            if live && at > now {
                return Some(at);
            }
            self.heap.pop();
            if live {
                if let Some(w) = self.entries[i].waker.take() {
                    w.wake();
                }
                self.free.push(i);
            }
        }
        None
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.entries.iter().all(|e| e.waker.is_none())
    }
}

/// One worker's timer (not `Send`: it lives on the worker's thread, inside its runtime).
#[derive(Debug)]
pub(super) struct Timer {
    fd: AsyncFd<Fd>,
    waiting: RefCell<Waiting>,
    /// When the timerfd fires next (`None`: disarmed).
    armed: Cell<Option<Instant>>,
}

impl Timer {
    /// A timer on this thread's runtime (which must have its I/O driver).
    pub(super) fn new() -> io::Result<Timer> {
        let fd = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        // tokio 1.54 deprecates the safe registration for an unsafe one whose condition (the fd stays valid
        // and the same while registered) holds here: `Fd` owns its timerfd for its whole life. The crate
        // denies unsafe code, so the safe call stays.
        #[allow(deprecated)]
        let fd = AsyncFd::new(Fd(fd))?;
        Ok(Timer {
            fd,
            waiting: RefCell::new(Waiting::default()),
            armed: Cell::new(None),
        })
    }

    /// Completes at `at` (at once if it has passed).
    pub(super) fn sleep_until(&self, at: Instant) -> Sleep<'_> {
        Sleep {
            timer: self,
            at,
            key: None,
        }
    }

    /// Completes after `d`.
    pub(super) fn sleep(&self, d: Duration) -> Sleep<'_> {
        self.sleep_until(Instant::now() + d)
    }

    /// `f`'s output, or `None` if it has none within `d`.
    pub(super) async fn timeout<F: Future>(&self, d: Duration, f: F) -> Option<F::Output> {
        let sleep = self.sleep(d);
        tokio::select! {
            biased;
            r = f => Some(r),
            _ = sleep => None,
        }
    }

    /// Wakes the sleeps that are due each time the timerfd fires; runs until the worker ends (an error of
    /// the timerfd ends it, and the sleeps waiting then are never woken: reported, not hidden).
    pub(super) async fn drive(&self) -> io::Result<()> {
        loop {
            let mut ready = self.fd.readable().await?;
            let mut expirations = [0u8; 8];
            match ready.try_io(|fd| Ok(nix::unistd::read(&fd.get_ref().0, &mut expirations)?)) {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => continue,
            }
            self.armed.set(None);
            let now = Instant::now();
            let next = self.waiting.borrow_mut().wake_due(now);
            if let Some(next) = next {
                self.arm(next, now)?;
            }
        }
    }

    /// Arms the timerfd for `at` unless it fires earlier already.
    fn arm(&self, at: Instant, now: Instant) -> io::Result<()> {
        if self.armed.get().is_some_and(|a| a <= at) {
            return Ok(());
        }
        // Relative to `now` (Instant reads CLOCK_MONOTONIC too); never zero, which would disarm it.
        let after = at
            .saturating_duration_since(now)
            .max(Duration::from_nanos(1));
        self.fd.get_ref().0.set(
            Expiration::OneShot(TimeSpec::from_duration(after)),
            TimerSetTimeFlags::empty(),
        )?;
        self.armed.set(Some(at));
        Ok(())
    }
}

/// The future of [`Timer::sleep_until`].
#[derive(Debug)]
pub(super) struct Sleep<'a> {
    timer: &'a Timer,
    at: Instant,
    /// Its entry among the timer's waiting sleeps, once polled.
    key: Option<Key>,
}

impl Future for Sleep<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let now = Instant::now();
        let (t, at) = (self.timer, self.at);
        let mut waiting = t.waiting.borrow_mut();
        if now >= at {
            if let Some(key) = self.key.take() {
                waiting.remove(key);
            }
            return Poll::Ready(());
        }
        let entry = self.key.and_then(|k| waiting.get(k));
        match entry {
            Some(e) => {
                if let Some(w) = &mut e.waker {
                    w.clone_from(cx.waker());
                }
            }
            // First poll, or woken before it was due (a clock that reads a little early must not lose it).
            None => self.key = Some(waiting.add(at, cx.waker().clone())),
        }
        drop(waiting);
        if let Err(e) = t.arm(at, now) {
            // A timerfd that cannot be set is a broken worker: said, and the sleep ends now rather than
            // never (a hang would hide it).
            tracing::error!("worker timer: cannot arm its timerfd: {e}");
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

impl Drop for Sleep<'_> {
    fn drop(&mut self) {
        if let Some(key) = self.key {
            self.timer.waiting.borrow_mut().remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local<F: Future>(f: impl FnOnce(std::rc::Rc<Timer>) -> F) -> F::Output {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        local.block_on(&rt, async {
            let timer = std::rc::Rc::new(Timer::new().unwrap());
            let driver = timer.clone();
            tokio::task::spawn_local(async move { driver.drive().await });
            f(timer).await
        })
    }

    #[test]
    fn sleeps_end_in_deadline_order_without_the_time_driver() {
        let order = local(|timer| async move {
            let t0 = Instant::now();
            let done = RefCell::new(Vec::new());
            let nap = |ms: u64| {
                let (timer, done) = (&timer, &done);
                async move {
                    timer.sleep(Duration::from_millis(ms)).await;
                    assert!(t0.elapsed() >= Duration::from_millis(ms));
                    done.borrow_mut().push(ms);
                }
            };
            tokio::join!(nap(30), nap(10), nap(20));
            let never = std::future::pending::<()>();
            assert!(timer
                .timeout(Duration::from_millis(5), never)
                .await
                .is_none());
            assert_eq!(
                timer.timeout(Duration::from_secs(5), async { 7 }).await,
                Some(7)
            );
            assert!(
                timer.waiting.borrow().is_empty(),
                "ended sleeps are forgotten"
            );
            done.into_inner()
        });
        assert_eq!(order, [10, 20, 30]);
    }
}
