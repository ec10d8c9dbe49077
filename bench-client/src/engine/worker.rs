//! A worker thread: a current-thread tokio runtime running its connections as local tasks that share the
//! worker's measurements without locks, and a ticker that hands the interval's tally to the collector at
//! each interval's end. The runtime has no time driver: the worker's own timer (`timer.rs`) and watchdog
//! (`watchdog.rs`) keep its time, for less work per call.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::task::LocalSet;
use tokio::time::Instant;

use super::clock::Start;
use super::conn::{self, Shared};
use super::exchange::Connector;
use super::stats::{Report, WorkerStats};
use super::timer::Timer;
use super::watchdog::{self, Slot};
use crate::config::RunConfig;
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
    pub report: mpsc::UnboundedSender<Report>,
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
    // I/O only: tokio's time driver would read the clock on every turn of the runtime.
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            // Dropping `ctx.report` unreported makes the collector fail with a clear error.
            tracing::error!("worker {}: cannot build its runtime: {e}", ctx.worker);
            return;
        }
    };
    let timer = match rt.block_on(async { Timer::new() }) {
        Ok(t) => Rc::new(t),
        Err(e) => {
            tracing::error!("worker {}: cannot make its timer: {e}", ctx.worker);
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
        report,
    } = ctx;
    let ops = cfg.shape.mix.as_ref().map_or(0, |m| m.entries.len());
    let stats = WorkerStats::new(cfg.open_loop(), ops, worker, report);
    let in_flight = conns.iter().map(|_| Slot::default()).collect();
    let shared = Rc::new(Shared {
        cfg,
        workload,
        stats: RefCell::new(stats),
        progress,
        worker,
        start: start.clone(),
        in_flight,
        connector,
        timer: timer.clone(),
    });
    let local = LocalSet::new();
    let done = Rc::new(Done::default());
    let finished = Finished(done.clone());
    // The control (end of all tasks, stop, deadline) is a task of its own: `block_on`'s future is polled
    // on every wake-up of any connection, and polling this select (two watch receivers, a sleep, a join
    // handle) per call cost more than the join handle polled instead.
    let control = control(shared.clone(), conns, ready, start, stop, finished);
    local.block_on(&rt, async {
        tokio::task::spawn_local(async move {
            if let Err(e) = timer.drive().await {
                tracing::error!("worker {worker}: its timer failed: {e}");
            }
        });
        let task = tokio::task::spawn_local(control);
        std::future::poll_fn(|cx| done.poll(cx)).await;
        if let Err(e) = task.await {
            tracing::error!("worker {worker}: its control task failed: {e}");
        }
    });
    shared.stats.borrow_mut().ship_last();
}

/// Runs the connections until they are done, the stop or the deadline; meanwhile ticks the intervals.
async fn control(
    shared: Rc<Shared>,
    conns: Vec<u64>,
    ready: mpsc::UnboundedSender<()>,
    mut start_rx: watch::Receiver<Option<Start>>,
    mut stop_rx: watch::Receiver<bool>,
    finished: Finished,
) {
    // Dropped at the end, or on a panic: either way `block_on` is told.
    let _finished = finished;
    let mut tasks: Vec<_> = conns
        .into_iter()
        .map(|c| tokio::task::spawn_local(conn::run(shared.clone(), c, ready.clone())))
        .collect();
    drop(ready);
    // How many handles `all_done` has consumed: awaiting one of those again would panic (a connection
    // task may end, e.g. on a call completing past the deadline, before the worker's deadline fires).
    let awaited = Cell::new(0);
    let worker = shared.worker;
    let all_done = async {
        for t in tasks.iter_mut() {
            if let Err(e) = t.await {
                tracing::error!("worker {worker}: a connection task failed: {e}");
            }
            awaited.set(awaited.get() + 1);
        }
    };
    let clock = async {
        let start = start_rx
            .wait_for(Option::is_some)
            .await
            .ok()
            .and_then(|s| *s);
        match start {
            Some(s) => ticks(&shared, s).await,
            None => std::future::pending().await,
        }
    };
    let cfg = shared.cfg.clone();
    let watchdog = watchdog::watch(&shared.in_flight, &shared.timer, cfg.timeout);
    let ended_early = tokio::select! {
        _ = all_done => false,
        _ = stop_rx.wait_for(|s| *s) => true,
        _ = clock => true,
        _ = watchdog => unreachable!("the watchdog watches until the worker ends"),
    };
    if ended_early {
        abandon_in_flight(&shared, *start_rx.borrow());
        let rest = tasks.split_off(awaited.get());
        for t in &rest {
            t.abort();
        }
        for t in rest {
            let _ = t.await;
        }
    }
}

/// Hands each interval's tally to the collector as the interval ends, and the tally so far at each stage's
/// end; returns at the deadline (the last interval, cut by it, goes with the worker's last report).
async fn ticks(shared: &Shared, start: Start) {
    let every = shared.cfg.interval;
    // Where each stage but the last ends (the last ends at the deadline).
    let stage_ends: Vec<Instant> = match &shared.cfg.shape.stages {
        Some(s) => {
            let spans = s.spans();
            let ends = spans[..spans.len() - 1].iter();
            ends.map(|p| start.measure_start + Duration::from_secs_f64(p.to_s))
                .collect()
        }
        None => Vec::new(),
    };
    let (mut k, mut next_stage) = (1u32, 0);
    loop {
        let tick = start.measure_start + every.saturating_mul(k);
        let stage_end = stage_ends.get(next_stage).copied();
        let boundary = stage_end.map_or(tick, |e| e.min(tick));
        if start.deadline.is_some_and(|d| boundary >= d) {
            break;
        }
        shared.timer.sleep_until(boundary).await;
        let mut st = shared.stats.borrow_mut();
        if boundary == tick {
            st.ship();
            k += 1;
        }
        if stage_end == Some(boundary) {
            st.end_stage();
            next_stage += 1;
        }
    }
    match start.deadline {
        Some(d) => shared.timer.sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// Calls in flight when the run ends early are abandoned: not ok, but reported (how many, how long they
/// had waited), and those that had waited the timeout or longer are timeouts.
fn abandon_in_flight(shared: &Shared, start: Option<Start>) {
    let now = Instant::now();
    let end = match start {
        Some(Start {
            deadline: Some(d), ..
        }) => now.min(d),
        _ => now,
    };
    let mut st = shared.stats.borrow_mut();
    for (sent, op) in shared.in_flight.iter().filter_map(Slot::take) {
        st.record_in_flight(op, end.saturating_duration_since(sent), shared.cfg.timeout);
    }
}
