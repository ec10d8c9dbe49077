//! A process's CPU time as Linux's /proc/PID/stat gives it: the one reading of it, for bench-client's
//! sampler and the harness's (through the tools crate). Pure: the caller reads the file (from this
//! machine's /proc or one mounted elsewhere) and hands over its text; procfs-core parses it.

use procfs_core::process::Stat;
use procfs_core::FromRead as _;

/// /proc's clock tick (USER_HZ), which Linux fixes at 100 for user space on every architecture wsbench
/// builds for.
pub const TICKS_PER_S: f64 = 100.0;

/// What bench-client and the harness read of /proc/PID/stat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PidStat {
    /// User CPU time so far, in clock ticks ([`TICKS_PER_S`]).
    pub utime: u64,
    /// System CPU time so far, in clock ticks.
    pub stime: u64,
    pub threads: u64,
}

impl PidStat {
    /// The text of /proc/PID/stat, read; None when it is not one (cut short, another file).
    pub fn parse(text: &str) -> Option<PidStat> {
        let s = Stat::from_read(text.as_bytes()).ok()?;
        Some(PidStat {
            utime: s.utime,
            stime: s.stime,
            threads: u64::try_from(s.num_threads).unwrap_or(0),
        })
    }

    /// User and system CPU seconds so far.
    pub fn cpu_s(&self) -> (f64, f64) {
        (
            self.utime as f64 / TICKS_PER_S,
            self.stime as f64 / TICKS_PER_S,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pid_stat_after_a_command_name_with_spaces_and_parentheses() {
        // All 52 fields, as Linux 3.5 and later write them.
        let text = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 1000 0 0 0 731 95 0 0 20 0 3 0 100 2998272 419 \
                    18446744073709551615 1 2 3 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 4 5 6 7 8 8 9 0\n";
        let s = PidStat::parse(text).unwrap();
        assert_eq!((s.utime, s.stime, s.threads), (731, 95, 3));
        assert_eq!(s.cpu_s(), (7.31, 0.95));
        assert_eq!(PidStat::parse("4242 (x) S 1"), None);
    }
}
