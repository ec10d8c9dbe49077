//! A byte budget shared by every connection: how much memory request bodies (or response bodies) may hold
//! at once, all connections together. Taking and returning bytes costs an atomic add; only work that
//! finds the budget spent waits, in a fair queue (tokio's `Notify`), woken a few at a time as bytes return.
//!
//! Two ways to take bytes: [`Budget::try_reserve`] / [`Budget::reserve`] are strict (never past the limit:
//! request bodies, whose size is known before they are read), and [`Budget::room`] + [`Budget::charge`]
//! admit a piece of work while the budget is below its limit and charge what it turned out to cost
//! (responses, whose size is known only once built). Built without awaiting, so the overshoot is at most
//! one response per worker.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use tokio::sync::Notify;

/// Returning this many bytes wakes one more waiter.
const WAKE_PER: usize = 64 * 1024;

#[derive(Debug)]
pub(crate) struct Budget {
    limit: usize,
    used: AtomicUsize,
    /// Work waiting for bytes (read on every release, without a lock).
    waiting: AtomicUsize,
    queue: Notify,
    /// Times work had to wait for the budget.
    waits: AtomicU64,
}

/// Bytes taken from a [`Budget`]; returned when dropped.
#[derive(Debug)]
pub(crate) struct Charge {
    budget: Arc<Budget>,
    bytes: usize,
}

/// Counts one waiter while it exists (however its wait ends, cancellation included).
struct Waiting<'a>(&'a Budget);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, SeqCst);
    }
}

impl Budget {
    pub(crate) fn new(limit: usize) -> Arc<Budget> {
        Arc::new(Budget {
            limit,
            used: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            queue: Notify::new(),
            waits: AtomicU64::new(0),
        })
    }

    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes held now.
    pub(crate) fn used(&self) -> usize {
        self.used.load(SeqCst)
    }

    /// Times work waited for the budget.
    pub(crate) fn waits(&self) -> u64 {
        self.waits.load(SeqCst)
    }

    /// True while the budget is below its limit.
    pub(crate) fn has_room(&self) -> bool {
        self.used.load(SeqCst) < self.limit
    }

    /// Charges `bytes` whatever the budget holds (after [`Budget::room`] admitted the work).
    pub(crate) fn charge(self: &Arc<Self>, bytes: usize) -> Charge {
        self.used.fetch_add(bytes, SeqCst);
        Charge {
            budget: self.clone(),
            bytes,
        }
    }

    /// Takes `bytes` if that keeps the budget within its limit.
    pub(crate) fn try_reserve(self: &Arc<Self>, bytes: usize) -> Option<Charge> {
        self.used
            .fetch_update(SeqCst, SeqCst, |used| {
                used.checked_add(bytes).filter(|&n| n <= self.limit)
            })
            .ok()
            .map(|_| Charge {
                budget: self.clone(),
                bytes,
            })
    }

    /// Waits until `bytes` can be reserved (it must not exceed the limit, or this waits forever).
    pub(crate) async fn reserve(self: &Arc<Self>, bytes: usize) -> Charge {
        debug_assert!(bytes <= self.limit);
        if let Some(charge) = self.try_reserve(bytes) {
            return charge;
        }
        self.wait_until(|| self.try_reserve(bytes)).await
    }

    /// Waits until the budget is below its limit.
    pub(crate) async fn room(&self) {
        if self.has_room() {
            return;
        }
        self.wait_until(|| self.has_room().then_some(())).await;
    }

    async fn wait_until<T>(&self, mut ready: impl FnMut() -> Option<T>) -> T {
        self.waits.fetch_add(1, SeqCst);
        self.waiting.fetch_add(1, SeqCst);
        let _waiting = Waiting(self);
        let got = loop {
            let woken = self.queue.notified();
            tokio::pin!(woken);
            // Queued before the check: bytes returned after it wake this waiter.
            woken.as_mut().enable();
            if let Some(got) = ready() {
                break got;
            }
            woken.await;
        };
        // Room may be left for the next in line.
        if self.has_room() && self.waiting.load(SeqCst) > 1 {
            self.queue.notify_one();
        }
        got
    }

    fn release(&self, bytes: usize) {
        self.used.fetch_sub(bytes, SeqCst);
        let waiting = self.waiting.load(SeqCst);
        if waiting > 0 {
            for _ in 0..waiting.min(1 + bytes / WAKE_PER) {
                self.queue.notify_one();
            }
        }
    }
}

impl Charge {
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Takes over `other`'s bytes (from the same budget), to be returned with this charge's.
    pub(crate) fn absorb(&mut self, mut other: Charge) {
        debug_assert!(Arc::ptr_eq(&self.budget, &other.budget));
        self.bytes += std::mem::take(&mut other.bytes);
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.budget.release(self.bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_reservations_stay_within_the_limit() {
        let b = Budget::new(100);
        let a = b.try_reserve(60).unwrap();
        assert!(b.try_reserve(41).is_none());
        let c = b.try_reserve(40).unwrap();
        assert_eq!(b.used(), 100);
        assert!(!b.has_room());
        drop(a);
        assert_eq!(b.used(), 40);
        drop(c);
        assert_eq!(b.used(), 0);
    }

    #[test]
    fn charges_admit_below_the_limit_and_may_overshoot() {
        let b = Budget::new(100);
        assert!(b.has_room());
        let big = b.charge(150);
        assert!(!b.has_room());
        drop(big);
        assert!(b.has_room());
    }

    #[tokio::test]
    async fn waiters_wake_as_bytes_return_and_cancelled_ones_pass_it_on() {
        let b = Budget::new(10);
        let held = b.charge(10);
        let (b1, b2) = (b.clone(), b.clone());
        let gone = tokio::spawn(async move { b1.room().await });
        let waiter = tokio::spawn(async move { b2.room().await });
        while b.waits() < 2 {
            tokio::task::yield_now().await;
        }
        gone.abort();
        let _ = gone.await;
        drop(held);
        waiter.await.unwrap();
        assert_eq!(b.waiting.load(SeqCst), 0);
    }

    #[tokio::test]
    async fn a_waiter_wakes_when_bytes_return() {
        let b = Budget::new(10);
        let held = b.try_reserve(10).unwrap();
        let b2 = b.clone();
        let waiter = tokio::spawn(async move { b2.reserve(5).await.bytes() });
        // The waiter is parked (counted) before the bytes return; then it must complete.
        while b.waits() == 0 {
            tokio::task::yield_now().await;
        }
        drop(held);
        assert_eq!(waiter.await.unwrap(), 5);
        assert_eq!(b.used(), 0);
    }
}
