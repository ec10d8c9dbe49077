//! The clock of a run: when load starts, when measuring starts, when it ends; and when measuring starts
//! on the clocks other processes read.

use std::time::{Duration, SystemTime};

use nix::time::{clock_gettime, ClockId};
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

/// A moment on the clocks a reader in another process may hold: UTC, and this machine's CLOCK_MONOTONIC
/// (what `Instant` reads on Linux, in microseconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clock {
    pub wall: SystemTime,
    pub monotonic_us: u64,
}

impl Clock {
    /// `t` on both clocks (read once, together, and moved by `t`'s distance from now).
    pub fn at(t: Instant) -> Clock {
        let (now, wall) = (Instant::now(), SystemTime::now());
        let mono = clock_gettime(ClockId::CLOCK_MONOTONIC).map_or(Duration::ZERO, Duration::from);
        let (ahead, behind) = (
            t.saturating_duration_since(now),
            now.saturating_duration_since(t),
        );
        Clock {
            wall: wall + ahead - behind,
            monotonic_us: (mono + ahead).saturating_sub(behind).as_micros() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instant_is_placed_on_both_clocks() {
        let now = Clock::at(Instant::now());
        let later = Clock::at(Instant::now() + Duration::from_secs(10));
        let wall = later.wall.duration_since(now.wall).unwrap().as_secs_f64();
        let mono = (later.monotonic_us - now.monotonic_us) as f64 / 1e6;
        assert!(
            (wall - 10.0).abs() < 0.5 && (mono - 10.0).abs() < 0.5,
            "{wall} {mono}"
        );
        let std_mono = Duration::from(clock_gettime(ClockId::CLOCK_MONOTONIC).unwrap());
        assert!(std_mono.as_micros() as u64 >= now.monotonic_us);
    }
}
