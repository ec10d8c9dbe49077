//! The clock of a run: when load starts, when measuring starts, when it ends.

use tokio::time::Instant;

/// The clock of a run, shared by every connection.
#[derive(Debug, Clone, Copy)]
pub struct Start {
    /// Load starts (warm-up begins; open-loop schedules start here).
    pub t0: Instant,
    /// The measured interval begins (after warm-up).
    pub measure_start: Instant,
    /// The measured interval ends (time-based runs).
    pub deadline: Option<Instant>,
}
