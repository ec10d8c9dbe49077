//! The request load's pipeline (the library entry of `bench-client run`): prepares the requests, runs the
//! engine, stops early when asked, samples CPU and the monitored process, writes `--hlog`, and builds the
//! results document.

use std::sync::Arc;
use std::time::SystemTime;

use anyhow::Context as _;
use bench_proto::results::{ErrorKind, ResultsDoc};
use tokio::sync::watch;
use tokio::time::{sleep_until, Instant};

use crate::config::RunConfig;
use crate::cpu::CpuTime;
use crate::engine;
use crate::monitor::Monitor;
use crate::progress;
use crate::report::{self, RunFacts};
use crate::signals;
use crate::workload::Workload;

/// A finished run: its results document and the first failure of each kind, described.
#[derive(Debug)]
pub struct Outcome {
    pub doc: ResultsDoc,
    pub first_errors: Vec<(ErrorKind, String)>,
}

/// Runs the load described by `cfg` (on worker threads of its own; this future only drives them) and returns
/// the results; `stop` turning true ends the run early. Writes `--hlog` if asked; prints nothing but the
/// progress line on a terminal's stderr.
pub async fn measure(cfg: RunConfig, stop: watch::Receiver<bool>) -> anyhow::Result<Outcome> {
    if cfg.http2 && cfg.target.tls.is_none() {
        crate::h2c::check(cfg.target.addr, cfg.connect_timeout).await?;
    }
    let cfg = Arc::new(cfg);
    let workload = Arc::new(Workload::build(&cfg).context("preparing the requests")?);
    drive(cfg, workload, stop).await
}

async fn drive(
    cfg: Arc<RunConfig>,
    workload: Arc<Workload>,
    mut stop: watch::Receiver<bool>,
) -> anyhow::Result<Outcome> {
    let (hlog_tx, hlog_rx) = match cfg.hlog {
        Some(_) => {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            (Some(tx), Some(rx))
        }
        None => (None, None),
    };
    let mut running = engine::start(cfg.clone(), workload, hlog_tx)?;

    let mut stopping = tokio::select! {
        _ = running.connected() => false,
        _ = signals::requested(&mut stop) => true,
    };
    let start = running.go();
    if !stopping {
        stopping = tokio::select! {
            _ = sleep_until(start.measure_start) => false,
            _ = signals::requested(&mut stop) => true,
        };
    }
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let wall_start = SystemTime::now();
    let cpu0 = CpuTime::now();
    let monitor = cfg
        .monitor_pid
        .map(|pid| Monitor::start(pid, start.measure_start));
    let hlog = match (cfg.hlog.clone(), hlog_rx) {
        (Some(path), Some(rx)) => Some(tokio::spawn(crate::hlog::write(
            path,
            wall_start,
            cfg.threads as usize,
            rx,
        ))),
        _ => None,
    };
    let line = if stopping {
        None
    } else {
        progress::Line::start(
            running.progress.clone(),
            start.measure_start,
            cfg.duration(),
        )
    };

    let stopped_at = if stopping {
        running.stop();
        Some(Instant::now())
    } else {
        tokio::select! {
            r = running.done() => { r?; None }
            _ = signals::requested(&mut stop) => {
                running.stop();
                Some(Instant::now())
            }
        }
    };
    let stats = running.finish().await?;
    let cpu = CpuTime::now().since(cpu0);
    if let Some(line) = line {
        line.finish();
    }
    let system = match monitor {
        Some(m) => Some(bench_proto::results::SystemBlock::from_samples(
            m.finish().await,
        )),
        None => None,
    };
    if let Some(task) = hlog {
        task.await.context("the hlog writer failed")??;
    }

    // The measured interval ends at the deadline, or at the stop (including calls that completed while
    // the stop reached the workers), or at the last completion of a count-based run.
    let end = match (stopped_at, start.deadline) {
        (Some(t), deadline) => {
            let t = t.max(stats.last_completion.unwrap_or(t));
            deadline.map_or(t, |d| t.min(d))
        }
        (None, Some(d)) => d,
        (None, None) => stats.last_completion.unwrap_or(start.measure_start),
    };
    let facts = RunFacts {
        started_at,
        elapsed: end.saturating_duration_since(start.measure_start),
        partial: stopped_at.is_some(),
        cpu,
        system,
    };
    let mut doc = report::json::build(&cfg, &stats, &facts, Vec::new());
    doc.warnings = report::warnings::for_run(&doc, stats.addr_not_avail);
    Ok(Outcome {
        doc,
        first_errors: stats.first_errors,
    })
}
