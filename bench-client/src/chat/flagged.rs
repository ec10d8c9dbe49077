//! A waker that remembers it fired, so a task can poll a group of rarely-ready futures (its control channel
//! and timers) only after one of them woke it, instead of on every wake-up its socket causes.
//!
//! The group's futures are polled with [`Flagged::context`]'s waker, which raises the flag and then wakes the
//! task. While the flag is down, every future of the group has registered that waker and none has fired
//! since, so skipping them loses nothing; the flag is raised again by whoever changes what the group must
//! poll (a timer armed) or consumes one of its events (the others may hold a stale registration).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Wake, Waker};

use atomic_waker::AtomicWaker;

/// Shared between the task and the futures holding its waker.
#[derive(Debug)]
struct Inner {
    fired: AtomicBool,
    /// The task's own waker, woken after the flag is raised (no lock: a waker may fire on any thread).
    task: AtomicWaker,
}

impl Wake for Inner {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.fired.store(true, Ordering::Release);
        self.task.wake();
    }
}

/// See the module documentation.
#[derive(Debug)]
pub(crate) struct Flagged {
    inner: Arc<Inner>,
    waker: Waker,
}

impl Flagged {
    /// Starts raised: the group has not been polled yet.
    pub(crate) fn new() -> Flagged {
        let inner = Arc::new(Inner {
            fired: AtomicBool::new(true),
            task: AtomicWaker::new(),
        });
        Flagged {
            waker: Waker::from(inner.clone()),
            inner,
        }
    }

    /// Raises the flag: the group must be polled at the next chance.
    pub(crate) fn raise(&self) {
        self.inner.fired.store(true, Ordering::Release);
    }

    /// Lowers the flag and returns whether it was raised (the group must then be polled, with
    /// [`Flagged::context`]).
    pub(crate) fn take(&self) -> bool {
        // Cheap test first: the common case (nothing fired) writes nothing.
        self.inner.fired.load(Ordering::Acquire) && self.inner.fired.swap(false, Ordering::AcqRel)
    }

    /// A context whose waker raises the flag, then wakes the task polling with `cx`.
    pub(crate) fn context(&self, cx: &Context<'_>) -> Context<'_> {
        self.inner.task.register(cx.waker());
        Context::from_waker(&self.waker)
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::pin;
    use std::task::Poll;

    use super::*;

    /// A task waker that counts its wakes.
    struct Count(std::sync::atomic::AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn a_wake_through_the_flag_raises_it_and_wakes_the_task() {
        let count = Arc::new(Count(Default::default()));
        let task = Waker::from(count.clone());
        let cx = Context::from_waker(&task);
        let flag = Flagged::new();
        assert!(flag.take(), "starts raised");
        assert!(!flag.take());

        let (tx, rx) = tokio::sync::oneshot::channel::<u8>();
        let mut rx = pin!(rx);
        assert!(rx.as_mut().poll(&mut flag.context(&cx)).is_pending());
        assert!(!flag.take(), "nothing fired yet");
        tx.send(7).unwrap();
        assert_eq!(count.0.load(Ordering::Relaxed), 1, "the task was woken");
        assert!(flag.take());
        assert_eq!(rx.poll(&mut flag.context(&cx)), Poll::Ready(Ok(7)));

        flag.raise();
        assert!(flag.take());
    }
}
