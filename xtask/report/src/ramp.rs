//! Where a rate ramp breaks down (issue 43): the first of the seconds in which the calls completed fell short
//! of the rate offered, three seconds running, judged as `cargo xtask max-rate` judges a rate (achieved at
//! least 97 % of offered), with a slack for counting at second boundaries and for Poisson arrivals' spread.

use bench_proto::results::{Interval, StageResults, Timeline};
use bench_proto::shape::{level_on, Ramped, Span};

/// A second is short when it completes fewer than this share of the calls offered in it (max-rate's rule).
const MIN_ACHIEVED: f64 = 0.97;
/// Short seconds in a row before the ramp counts as broken down: one short second is noise.
const RUNNING: usize = 3;

/// What a rate ramp showed, second by second.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ramp {
    /// Every second kept up with the rate offered.
    KeptUp {
        /// The highest rate offered (calls/s) and the worst second's p99 (µs), short seconds included.
        highest: f64,
        worst_p99_us: u64,
    },
    /// From `at_s`, the calls completed fell short of the offered rate three seconds running.
    BrokeDown {
        at_s: f64,
        /// That second's offered rate, its completed calls per second and its p99 (µs).
        offered: f64,
        achieved: f64,
        p99_us: u64,
        /// The last second that kept up before it: its offered rate and p99 (µs).
        last_good: Option<(f64, u64)>,
    },
}

/// The ramp of a step whose stages ramp the rate (None: a clients ramp, no stages, or no whole second).
pub(crate) fn judge(stages: &[StageResults], timeline: &Timeline) -> Option<Ramp> {
    if stages.first()?.ramped != Ramped::Rate {
        return None;
    }
    // A second cut by the end of the run holds too few calls to judge.
    let seconds: Vec<&Interval> = timeline
        .intervals
        .iter()
        .filter(|i| i.dur_s >= 0.5)
        .collect();
    let mut run = 0;
    let mut last_good = None;
    let mut highest = 0.0_f64;
    let mut worst = 0;
    for (k, i) in seconds.iter().enumerate() {
        worst = worst.max(i.p99_us);
        let offered = offered_at(stages, i.t_s + i.dur_s / 2.0);
        let expected = offered * i.dur_s;
        let slack = (expected * (1.0 - MIN_ACHIEVED)).max(3.0 * expected.sqrt());
        if (i.ok as f64) < expected - slack {
            run += 1;
            if run == RUNNING {
                let first = seconds[k + 1 - RUNNING];
                let mid = first.t_s + first.dur_s / 2.0;
                return Some(Ramp::BrokeDown {
                    at_s: first.t_s,
                    offered: offered_at(stages, mid),
                    achieved: first.ok as f64 / first.dur_s,
                    p99_us: first.p99_us,
                    last_good,
                });
            }
        } else {
            run = 0;
            last_good = Some((offered, i.p99_us));
            highest = highest.max(offered);
        }
    }
    (!seconds.is_empty()).then_some(Ramp::KeptUp {
        highest,
        worst_p99_us: worst,
    })
}

/// The rate offered at `t` seconds: the stage around it, interpolated from its start level to its end.
fn offered_at(stages: &[StageResults], t: f64) -> f64 {
    let spans: Vec<Span> = stages.iter().map(Span::from).collect();
    level_on(&spans, t)
}

#[cfg(test)]
pub(crate) mod tests {
    use bench_proto::results::{ErrorCounts, Interval, Part, StageResults, Timeline};
    use bench_proto::shape::Ramped;

    use super::{judge, Ramp};

    pub(crate) fn stage(n: u32, from_s: f64, to_s: f64, start: f64, end: f64) -> StageResults {
        StageResults {
            stage: n,
            ramped: Ramped::Rate,
            from_s,
            to_s,
            start,
            end,
            calls: Part::default(),
        }
    }

    /// Seconds of a server that completes what is offered up to `capacity`/s, its p99 1 ms until then and
    /// 50 ms past it.
    fn seconds(stages: &[StageResults], n: u64, capacity: f64) -> Timeline {
        let intervals = (0..n)
            .map(|k| {
                let offered = super::offered_at(stages, k as f64 + 0.5);
                let ok = offered.min(capacity);
                Interval {
                    t_s: k as f64,
                    dur_s: 1.0,
                    ok: ok.round() as u64,
                    errors: ErrorCounts::default(),
                    p99_us: if offered > capacity { 50_000 } else { 1_000 },
                    ..Interval::default()
                }
            })
            .collect();
        Timeline {
            interval_s: 1.0,
            intervals,
            ..Timeline::default()
        }
    }

    #[test]
    fn a_ramp_past_the_capacity_breaks_down_where_the_calls_fall_short() {
        // 0 → 10,000/s over 100 s: 100/s more each second; the server completes 6,000/s at most.
        let stages = [stage(1, 0.0, 100.0, 0.0, 10_000.0)];
        let r = judge(&stages, &seconds(&stages, 100, 6_000.0)).unwrap();
        let Ramp::BrokeDown {
            at_s,
            offered,
            achieved,
            p99_us,
            last_good,
        } = r
        else {
            panic!("{r:?}")
        };
        // Second 61 offers 6,150/s: 6,000 is 97.6 %, within max-rate's 3 %. Second 62 (6,250/s) is the first
        // short one, and 63 and 64 follow it.
        assert_eq!(at_s, 62.0);
        assert_eq!((offered, achieved, p99_us), (6_250.0, 6_000.0, 50_000));
        assert_eq!(last_good, Some((6_150.0, 50_000)));
    }

    #[test]
    fn a_ramp_within_the_capacity_keeps_up_and_one_short_second_is_noise() {
        let stages = [
            stage(1, 0.0, 10.0, 0.0, 1_000.0),
            stage(2, 10.0, 20.0, 1_000.0, 1_000.0),
        ];
        let mut t = seconds(&stages, 20, 1e9);
        t.intervals[12].ok = 500;
        t.intervals[12].p99_us = 9_000;
        let r = judge(&stages, &t).unwrap();
        assert_eq!(
            r,
            Ramp::KeptUp {
                highest: 1_000.0,
                worst_p99_us: 9_000
            }
        );
        // A clients ramp has no offered rate to keep up with.
        let mut clients = stages.to_vec();
        clients[0].ramped = Ramped::Clients;
        assert_eq!(judge(&clients, &t), None);
    }
}
