//! `bench-client chat`: VolanoMark's workload against a VOLANO-protocol chat server (wsbench's, or the
//! genuine VOLANO server), with VolanoMark's score plus what VolanoMark does not measure: per-message
//! fan-out latency (HDR histogram), a check before the load (`verify`), and a check of every delivery
//! (`order`): each sender's messages reach each member once, in the order sent — what the protocol
//! promises — and, asked for, the room's one order. A run always ends, by its deadlines or at a signal,
//! keeping what it measured.
//!
//! The workload is VolanoMark's own (`COM.volano.chat.test.Mark`): one TCP connection per user; users
//! created room by room, each entered before the next connects; the clock starts once all have entered;
//! the same 60-character message; users take turns (one message in flight per room) unless a pause is
//! given; score = (messages sent + messages received) / elapsed seconds, the elapsed time ending when the
//! last connection has closed.

mod abort;
mod driver;
mod flagged;
mod load;
mod order;
mod report;
mod stamps;
mod timings;
mod user;
mod verify;

use std::time::SystemTime;

use tokio::sync::watch;

pub use driver::{run_once, RunOutcome};
pub use load::ChatLoad;
pub use report::ChatReport;
pub use verify::{verify, Expected, Verified, VerifyError};

use crate::cpu::CpuTime;
use crate::monitor::{Monitor, Source};
use crate::readings::Proc;

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
pub(crate) async fn run_monitored(
    load: &ChatLoad,
    threads: u64,
    label: Option<String>,
    monitor_pid: Option<u32>,
    stop: watch::Receiver<bool>,
) -> ChatReport {
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let wall = tokio::time::Instant::now();
    let cpu0 = CpuTime::now();
    let monitor = monitor_pid.map(|pid| {
        let source = Source::Local {
            proc: Proc::default(),
            pid,
        };
        let gauge = source.gauge();
        Monitor::start(source, gauge, wall)
    });
    let mut runs = Vec::new();
    for run in 1..=u64::from(load.runs) {
        let outcome = run_once(load, run, stop.clone()).await;
        let completed = outcome.completed();
        runs.push(outcome);
        if !completed {
            break;
        }
    }
    let system = match monitor {
        Some(m) => Some(bench_proto::results::SystemBlock::from_samples(
            m.finish().await.samples,
        )),
        None => None,
    };
    ChatReport {
        load: load.clone(),
        threads,
        label,
        started_at,
        runs,
        cpu: CpuTime::now().since(cpu0),
        wall_s: wall.elapsed().as_secs_f64(),
        system,
    }
}
