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
mod flagged;
mod load;
mod report;
mod stamps;
mod user;

use std::time::SystemTime;

use tokio::sync::watch;

pub use driver::{run_once, RunOutcome};
pub use load::ChatLoad;
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

/// [`run`], sampling system CPU and `monitor_pid`'s RSS once a second.
pub async fn run_monitored(
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
