//! Open loop: each connection's intended send times (wrk2's model). The total rate is spread evenly over
//! the connections and their schedules are phase-shifted, so the union is evenly spaced.

use std::time::Duration;

use tokio::time::Instant;

#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    first: Instant,
    interval_ns: f64,
}

impl Schedule {
    /// Connection `conn` of `clients`, sharing `rate` requests/s in total, from `t0`.
    pub fn new(t0: Instant, rate: f64, clients: u64, conn: u64) -> Schedule {
        let interval_ns = clients as f64 * 1e9 / rate;
        let phase = Duration::from_nanos((interval_ns * conn as f64 / clients as f64) as u64);
        Schedule {
            first: t0 + phase,
            interval_ns,
        }
    }

    /// When the `k`-th request (from 0) of this connection is meant to go out. Computed from `k`, not
    /// accumulated, so rounding never drifts over an eight-hour run.
    #[inline]
    pub fn at(&self, k: u64) -> Instant {
        self.first + Duration::from_nanos((k as f64 * self.interval_ns) as u64)
    }

    /// The index of the first request meant to go out at or after `t`.
    pub fn first_at_or_after(&self, t: Instant) -> u64 {
        let since = t.saturating_duration_since(self.first).as_nanos() as f64;
        let mut k = (since / self.interval_ns).floor() as u64;
        // The float estimate may be one off either way: settle it on `at`, the one definition of the times.
        while k > 0 && self.at(k - 1) >= t {
            k -= 1;
        }
        while self.at(k) < t {
            k += 1;
        }
        k
    }

    /// How many of the requests `from..to` (indices) fall in the measured interval: at or after
    /// `measure_start`, before `deadline` if any.
    pub fn count_measured(
        &self,
        from: u64,
        to: u64,
        measure_start: Instant,
        deadline: Option<Instant>,
    ) -> u64 {
        let lo = from.max(self.first_at_or_after(measure_start));
        let hi = deadline.map_or(to, |d| to.min(self.first_at_or_after(d)));
        hi.saturating_sub(lo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_of_connection_schedules_is_evenly_spaced() {
        let t0 = Instant::now();
        let mut times: Vec<Duration> = (0..4)
            .flat_map(|c| {
                let s = Schedule::new(t0, 1000.0, 4, c);
                (0..5).map(move |k| s.at(k) - t0)
            })
            .collect();
        times.sort();
        let expected: Vec<Duration> = (0..20).map(Duration::from_millis).collect();
        assert_eq!(times, expected);
    }

    #[test]
    fn first_at_or_after_finds_the_boundary() {
        let t0 = Instant::now();
        let s = Schedule::new(t0, 3.0, 2, 1);
        for ms in [0u64, 1, 333, 334, 500, 666, 667, 1000, 1001, 2500] {
            let t = t0 + Duration::from_millis(ms);
            let k = s.first_at_or_after(t);
            assert!(s.at(k) >= t, "{ms} ms: {k}");
            assert!(k == 0 || s.at(k - 1) < t, "{ms} ms: {k}");
        }
    }

    #[test]
    fn requests_counted_are_those_of_the_measured_interval() {
        let t0 = Instant::now();
        // 10/s on one connection: request k at k × 100 ms.
        let s = Schedule::new(t0, 10.0, 1, 0);
        let at = |ms| t0 + Duration::from_millis(ms);
        assert_eq!(s.count_measured(0, 30, at(1000), None), 20);
        assert_eq!(s.count_measured(0, 30, at(1000), Some(at(2000))), 10);
        assert_eq!(s.count_measured(12, 15, at(1000), Some(at(2000))), 3);
        assert_eq!(s.count_measured(25, 30, at(1000), Some(at(2000))), 0);
        assert_eq!(s.count_measured(5, 8, at(1000), None), 0);
    }

    #[test]
    fn late_indices_do_not_drift() {
        let t0 = Instant::now();
        let s = Schedule::new(t0, 3.0, 1, 0);
        // 8 hours at 3/s: 86 400 requests, the last due at 28 799.67 s.
        let d = s.at(86_399) - t0;
        assert!((d.as_secs_f64() - 86_399.0 / 3.0).abs() < 1e-6, "{d:?}");
    }
}
