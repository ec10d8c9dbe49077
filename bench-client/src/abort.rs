//! `--abort-on-fail`: each threshold judged on a trailing window of closed intervals while the run goes, after
//! a grace period (the window holds only intervals that began after it), so that a run which has clearly
//! failed stops instead of running on. "Clearly": the window's calls must make the failure significant, not a
//! few slow calls of a small sample — a percentile or error rate fails when so many calls are past the limit
//! that a binomial count at the limit would give as many less than once in a thousand; a throughput when a
//! Poisson count at the limit would give as few; a mean when it is past the limit by three standard errors.

use std::collections::VecDeque;
use std::time::Duration;

use bench_proto::results::Aborted;
use bench_proto::thresholds::{Figure, Op, Threshold};
use hdrhistogram::Histogram;
use statrs::distribution::{Binomial, DiscreteCDF, Poisson};

use crate::config::AbortRule;

/// How unlikely the window's count must be if the threshold held.
const SIGNIFICANCE: f64 = 1e-3;

/// One closed interval as the judge keeps it.
#[derive(Debug)]
pub struct Closed {
    /// Its start and length, from the start of the measured interval.
    pub start: Duration,
    pub length: Duration,
    pub ok: u64,
    pub errors: u64,
    pub latencies: Histogram<u64>,
}

/// The trailing window and the thresholds judged on it.
#[derive(Debug)]
pub struct Judge {
    rule: AbortRule,
    thresholds: Vec<Threshold>,
    window: VecDeque<Closed>,
}

/// The window's figures, added up.
#[derive(Debug)]
struct Window {
    seconds: f64,
    ok: u64,
    errors: u64,
    latencies: Histogram<u64>,
}

impl Judge {
    pub fn new(rule: AbortRule, thresholds: Vec<Threshold>) -> Judge {
        Judge {
            rule,
            thresholds,
            window: VecDeque::new(),
        }
    }

    /// An interval has closed: judged with those before it in the window; `Some` when a threshold has
    /// clearly failed (the run should stop).
    pub fn closed(&mut self, c: Closed) -> Option<Aborted> {
        if c.start < self.rule.grace {
            return None;
        }
        let end = c.start + c.length;
        self.window.push_back(c);
        // Drop the oldest intervals the window can do without.
        while let Some(f) = self.window.front() {
            if self.covered().saturating_sub(f.length) < self.rule.window {
                break;
            }
            self.window.pop_front();
        }
        if self.covered() < self.rule.window {
            return None;
        }
        let w = self.sum();
        self.thresholds.iter().find_map(|t| {
            let measured = clearly_failed(t, &w)?;
            Some(Aborted {
                at_s: end.as_secs_f64(),
                threshold: t.text.clone(),
                measured,
                window_s: w.seconds,
                calls: w.ok + w.errors,
            })
        })
    }

    /// The time the window's intervals span.
    fn covered(&self) -> Duration {
        match (self.window.front(), self.window.back()) {
            (Some(a), Some(b)) => (b.start + b.length).saturating_sub(a.start),
            _ => Duration::ZERO,
        }
    }

    fn sum(&self) -> Window {
        let mut latencies = crate::latency::latency_histogram();
        let (mut ok, mut errors) = (0, 0);
        for c in &self.window {
            ok += c.ok;
            errors += c.errors;
            latencies
                .add(&c.latencies)
                .expect("histograms of equal bounds add");
        }
        Window {
            seconds: self.covered().as_secs_f64(),
            ok,
            errors,
            latencies,
        }
    }
}

/// The window's value of `t`'s figure when `t` has clearly failed on it.
fn clearly_failed(t: &Threshold, w: &Window) -> Option<f64> {
    let below = matches!(t.op, Op::Lt | Op::Le);
    let all = w.ok + w.errors;
    match t.figure {
        Figure::Percentile(p) => {
            let h = &w.latencies;
            if h.is_empty() {
                return None;
            }
            let value_ms = h.value_at_quantile(p / 100.0) as f64 / 1000.0;
            if t.holds(value_ms) {
                return None;
            }
            if !below {
                return (h.len() >= 100).then_some(value_ms);
            }
            // Calls at or past the limit, against the share the percentile allows past it.
            let limit_us = (t.limit * 1000.0).ceil() as u64;
            let past = h.len() - h.count_between(0, limit_us.saturating_sub(1));
            let allowed = 1.0 - p / 100.0;
            unlikely_binomial(h.len(), allowed, past).then_some(value_ms)
        }
        Figure::ErrorRate => {
            let pct = w.errors as f64 * 100.0 / all.max(1) as f64;
            if all == 0 || t.holds(pct) {
                return None;
            }
            let sig = match below {
                true => unlikely_binomial(all, t.limit / 100.0, w.errors),
                false => all >= 100,
            };
            sig.then_some(pct)
        }
        Figure::Errors => (!t.holds(w.errors as f64)).then_some(w.errors as f64),
        Figure::MeanLatency => {
            let h = &w.latencies;
            let mean_ms = h.mean() / 1000.0;
            if h.len() < 30 || t.holds(mean_ms) {
                return None;
            }
            let se_ms = h.stdev() / 1000.0 / (h.len() as f64).sqrt();
            ((mean_ms - t.limit).abs() > 3.0 * se_ms).then_some(mean_ms)
        }
        Figure::Throughput => {
            let rate = w.ok as f64 / w.seconds;
            if t.holds(rate) || below {
                return (!t.holds(rate) && below).then_some(rate);
            }
            let expected = t.limit * w.seconds;
            let fewer = Poisson::new(expected).map_or(0.0, |d| d.cdf(w.ok));
            (fewer < SIGNIFICANCE).then_some(rate)
        }
    }
}

/// Whether `count` or more of `n` trials are unlikely at probability `q` (P(Bin(n, q) ≥ count) < 10⁻³).
fn unlikely_binomial(n: u64, q: f64, count: u64) -> bool {
    if count == 0 {
        return false;
    }
    if q <= 0.0 {
        return true;
    }
    match Binomial::new(q.min(1.0), n) {
        Ok(b) => b.sf(count - 1) < SIGNIFICANCE,
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(start_s: u64, ok: u64, errors: u64, latency_us: u64) -> Closed {
        let mut latencies = crate::latency::latency_histogram();
        latencies.record_n(latency_us, ok).unwrap();
        Closed {
            start: Duration::from_secs(start_s),
            length: Duration::from_secs(1),
            ok,
            errors,
            latencies,
        }
    }

    fn judge(t: &str, grace: u64, window: u64) -> Judge {
        let rule = AbortRule {
            grace: Duration::from_secs(grace),
            window: Duration::from_secs(window),
        };
        Judge::new(rule, vec![Threshold::parse(t).unwrap()])
    }

    #[test]
    fn nothing_is_judged_in_the_grace_period_nor_before_a_whole_window() {
        let mut j = judge("p99<5ms", 3, 2);
        for s in 0..3 {
            assert!(
                j.closed(interval(s, 1000, 0, 50_000)).is_none(),
                "grace, {s} s"
            );
        }
        assert!(
            j.closed(interval(3, 1000, 0, 50_000)).is_none(),
            "half a window"
        );
        let a = j
            .closed(interval(4, 1000, 0, 50_000))
            .expect("failed clearly");
        assert_eq!((a.at_s, a.window_s, a.calls), (5.0, 2.0, 2000));
        assert_eq!(a.threshold, "p99<5ms");
        assert!((a.measured - 50.0).abs() < 0.1, "{}", a.measured);
    }

    #[test]
    fn a_few_slow_calls_or_errors_are_not_a_clear_failure() {
        // 2 slow calls of 100 (p99 = the slow value) are not significant at a 1 % allowance.
        let mut j = judge("p99<5ms", 0, 1);
        let mut c = interval(0, 98, 0, 1_000);
        c.latencies.record_n(50_000, 2).unwrap();
        c.ok = 100;
        assert!(j.closed(c).is_none());
        // 3 errors in 100 calls against errors<1%: P(Bin(100, 0.01) ≥ 3) ≈ 0.08, not clear …
        let mut j = judge("errors<1%", 0, 1);
        assert!(j.closed(interval(0, 97, 3, 1_000)).is_none());
        // … 30 of 1,000 is.
        let a = j.closed(interval(1, 970, 30, 1_000)).unwrap();
        assert!((a.measured - 3.0).abs() < 1e-9);
    }

    #[test]
    fn the_window_trails() {
        let mut j = judge("errors<1%", 0, 2);
        assert!(
            j.closed(interval(0, 1000, 500, 1_000)).is_none(),
            "half a window"
        );
        assert!(
            j.closed(interval(1, 1000, 0, 1_000)).is_some(),
            "0–2 s: 500 errors"
        );
        assert!(
            j.closed(interval(2, 1000, 0, 1_000)).is_none(),
            "1–3 s: none"
        );
        let mut j = judge("throughput>1000/s", 0, 2);
        assert!(j.closed(interval(0, 1000, 0, 1_000)).is_none());
        assert!(
            j.closed(interval(1, 990, 0, 1_000)).is_none(),
            "995/s: not clearly under"
        );
        assert!(j.closed(interval(2, 500, 0, 1_000)).is_some(), "745/s");
        let mut j = judge("mean<2ms", 0, 1);
        assert!(j.closed(interval(0, 1000, 0, 3_000)).is_some());
    }
}
