//! The load engine: thread-per-core workers (one current-thread tokio runtime each), connections spread
//! over them, per-worker measurements merged once at the end.
//!
//! Lifecycle, driven by the `run` command: [`start`] spawns the workers, which connect; [`Running::connected`]
//! waits for every connection attempt; [`Running::go`] starts the clock (warm-up, then the measured
//! interval); [`Running::stop`] ends early (SIGINT); [`Running::finish`] collects and merges.

pub mod bench_api;
mod broken;
mod clock;
mod conn;
mod exchange;
mod lean;
mod link;
mod schedule;
mod stats;
mod tls;
mod worker;

use std::sync::Arc;

use anyhow::Context as _;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

pub use clock::Start;
pub use schedule::Schedule;
pub use stats::{RunStats, WorkerStats};

use crate::config::RunConfig;
use crate::hlog::IntervalMsg;
use crate::progress::Progress;
use crate::workload::Workload;

/// A run in progress.
#[derive(Debug)]
pub struct Running {
    cfg: Arc<RunConfig>,
    start_tx: watch::Sender<Option<Start>>,
    stop_tx: watch::Sender<bool>,
    ready_rx: mpsc::UnboundedReceiver<()>,
    results: Vec<Option<oneshot::Receiver<WorkerStats>>>,
    collected: Vec<WorkerStats>,
    threads: Vec<std::thread::JoinHandle<()>>,
    pub progress: Arc<Progress>,
}

/// Spawns the worker threads; each connects its share of the connections and waits for [`Running::go`].
pub fn start(
    cfg: Arc<RunConfig>,
    workload: Arc<Workload>,
    hlog: Option<mpsc::UnboundedSender<IntervalMsg>>,
) -> anyhow::Result<Running> {
    let threads = cfg.threads as usize;
    let (start_tx, start_rx) = watch::channel(None);
    let (stop_tx, stop_rx) = watch::channel(false);
    let (ready_tx, ready_rx) = mpsc::unbounded_channel();
    let progress = Progress::new(threads);
    let connector = exchange::Connector::new(&cfg).context("setting up TLS")?;
    let mut running = Running {
        cfg: cfg.clone(),
        start_tx,
        stop_tx,
        ready_rx,
        results: Vec::with_capacity(threads),
        collected: Vec::with_capacity(threads),
        threads: Vec::with_capacity(threads),
        progress: progress.clone(),
    };
    for w in 0..threads {
        let conns: Vec<u64> = (0..cfg.clients)
            .filter(|c| *c as usize % threads == w)
            .collect();
        let (result_tx, result_rx) = oneshot::channel();
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
            hlog: hlog.clone(),
            result: result_tx,
        };
        let handle = std::thread::Builder::new()
            .name(format!("bench-worker-{w}"))
            .spawn(move || worker::main(ctx))
            .context("spawning a worker thread")?;
        running.results.push(Some(result_rx));
        running.threads.push(handle);
    }
    Ok(running)
}

impl Running {
    /// Waits until every connection has made its first connection attempt (failures are retried, and
    /// counted, once the clock runs).
    pub async fn connected(&mut self) {
        for _ in 0..self.cfg.clients {
            if self.ready_rx.recv().await.is_none() {
                return; // every worker is gone: finish() reports why
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

    /// Waits until every worker has finished (cancel-safe: may be raced against a signal).
    pub async fn done(&mut self) -> anyhow::Result<()> {
        for slot in &mut self.results {
            if let Some(rx) = slot {
                let stats = rx
                    .await
                    .context("a worker thread failed (see its message above)")?;
                self.collected.push(stats);
                *slot = None;
            }
        }
        Ok(())
    }

    /// Waits for every worker and merges their measurements.
    pub async fn finish(mut self) -> anyhow::Result<RunStats> {
        self.done().await?;
        for t in self.threads {
            let _ = t.join();
        }
        Ok(RunStats::merge(self.collected, self.cfg.rate.is_some()))
    }
}
