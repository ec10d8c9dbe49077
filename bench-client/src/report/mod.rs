//! What a run reports: the results document and the record kept beside it (timeline, connections,
//! memory), the human summary, CXF's result block, and the warnings that say when the client may be
//! what limited the run.

mod columns;
pub mod cxf;
pub mod human;
pub mod json;
pub mod record;
mod shape;
pub mod warnings;

use std::time::Duration;

use bench_proto::results::{Aborted, ProcessCpu, RunState, Sampling, SystemBlock};

use crate::cpu::CpuTime;
use crate::engine::Clock;

/// Run-level facts measured outside the workers.
#[derive(Debug, Clone)]
pub struct RunFacts {
    /// RFC 3339 UTC start of the measured interval.
    pub started_at: String,
    /// The measured interval (a checkpoint's: up to its last closed interval).
    pub elapsed: Duration,
    /// Measured to the end, stopped early, or a checkpoint of a run still measuring.
    pub state: RunState,
    /// The client's CPU during the measured interval.
    pub cpu: CpuTime,
    pub system: Option<SystemBlock>,
    /// When the measured interval began, on the wall clock and the monotonic clock.
    pub clock: Clock,
    /// How long the initial connections took.
    pub connecting: Duration,
    /// The client's RSS before connecting and once connected, kB.
    pub rss_start_kb: Option<u64>,
    pub rss_connected_kb: Option<u64>,
    /// `--monitor-pid`, `--agent`: that process's CPU over the measured interval.
    pub monitored: Option<ProcessCpu>,
    /// `--monitor-pid`, `--agent`: where the server's figures were read.
    pub sampling: Option<Sampling>,
    /// The run stopped early on a failed threshold (`--abort-on-fail`).
    pub aborted: Option<Aborted>,
}
