//! What a run reports: the results document, the human summary, CXF's result block, and the warnings
//! that say when the client may be what limited the run.

mod columns;
pub mod cxf;
pub mod human;
pub mod json;
pub mod warnings;

use std::time::Duration;

use bench_proto::results::SystemBlock;

use crate::cpu::CpuTime;

/// Run-level facts measured outside the workers.
#[derive(Debug, Clone)]
pub struct RunFacts {
    /// RFC 3339 UTC start of the measured interval.
    pub started_at: String,
    /// The measured interval.
    pub elapsed: Duration,
    /// Stopped early by SIGINT.
    pub partial: bool,
    /// The client's CPU during the measured interval.
    pub cpu: CpuTime,
    pub system: Option<SystemBlock>,
}
