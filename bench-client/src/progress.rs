//! Live progress: per-worker counters the workers bump without locks, and an indicatif line that reads
//! them a few times a second — shown only when stdout is a terminal.

use std::io::IsTerminal as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use tokio::time::Instant;

use bench_proto::numbers::{thousands, thousands_f};

/// One worker's counters, on its own cache line so that workers never share one.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct WorkerCounter {
    ok: AtomicU64,
    errors: AtomicU64,
}

impl WorkerCounter {
    // Only the owning worker writes, so a plain load + store (no read-modify-write) is enough.
    #[inline]
    pub(crate) fn add_ok(&self) {
        self.ok.store(self.ok.load(Relaxed) + 1, Relaxed);
    }

    #[inline]
    pub(crate) fn add_error(&self) {
        self.add_errors(1);
    }

    #[inline]
    pub(crate) fn add_errors(&self, n: u64) {
        self.errors.store(self.errors.load(Relaxed) + n, Relaxed);
    }
}

/// The counters of all workers (measured calls only).
#[derive(Debug)]
pub struct Progress {
    workers: Vec<WorkerCounter>,
}

impl Progress {
    pub fn new(workers: usize) -> Arc<Progress> {
        Arc::new(Progress {
            workers: (0..workers).map(|_| WorkerCounter::default()).collect(),
        })
    }

    pub fn worker(&self, i: usize) -> &WorkerCounter {
        &self.workers[i]
    }

    /// (ok, errors) so far.
    pub fn totals(&self) -> (u64, u64) {
        self.workers.iter().fold((0, 0), |(o, e), w| {
            (o + w.ok.load(Relaxed), e + w.errors.load(Relaxed))
        })
    }
}

/// Draws the live line until dropped; `None` when stdout is not a terminal.
#[derive(Debug)]
pub struct Line {
    task: tokio::task::JoinHandle<()>,
    bar: ProgressBar,
}

impl Line {
    /// Starts the line on the current runtime, from the beginning of the measured interval.
    pub fn start(
        progress: Arc<Progress>,
        measure_start: Instant,
        total: Option<Duration>,
    ) -> Option<Line> {
        if !std::io::stdout().is_terminal() {
            return None;
        }
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        let b = bar.clone();
        let task = tokio::spawn(async move {
            let period = Duration::from_millis(250);
            let mut tick = tokio::time::interval_at(Instant::now() + period, period);
            let (mut last_ok, mut last_t) = (0, measure_start);
            loop {
                tick.tick().await;
                let now = Instant::now();
                let (ok, errors) = progress.totals();
                let dt = now.saturating_duration_since(last_t).as_secs_f64();
                let rate = if dt > 0.0 {
                    (ok - last_ok) as f64 / dt
                } else {
                    0.0
                };
                (last_ok, last_t) = (ok, now);
                let elapsed = now.saturating_duration_since(measure_start).as_secs_f64();
                let of = total
                    .map(|t| format!("/{:.0}s", t.as_secs_f64()))
                    .unwrap_or_default();
                b.set_message(format!(
                    "{elapsed:.1}s{of}  {} ok  {} req/s  {} errors",
                    thousands(ok),
                    thousands_f(rate, 0),
                    thousands(errors)
                ));
                b.tick();
            }
        });
        Some(Line { task, bar })
    }

    pub fn finish(self) {
        self.task.abort();
        self.bar.finish_and_clear();
    }
}
