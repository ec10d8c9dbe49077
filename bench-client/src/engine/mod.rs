//! The load engine: thread-per-core workers (one current-thread tokio runtime each), connections spread
//! over them, per-worker measurements handed over once per interval and merged by the collector.
//!
//! Lifecycle, driven by the `run` command: [`start`] spawns the workers, which connect; [`Running::connected`]
//! waits for every connection attempt; [`Running::go`] starts the clock (warm-up, then the measured
//! interval); [`Running::next`] reports each interval as it closes, then the end; [`Running::stop`] ends
//! early (SIGINT); [`Running::finish`] closes the last interval.

pub mod bench_api;
mod broken;
mod clock;
mod collect;
mod conn;
mod exchange;
mod lean;
mod link;
mod resolve;
mod schedule;
mod stats;
mod timer;
mod tls;
pub mod verify;
mod watchdog;
mod worker;

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

pub use clock::{Clock, Start};
pub use collect::{Closed, Event, RunStats, StageTally};
pub use schedule::Schedule;
pub use stats::{OpTally, Tally, Timed, WorkerStats};
pub use tls::any_certificate;

use crate::config::RunConfig;
use crate::progress::Progress;
use crate::workload::Workload;

/// A run in progress.
#[derive(Debug)]
pub struct Running {
    cfg: Arc<RunConfig>,
    start_tx: watch::Sender<Option<Start>>,
    stop_tx: watch::Sender<bool>,
    ready_rx: mpsc::UnboundedReceiver<()>,
    collector: collect::Collector,
    threads: Vec<std::thread::JoinHandle<()>>,
    pub progress: Arc<Progress>,
}

/// Spawns the worker threads; each connects its share of the connections and waits for [`Running::go`].
/// `server`: read as each interval closes (`--monitor-pid`, `--agent`).
pub fn start(
    cfg: Arc<RunConfig>,
    workload: Arc<Workload>,
    server: Option<crate::readings::Gauge>,
) -> anyhow::Result<Running> {
    let threads = cfg.threads as usize;
    let (start_tx, start_rx) = watch::channel(None);
    let (stop_tx, stop_rx) = watch::channel(false);
    let (ready_tx, ready_rx) = mpsc::unbounded_channel();
    let (report_tx, report_rx) = mpsc::unbounded_channel();
    let progress = Progress::new(threads);
    let connector = exchange::Connector::new(&cfg).context("setting up TLS")?;
    let mut running = Running {
        cfg: cfg.clone(),
        start_tx,
        stop_tx,
        ready_rx,
        collector: collect::Collector::new(
            report_rx,
            threads,
            cfg.interval,
            collect::Shape {
                open_loop: cfg.open_loop(),
                ops: mix_ops(&cfg),
                stages: cfg.shape.stages.as_ref().map_or(0, |s| s.list().len()),
            },
            server,
        ),
        threads: Vec::with_capacity(threads),
        progress: progress.clone(),
    };
    for w in 0..threads {
        let conns: Vec<u64> = (0..cfg.clients)
            .filter(|c| *c as usize % threads == w)
            .collect();
        let ctx = worker::Ctx {
            worker: w,
            conns,
            cfg: cfg.clone(),
            workload: workload.clone(),
            connector: connector.clone(),
            progress: progress.clone(),
            start: start_rx.clone(),
            stop: stop_rx.clone(),
            ready: ready_tx.clone(),
            report: report_tx.clone(),
        };
        let handle = std::thread::Builder::new()
            .name(format!("bench-worker-{w}"))
            .spawn(move || worker::main(ctx))
            .context("spawning a worker thread")?;
        running.threads.push(handle);
    }
    Ok(running)
}

/// The operations a tally keeps apart: a mix's (0 without one: the totals are the one operation's).
fn mix_ops(cfg: &RunConfig) -> usize {
    cfg.shape.mix.as_ref().map_or(0, |m| m.entries.len())
}

impl Running {
    /// Waits until every connection has made its first connection attempt (failures are retried, and
    /// counted, once the clock runs).
    pub async fn connected(&mut self) {
        for _ in 0..self.cfg.clients {
            if self.ready_rx.recv().await.is_none() {
                return; // every worker is gone: next() reports why
            }
        }
    }

    /// Starts the clock now.
    pub fn go(&self) -> Start {
        let t0 = Instant::now();
        let measure_start = t0 + self.cfg.warmup;
        let start = Start {
            t0,
            measure_start,
            deadline: self.cfg.duration().map(|d| measure_start + d),
        };
        self.start_tx.send_replace(Some(start));
        start
    }

    /// Ends the run early: calls in flight are abandoned (neither counted nor recorded).
    pub fn stop(&self) {
        self.stop_tx.send_replace(true);
    }

    /// The next interval to close, or the end of every worker (cancel-safe: may be raced against a signal).
    pub async fn next(&mut self) -> anyhow::Result<Event> {
        self.collector.next().await
    }

    /// Whether the collector already has the next event (a checkpoint now would be overtaken at once).
    pub fn behind(&mut self) -> bool {
        self.collector.behind()
    }

    /// The measurements of every interval closed so far (a checkpoint's).
    pub fn snapshot(&self) -> RunStats {
        self.collector.stats()
    }

    /// When the last call completed (once [`Event::Finished`] has come).
    pub(crate) fn last_completion(&self) -> Option<Instant> {
        self.collector.last_completion()
    }

    /// Closes the last interval at `elapsed` (call after [`Event::Finished`]) and returns the whole run,
    /// with the last interval's latencies for `--hlog`.
    pub fn finish(mut self, elapsed: Duration) -> (RunStats, Option<Closed>) {
        let last = self.collector.finish(elapsed);
        for t in std::mem::take(&mut self.threads) {
            let _ = t.join();
        }
        (self.collector.stats(), last)
    }
}
