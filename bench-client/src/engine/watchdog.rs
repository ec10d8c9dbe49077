//! The per-call timeout without a timer per call: each connection's call in flight is a [`Slot`] (when it was
//! sent, when it is due), and one watchdog per worker sleeps until the earliest due time among them, then
//! expires the calls that are past it, waking their connections; the worker's other connections go on.
//!
//! A call costs two clock-free stores into its slot instead of a timer-wheel entry. The watchdog never
//! sleeps past a due time: a call begun after its last look is due at least a whole timeout after that
//! look, and it sleeps at most one timeout.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::time::Instant;

use super::timer::Timer;

/// One connection's call in flight.
#[derive(Debug, Default)]
pub(super) struct Slot {
    /// When the call was sent (intended, in open loop): for the report of calls still waiting at the end.
    since: Cell<Option<Instant>>,
    /// When it times out (from its actual send).
    due: Cell<Option<Instant>>,
    expired: Cell<bool>,
    /// The call's operation (its index in a mix), for the report of calls still waiting at the end.
    op: Cell<usize>,
    /// The connection's task, to wake on expiry (kept across calls: it does not change).
    waker: RefCell<Option<Waker>>,
}

impl Slot {
    /// A call of operation `op` sent at (or meant for) `since` begins, due at `due`.
    #[inline]
    pub(super) fn begin(&self, since: Instant, due: Instant, op: usize) {
        self.op.set(op);
        self.since.set(Some(since));
        self.due.set(Some(due));
        self.expired.set(false);
    }

    /// The call completed (or timed out).
    #[inline]
    pub(super) fn end(&self) {
        self.since.set(None);
        self.due.set(None);
    }

    /// The call abandoned at the run's end, if one was in flight: when it was sent, and its operation.
    pub(super) fn take(&self) -> Option<(Instant, usize)> {
        self.due.set(None);
        Some((self.since.take()?, self.op.get()))
    }

    /// `call`'s output, or `None` if the watchdog expires the call first (a response that completes in the
    /// same turn wins). The call is pinned by the caller and not moved here: a call's future is large (it
    /// holds a reconnection's), and moving it cost a copy of kilobytes per call.
    pub(super) fn guard<'a, F: Future>(
        &'a self,
        mut call: Pin<&'a mut F>,
    ) -> impl Future<Output = Option<F::Output>> + 'a {
        std::future::poll_fn(move |cx| self.poll_guarded(call.as_mut(), cx))
    }

    #[inline]
    fn poll_guarded<F: Future>(
        &self,
        call: Pin<&mut F>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<F::Output>> {
        if let Poll::Ready(r) = call.poll(cx) {
            return Poll::Ready(Some(r));
        }
        if self.expired.get() {
            return Poll::Ready(None);
        }
        let mut w = self.waker.borrow_mut();
        if !w.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            *w = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    fn expire(&self) {
        self.due.set(None);
        self.expired.set(true);
        if let Some(w) = self.waker.borrow().as_ref() {
            w.wake_by_ref();
        }
    }
}

/// Expires the calls of `slots` that are past due, for as long as the worker runs.
pub(super) async fn watch(slots: &[Slot], timer: &Timer, timeout: Duration) {
    loop {
        let now = Instant::now();
        let mut next = now + timeout;
        for s in slots {
            match s.due.get() {
                Some(due) if due <= now => s.expire(),
                Some(due) => next = next.min(due),
                None => {}
            }
        }
        timer.sleep_until(next).await;
    }
}

#[cfg(test)]
mod tests {
    use std::pin::pin;
    use std::rc::Rc;

    use super::*;

    /// One connection's call hangs; the other's calls complete meanwhile and go on after it; the hung one
    /// times out at its due time, not before.
    #[test]
    fn a_hung_call_times_out_while_the_others_complete() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        local.block_on(&rt, async {
            let timer = Rc::new(Timer::new().unwrap());
            let driver = timer.clone();
            tokio::task::spawn_local(async move { driver.drive().await });
            let slots: Rc<[Slot]> = (0..2).map(|_| Slot::default()).collect();
            let timeout = Duration::from_millis(100);
            let (w_slots, w_timer) = (slots.clone(), timer.clone());
            tokio::task::spawn_local(async move { watch(&w_slots, &w_timer, timeout).await });
            let t0 = Instant::now();
            let hung = {
                let slots = slots.clone();
                tokio::task::spawn_local(async move {
                    slots[0].begin(t0, t0 + timeout, 0);
                    let r = slots[0].guard(pin!(std::future::pending::<()>())).await;
                    slots[0].end();
                    (r, t0.elapsed())
                })
            };
            let (mut before, mut after) = (0, 0);
            while after < 3 {
                let sent = Instant::now();
                slots[1].begin(sent, sent + timeout, 0);
                let r = slots[1]
                    .guard(pin!(timer.sleep(Duration::from_millis(5))))
                    .await;
                slots[1].end();
                assert!(r.is_some(), "a call that completes in time is not expired");
                if hung.is_finished() {
                    after += 1;
                } else {
                    before += 1;
                }
            }
            let (r, waited) = hung.await.unwrap();
            assert!(r.is_none(), "the hung call timed out");
            assert!(waited >= timeout, "{waited:?}");
            assert!(before >= 5, "only {before} calls completed while it hung");
        });
    }
}
