//! A worker thread: a current-thread tokio runtime running its connections as local tasks that share the
//! worker's measurements without locks.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::LocalSet;
use tokio::time::Instant;

use super::clock::Start;
use super::conn::{self, Shared};
use super::exchange::Connector;
use super::stats::WorkerStats;
use crate::config::RunConfig;
use crate::hlog::IntervalMsg;
use crate::progress::Progress;
use crate::workload::Workload;

#[derive(Debug)]
pub(super) struct Ctx {
    pub worker: usize,
    pub conns: Vec<u64>,
    pub cfg: Arc<RunConfig>,
    pub workload: Arc<Workload>,
    pub connector: Connector,
    pub progress: Arc<Progress>,
    pub start: watch::Receiver<Option<Start>>,
    pub stop: watch::Receiver<bool>,
    pub ready: mpsc::UnboundedSender<()>,
    pub hlog: Option<mpsc::UnboundedSender<IntervalMsg>>,
    pub result: oneshot::Sender<WorkerStats>,
}

/// Whether the control task has ended. `block_on`'s future is polled on every wake-up of any connection
/// task; a flag and a stored waker cost less there than a join handle (which was 100 instructions a call).
#[derive(Debug, Default)]
struct Done {
    finished: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

impl Done {
    fn poll(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.finished.get() {
            return Poll::Ready(());
        }
        let mut w = self.waker.borrow_mut();
        if !w.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            *w = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// Marks the control task ended when dropped.
#[derive(Debug)]
struct Finished(Rc<Done>);

impl Drop for Finished {
    fn drop(&mut self) {
        self.0.finished.set(true);
        if let Some(w) = self.0.waker.borrow_mut().take() {
            w.wake();
        }
    }
}

pub(super) fn main(ctx: Ctx) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            // Dropping `ctx.result` makes `finish` fail with a clear error.
            tracing::error!("worker {}: cannot build its runtime: {e}", ctx.worker);
            return;
        }
    };
    let Ctx {
        worker,
        conns,
        cfg,
        workload,
        connector,
        progress,
        start,
        stop,
        ready,
        hlog,
        result,
    } = ctx;
    let stats = WorkerStats::new(cfg.rate.is_some(), hlog.map(|tx| (worker, tx)));
    let in_flight = conns.iter().map(|_| Cell::new(None)).collect();
    let shared = Rc::new(Shared {
        cfg,
        workload,
        stats: RefCell::new(stats),
        progress,
        worker,
        start: start.clone(),
        in_flight,
        connector,
    });
    let (mut start_rx, mut stop_rx) = (start, stop);
    let local = LocalSet::new();
    // The control (end of all tasks, stop, deadline) is a task of its own: `block_on`'s future is polled
    // on every wake-up of any connection, and polling this select (two watch receivers, a sleep, a join
    // handle) per call cost more than the join handle polled instead.
    let sh = shared.clone();
    let done = Rc::new(Done::default());
    let finished = Finished(done.clone());
    let control = async move {
        // Dropped at the end, or on a panic: either way `block_on` below is told.
        let _finished = finished;
        let shared = sh;
        let mut tasks: Vec<_> = conns
            .into_iter()
            .map(|c| tokio::task::spawn_local(conn::run(shared.clone(), c, ready.clone())))
            .collect();
        drop(ready);
        // How many handles `all_done` has consumed: awaiting one of those again would panic (a connection
        // task may end, e.g. on a call completing past the deadline, before the worker's deadline fires).
        let awaited = Cell::new(0);
        let all_done = async {
            for t in tasks.iter_mut() {
                if let Err(e) = t.await {
                    tracing::error!("worker {worker}: a connection task failed: {e}");
                }
                awaited.set(awaited.get() + 1);
            }
        };
        let deadline = async {
            let start = start_rx
                .wait_for(Option::is_some)
                .await
                .ok()
                .and_then(|s| *s);
            match start.and_then(|s| s.deadline) {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        let ended_early = tokio::select! {
            _ = all_done => false,
            _ = stop_rx.wait_for(|s| *s) => true,
            _ = deadline => true,
        };
        if ended_early {
            // Calls in flight are abandoned: not ok, but reported (how many, how long they had waited),
            // and those that had waited the timeout or longer are timeouts.
            let now = Instant::now();
            let end = match *start_rx.borrow() {
                Some(Start {
                    deadline: Some(d), ..
                }) => now.min(d),
                _ => now,
            };
            {
                let mut st = shared.stats.borrow_mut();
                for sent in shared.in_flight.iter().filter_map(Cell::take) {
                    st.record_in_flight(end.saturating_duration_since(sent), shared.cfg.timeout);
                }
            }
            let rest = tasks.split_off(awaited.get());
            for t in &rest {
                t.abort();
            }
            for t in rest {
                let _ = t.await;
            }
        }
    };
    local.block_on(&rt, async {
        let task = tokio::task::spawn_local(control);
        std::future::poll_fn(|cx| done.poll(cx)).await;
        if let Err(e) = task.await {
            tracing::error!("worker {worker}: its control task failed: {e}");
        }
    });
    let mut stats = shared.stats.replace(WorkerStats::new(false, None));
    stats.finish_intervals();
    let _ = result.send(stats);
}
