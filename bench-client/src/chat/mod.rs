//! `bench-client chat`: VolanoMark's workload against a VOLANO-protocol chat server (wsbench's, or the
//! genuine VOLANO server), with VolanoMark's score plus what VolanoMark does not measure: per-message
//! fan-out latency (HDR histogram) and validation that every member received every message of its room
//! exactly once, in order.
//!
//! The workload is VolanoMark's own (`COM.volano.chat.test.Mark`): one TCP connection per user; users
//! created room by room, each entered before the next connects; the clock starts once all have entered;
//! the same 60-character message; users take turns (one message in flight per room) unless a pause is
//! given; score = (messages sent + messages received) / elapsed seconds, the elapsed time ending when the
//! last connection has closed.

mod driver;
mod load;
mod report;
mod stamps;
mod user;

use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::Context as _;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;

pub use driver::{run_once, RunOutcome};
pub use load::{ChatArgs, ChatLoad};
pub use report::ChatReport;

use crate::cpu::CpuTime;
use crate::monitor::Monitor;

/// Runs `load.runs` runs one after the other (stopping early when `stop` turns true) and reports them.
pub async fn run(
    load: &ChatLoad,
    threads: u64,
    label: Option<String>,
    stop: watch::Receiver<bool>,
) -> ChatReport {
    run_monitored(load, threads, label, None, stop).await
}

async fn run_monitored(
    load: &ChatLoad,
    threads: u64,
    label: Option<String>,
    monitor_pid: Option<u32>,
    stop: watch::Receiver<bool>,
) -> ChatReport {
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let wall = tokio::time::Instant::now();
    let cpu0 = CpuTime::now();
    let monitor = monitor_pid.map(|pid| Monitor::start(pid, wall));
    let mut runs = Vec::new();
    for run in 1..=u64::from(load.runs) {
        let outcome = run_once(load, run, stop.clone()).await;
        let failed = !outcome.completed;
        runs.push(outcome);
        if failed || *stop.borrow() {
            break;
        }
    }
    let system = match monitor {
        Some(m) => Some(bench_proto::results::SystemBlock::from_samples(
            m.finish().await,
        )),
        None => None,
    };
    ChatReport {
        load: load.clone(),
        threads,
        label,
        started_at,
        partial: *stop.borrow(),
        runs,
        cpu: CpuTime::now().since(cpu0),
        wall_s: wall.elapsed().as_secs_f64(),
        system,
    }
}

/// `bench-client chat …`: runs, prints the summary, writes `--json`; exit status 1 when there were errors
/// (without `--allow-errors`).
pub fn run_cli(args: ChatArgs) -> anyhow::Result<ExitCode> {
    let load = ChatLoad::from_args(&args)?;
    let threads = load::threads(&args);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads as usize)
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let report = rt.block_on(async {
        let (stop_tx, stop) = watch::channel(false);
        let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
        let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
        tokio::spawn(async move {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
            let _ = stop_tx.send(true);
        });
        anyhow::Ok(run_monitored(&load, threads, args.label.clone(), args.monitor_pid, stop).await)
    })?;
    let doc = report.doc();
    print!("{}", report.human(&doc));
    if let Some(path) = &args.json {
        crate::report::json::write_atomic(path, &doc)?;
    }
    let failed = report.errors_total() > 0 || report.scored().is_empty();
    Ok(if failed && !args.allow_errors {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
