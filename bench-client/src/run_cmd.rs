//! `bench-client run`: prepares the requests, runs the engine, handles SIGINT/SIGTERM, samples CPU and the
//! monitored process, and reports (summary, CXF block, JSON, hlog).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::SystemTime;

use anyhow::Context as _;
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::time::{sleep_until, Instant};

use crate::cli::{Format, RunArgs};
use crate::config::RunConfig;
use crate::cpu::CpuTime;
use crate::engine;
use crate::monitor::Monitor;
use crate::progress;
use crate::report::{self, RunFacts};
use crate::workload::Workload;

/// The line on stderr that marks the start of the measured interval (after connecting and warm-up).
/// Scripts and tests wait for it before interrupting a run.
pub const MEASURING: &str = "MEASURING";

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let cfg = Arc::new(RunConfig::from_args(args)?);
    let workload = Arc::new(Workload::build(&cfg).context("preparing the requests")?);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(drive(cfg, workload))
}

/// SIGINT or SIGTERM.
struct Interrupt {
    int: Signal,
    term: Signal,
}

impl Interrupt {
    fn install() -> anyhow::Result<Interrupt> {
        Ok(Interrupt {
            int: signal(SignalKind::interrupt()).context("installing the SIGINT handler")?,
            term: signal(SignalKind::terminate()).context("installing the SIGTERM handler")?,
        })
    }

    async fn recv(&mut self) {
        tokio::select! {
            _ = self.int.recv() => {}
            _ = self.term.recv() => {}
        }
    }
}

async fn drive(cfg: Arc<RunConfig>, workload: Arc<Workload>) -> anyhow::Result<ExitCode> {
    let mut interrupt = Interrupt::install()?;
    let (hlog_tx, hlog_rx) = match cfg.hlog {
        Some(_) => {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            (Some(tx), Some(rx))
        }
        None => (None, None),
    };
    let mut running = engine::start(cfg.clone(), workload, hlog_tx)?;

    let mut interrupted = tokio::select! {
        _ = running.connected() => false,
        _ = interrupt.recv() => true,
    };
    let start = running.go();
    if !interrupted {
        interrupted = tokio::select! {
            _ = sleep_until(start.measure_start) => false,
            _ = interrupt.recv() => true,
        };
    }
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let wall_start = SystemTime::now();
    let cpu0 = CpuTime::now();
    let monitor = cfg.monitor_pid.map(|pid| Monitor::start(pid, start.measure_start));
    let hlog = match (cfg.hlog.clone(), hlog_rx) {
        (Some(path), Some(rx)) => Some(tokio::spawn(crate::hlog::write(path, wall_start, cfg.threads as usize, rx))),
        _ => None,
    };
    let line = if interrupted {
        None
    } else {
        eprintln!("{MEASURING} clients={} threads={} pid={}", cfg.clients, cfg.threads, std::process::id());
        progress::Line::start(running.progress.clone(), start.measure_start, cfg.duration())
    };

    let stopped_at = if interrupted {
        running.stop();
        Some(Instant::now())
    } else {
        tokio::select! {
            r = running.done() => { r?; None }
            _ = interrupt.recv() => {
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
        Some(m) => Some(bench_proto::results::SystemBlock::from_samples(m.finish().await)),
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

    print!("{}", report::human::render(&doc, &stats.first_errors));
    if cfg.format == Format::Cxf {
        println!();
        print!("{}", report::cxf::render(&doc));
    }
    if let Some(path) = &cfg.json {
        report::json::write_atomic(path, &doc)?;
    }
    Ok(if doc.counts.errors_total > 0 && !cfg.allow_errors { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
