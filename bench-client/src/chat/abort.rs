//! A user's work, cut off wherever it waits (connecting, writing, reading, waiting for the clock) once the
//! run is aborted: a user blocked on a server that stopped reading still ends at once.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::task::Poll;

use tokio::sync::oneshot;

use super::flagged::Flagged;

/// Runs `work` to its end, or until `abort` fires (or its sender is gone): `None` then, `work` dropped
/// where it was. `abort` is polled only once it has woken the task, not on each of the socket's wake-ups.
pub(crate) async fn unless_aborted<T>(
    work: impl Future<Output = T>,
    abort: oneshot::Receiver<()>,
) -> Option<T> {
    let flag = Flagged::new();
    let mut work = pin!(work);
    let mut abort = pin!(abort);
    poll_fn(|cx| {
        if flag.take() && abort.as_mut().poll(&mut flag.context(cx)).is_ready() {
            return Poll::Ready(None);
        }
        work.as_mut().poll(cx).map(Some)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn work_ends_or_is_cut_off() {
        let (_keep, abort) = oneshot::channel();
        assert_eq!(unless_aborted(async { 7 }, abort).await, Some(7));

        let (fire, abort) = oneshot::channel();
        let (_never, waits) = oneshot::channel::<()>();
        let run = tokio::spawn(unless_aborted(waits, abort));
        fire.send(()).unwrap();
        assert_eq!(run.await.unwrap(), None);

        let (gone, abort) = oneshot::channel::<()>();
        drop(gone);
        let (_never, waits) = oneshot::channel::<()>();
        assert_eq!(unless_aborted(waits, abort).await, None);
    }
}
