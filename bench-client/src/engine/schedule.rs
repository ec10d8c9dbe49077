//! Open loop: each connection's intended send times. The run's calls are laid on a curve of expected calls
//! ("work": the integral of the rate, fixed or ramped by stages) and each connection takes its share:
//! evenly, connection `c` of `C` takes every `C`-th call from the `c`-th (wrk2's model: the union is evenly
//! spaced); Poisson, each connection is an independent Poisson process of `1/C` of the rate (exponential gaps
//! of `C` calls of work, seeded), and their union is a Poisson process of the whole rate. Either way a send's
//! time comes from its place on the curve, so rounding never drifts over an eight-hour run.

use std::sync::Arc;
use std::time::Duration;

use bench_proto::shape::{exponential, Arrivals, Stages};
use tokio::time::Instant;

/// How the rate goes over the run.
#[derive(Debug, Clone)]
pub enum Rate {
    Fixed(f64),
    Stages(Arc<Stages>),
}

impl Rate {
    /// Seconds from the start at which `work` calls are due, if the rate ever gets there.
    fn time_of(&self, work: f64) -> Option<f64> {
        match self {
            Rate::Fixed(r) => Some(work / r),
            Rate::Stages(s) => s.time_of(work),
        }
    }
}

/// One connection's schedule, from the next send on.
#[derive(Debug, Clone)]
pub struct Schedule {
    law: Law,
    /// The index of the next send (from 0).
    k: u64,
    /// When it is due; `None` once the rate has no more calls for this connection (the stages ended).
    due: Option<Instant>,
}

#[derive(Debug, Clone)]
enum Law {
    /// A fixed rate, evenly: `first + k × interval` (the common case, computed in one step).
    Even { first: Instant, interval_ns: f64 },
    /// Any other: the next send is due where the curve reaches `work`; each send adds `step` calls of work
    /// (evenly) or `step` × an exponential draw (Poisson).
    Curve {
        t0: Instant,
        rate: Rate,
        work: f64,
        step: f64,
        poisson: Option<fastrand::Rng>,
    },
}

impl Schedule {
    /// Connection `conn` of `clients`, sharing `rate` from `t0`, its sends spaced as `arrivals` says (Poisson
    /// draws seeded by `seed`, different for every connection).
    pub fn new(
        t0: Instant,
        rate: Rate,
        arrivals: Arrivals,
        clients: u64,
        conn: u64,
        seed: u64,
    ) -> Schedule {
        let law = match (&rate, arrivals) {
            (Rate::Fixed(r), Arrivals::Even) => {
                let interval_ns = clients as f64 * 1e9 / r;
                let phase =
                    Duration::from_nanos((interval_ns * conn as f64 / clients as f64) as u64);
                Law::Even {
                    first: t0 + phase,
                    interval_ns,
                }
            }
            // A ramp starts from 0: each call is placed at the middle of its unit of work.
            (Rate::Stages(_), Arrivals::Even) => Law::Curve {
                t0,
                rate,
                work: conn as f64 + 0.5,
                step: clients as f64,
                poisson: None,
            },
            (_, Arrivals::Poisson) => {
                let mut rng = fastrand::Rng::with_seed(stream_seed(seed, conn));
                Law::Curve {
                    t0,
                    rate,
                    work: clients as f64 * exponential(rng.f64()),
                    step: clients as f64,
                    poisson: Some(rng),
                }
            }
        };
        let mut s = Schedule {
            law,
            k: 0,
            due: None,
        };
        s.due = s.at_current();
        s
    }

    fn at_current(&self) -> Option<Instant> {
        match &self.law {
            Law::Even { first, interval_ns } => {
                Some(*first + Duration::from_nanos((self.k as f64 * interval_ns) as u64))
            }
            Law::Curve { t0, rate, work, .. } => rate
                .time_of(*work)
                .map(|s| *t0 + Duration::from_secs_f64(s)),
        }
    }

    /// When the next send is meant to go out (`None`: the rate has no more for this connection).
    #[inline]
    pub fn due(&self) -> Option<Instant> {
        self.due
    }

    /// On to the send after.
    #[inline]
    pub fn advance(&mut self) {
        self.k += 1;
        if let Law::Curve {
            work,
            step,
            poisson,
            ..
        } = &mut self.law
        {
            *work += match poisson {
                Some(rng) => *step * exponential(rng.f64()),
                None => *step,
            };
        }
        self.due = self.at_current();
    }

    /// Skips every send due before `t`; returns how many of them fall in the measured interval (at or after
    /// `measure_start`, before `deadline` if any).
    pub(crate) fn skip_before(
        &mut self,
        t: Instant,
        measure_start: Instant,
        deadline: Option<Instant>,
    ) -> u64 {
        let mut measured = 0;
        while let Some(due) = self.due.filter(|d| *d < t) {
            if due >= measure_start && deadline.map_or(true, |d| due < d) {
                measured += 1;
            }
            self.advance();
        }
        measured
    }
}

/// A seed of its own for connection `conn`'s draws (SplitMix64 of the pair), so that connections draw
/// independent sequences from one run seed.
pub(crate) fn stream_seed(seed: u64, conn: u64) -> u64 {
    let mut z = seed ^ conn.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use statrs::distribution::{ContinuousCDF, Exp};

    use super::*;

    fn times(s: &mut Schedule, t0: Instant, n: usize) -> Vec<f64> {
        (0..n)
            .map_while(|_| {
                let d = s.due()?;
                s.advance();
                Some((d - t0).as_secs_f64())
            })
            .collect()
    }

    fn even(t0: Instant, rate: f64, clients: u64, conn: u64) -> Schedule {
        Schedule::new(t0, Rate::Fixed(rate), Arrivals::Even, clients, conn, 1)
    }

    #[test]
    fn union_of_connection_schedules_is_evenly_spaced() {
        let t0 = Instant::now();
        let mut all: Vec<f64> = (0..4)
            .flat_map(|c| times(&mut even(t0, 1000.0, 4, c), t0, 5))
            .collect();
        all.sort_by(f64::total_cmp);
        for (i, t) in all.iter().enumerate() {
            assert!((t - i as f64 / 1000.0).abs() < 1e-9, "{i}: {t}");
        }
    }

    #[test]
    fn skipped_sends_count_only_those_of_the_measured_interval() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        // 10/s on one connection: send k at k × 100 ms.
        let mut s = even(t0, 10.0, 1, 0);
        assert_eq!(s.skip_before(at(500), at(1000), None), 0);
        assert_eq!(s.due(), Some(at(500)));
        assert_eq!(s.skip_before(at(3000), at(1000), Some(at(2000))), 10);
        assert_eq!(s.due(), Some(at(3000)));
    }

    #[test]
    fn late_sends_do_not_drift() {
        let t0 = Instant::now();
        let mut s = even(t0, 3.0, 1, 0);
        for _ in 0..86_399 {
            s.advance();
        }
        // 8 hours at 3/s: the last of 86 400 due at 28 799.67 s.
        let d = s.due().unwrap() - t0;
        assert!((d.as_secs_f64() - 86_399.0 / 3.0).abs() < 1e-6, "{d:?}");
    }

    #[test]
    fn a_ramp_places_each_connections_share_on_the_curve() {
        let t0 = Instant::now();
        let stages: Arc<Stages> = Arc::new("10s:rate=100,10s:rate=100".parse().unwrap());
        let mut all: Vec<f64> = (0..3)
            .flat_map(|c| {
                let mut s =
                    Schedule::new(t0, Rate::Stages(stages.clone()), Arrivals::Even, 3, c, 1);
                times(&mut s, t0, 10_000)
            })
            .collect();
        all.sort_by(f64::total_cmp);
        // 1,500 calls in all: 500 in the ramp, 1,000 on the plateau; none after the stages end.
        assert_eq!(all.len(), 1500);
        for second in 0..20 {
            let n = all.iter().filter(|t| (**t as usize) == second).count() as f64;
            let want = stages.area_to(second as f64 + 1.0) - stages.area_to(second as f64);
            assert!(
                (n - want).abs() <= 1.0,
                "second {second}: {n} calls, {want} offered"
            );
        }
    }

    /// Kolmogorov–Smirnov: the largest distance between the sample's CDF and `cdf`.
    fn ks(sample: &mut [f64], cdf: impl Fn(f64) -> f64) -> f64 {
        sample.sort_by(f64::total_cmp);
        let n = sample.len() as f64;
        sample
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let f = cdf(x);
                (f - i as f64 / n)
                    .abs()
                    .max((((i + 1) as f64) / n - f).abs())
            })
            .fold(0.0, f64::max)
    }

    /// The gaps of the whole run's sends (every connection's, merged) are exponential at the run's rate: a
    /// Kolmogorov–Smirnov test at the 1 % level (critical distance 1.628 / √n), which even sends fail.
    #[test]
    fn poisson_gaps_pass_a_goodness_of_fit_test() {
        let t0 = Instant::now();
        let (rate, clients) = (2000.0, 8);
        let union = |arrivals| {
            let mut all: Vec<f64> = (0..clients)
                .flat_map(|c| {
                    let mut s = Schedule::new(t0, Rate::Fixed(rate), arrivals, clients, c, 42);
                    times(&mut s, t0, 1250)
                })
                .collect();
            all.sort_by(f64::total_cmp);
            let cut = all[all.len() / 2]; // past the last connection's first sends, before any ran out
            let mut gaps: Vec<f64> = all
                .windows(2)
                .filter(|w| w[1] <= cut)
                .map(|w| w[1] - w[0])
                .collect();
            let n = gaps.len() as f64;
            let exp = Exp::new(rate).unwrap();
            (ks(&mut gaps, |x| exp.cdf(x)), 1.628 / n.sqrt(), gaps.len())
        };
        let (d, critical, n) = union(Arrivals::Poisson);
        assert!(n > 4000, "{n} gaps");
        assert!(d < critical, "Poisson gaps: KS distance {d} ≥ {critical}");
        let (d, critical, _) = union(Arrivals::Even);
        assert!(
            d > critical,
            "even gaps should fail the test: {d} < {critical}"
        );
        // The same seed gives the same sends; another seed others.
        let first = |seed| {
            let mut s = Schedule::new(t0, Rate::Fixed(rate), Arrivals::Poisson, 4, 1, seed);
            times(&mut s, t0, 5)
        };
        assert_eq!(first(7), first(7));
        assert_ne!(first(7), first(8));
    }

    #[test]
    fn poisson_on_a_ramp_offers_the_ramps_calls() {
        let t0 = Instant::now();
        let stages: Arc<Stages> = Arc::new("20s:rate=500".parse().unwrap());
        let all: Vec<f64> = (0..4)
            .flat_map(|c| {
                let mut s =
                    Schedule::new(t0, Rate::Stages(stages.clone()), Arrivals::Poisson, 4, c, 9);
                times(&mut s, t0, 100_000)
            })
            .collect();
        // 5,000 offered; a Poisson count's standard deviation is √5000 ≈ 71.
        let n = all.len() as f64;
        assert!((n - 5000.0).abs() < 4.0 * 5000f64.sqrt(), "{n}");
        let late = all.iter().filter(|t| **t >= 10.0).count() as f64;
        assert!(
            (late / n - 0.75).abs() < 0.03,
            "three quarters in the second half: {late} of {n}"
        );
    }
}
