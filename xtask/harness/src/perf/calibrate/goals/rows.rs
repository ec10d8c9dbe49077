//! The pure parts of `calibrate --goals`: what one load run measured, the goal rows built from the rounds
//! (medians of per-round ratios, judged against issue 29's goals), their table, and when a JVM's rate has
//! settled.

use std::fmt::Write as _;
use std::time::Duration;

use crate::stats::median;

/// One load run against one server: its rate, the calls it made, the server's CPU seconds meanwhile and how
/// long it lasted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Run {
    pub(super) rate: f64,
    pub(super) calls: f64,
    pub(super) server_cpu_s: f64,
    pub(super) wall_s: f64,
}

impl Run {
    /// Server CPU seconds per call.
    pub(super) fn cpu_per_call(&self) -> f64 {
        self.server_cpu_s / self.calls.max(1.0)
    }

    /// The share of its one core the server used.
    pub(super) fn busy(&self) -> f64 {
        if self.wall_s > 0.0 {
            self.server_cpu_s / self.wall_s
        } else {
            0.0
        }
    }
}

/// One goal: what is measured, how it is computed from a round, the least value that meets it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Goal {
    pub(super) name: &'static str,
    pub(super) unit: &'static str,
    pub(super) least: f64,
}

/// A goal's figures over the rounds.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Row {
    pub(super) name: &'static str,
    pub(super) unit: &'static str,
    pub(super) least: f64,
    /// The median over the rounds of the figure in req/s (or MB/s).
    pub(super) measured: f64,
    /// The same figure per server CPU second (fairer when a server was not saturated).
    pub(super) per_cpu: f64,
    /// The median busy share of the servers' core in the runs the figure compares.
    pub(super) busy: Vec<(&'static str, f64)>,
}

impl Row {
    /// The goal's figure from per-round values: `by_rate[i]` and `by_cpu[i]` from round i.
    pub(super) fn of(
        goal: Goal,
        by_rate: &[f64],
        by_cpu: &[f64],
        busy: Vec<(&'static str, f64)>,
    ) -> Option<Row> {
        Some(Row {
            name: goal.name,
            unit: goal.unit,
            least: goal.least,
            measured: median(by_rate)?,
            per_cpu: median(by_cpu)?,
            busy,
        })
    }

    /// Met when the median over the rounds reaches the goal (the goal is stated in req/s, so the rate decides;
    /// the per-CPU figure is shown beside it).
    pub(super) fn met(&self) -> bool {
        self.measured >= self.least
    }
}

/// The table of rows: one line each, measured, goal, met or MISS, per CPU second, and the servers' busy share.
pub(super) fn table(rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<34} {:>12} {:>10}  {:<5} {:>14}  server core busy",
        "goal", "measured", "goal", "", "per CPU second"
    );
    for r in rows {
        let busy = r
            .busy
            .iter()
            .map(|(who, b)| format!("{who} {:.0} %", 100.0 * b))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            out,
            "{:<34} {:>12} {:>10}  {:<5} {:>14}  {busy}",
            r.name,
            figure(r.measured, r.unit),
            format!("≥ {}", figure(r.least, r.unit)),
            if r.met() { "met" } else { "MISS" },
            figure(r.per_cpu, r.unit),
        );
    }
    out
}

fn figure(v: f64, unit: &str) -> String {
    match unit {
        "×" => format!("{v:.3}×"),
        _ => format!("{v:.0} {unit}"),
    }
}

/// What the JVM warm-up should do after another slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Warm {
    /// Run another slice.
    More,
    /// The rate is flat: measure.
    Settled,
    /// Not flat by the most time allowed: measure anyway (and say so).
    GaveUp,
}

/// Slices compared for flatness: the last three (30 s with 10 s slices).
pub(super) const FLAT_SLICES: usize = 3;
/// How far apart (max − min over their median) the last slices' rates may be.
pub(super) const FLAT_WITHIN: f64 = 0.03;

/// Whether the last [`FLAT_SLICES`] rates lie within [`FLAT_WITHIN`] of their median.
pub(super) fn is_flat(rates: &[f64]) -> bool {
    if rates.len() < FLAT_SLICES {
        return false;
    }
    let last = &rates[rates.len() - FLAT_SLICES..];
    let (lo, hi) = last
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &r| {
            (lo.min(r), hi.max(r))
        });
    median(last).is_some_and(|m| m > 0.0 && (hi - lo) / m <= FLAT_WITHIN)
}

/// After `elapsed` of warm-up whose slices had `rates`: settled once flat and at least `least` long, given
/// up at `most`.
pub(super) fn warm(rates: &[f64], elapsed: Duration, least: Duration, most: Duration) -> Warm {
    if elapsed >= least && is_flat(rates) {
        Warm::Settled
    } else if elapsed >= most {
        Warm::GaveUp
    } else {
        Warm::More
    }
}

/// Per-round values of `f(a, b)`, for the runs of two targets in the same rounds.
pub(super) fn per_round(a: &[Run], b: &[Run], f: impl Fn(&Run, &Run) -> f64) -> Vec<f64> {
    a.iter().zip(b).map(|(a, b)| f(a, b)).collect()
}

/// The order of `n` targets in round `round`: rotated by one each round, so that each comes first in turn.
pub(super) fn rotation(n: usize, round: usize) -> Vec<usize> {
    (0..n).map(|i| (i + round) % n.max(1)).collect()
}

/// The median busy share of `runs`.
pub(super) fn busy_of(runs: &[Run]) -> f64 {
    median(&runs.iter().map(Run::busy).collect::<Vec<_>>()).unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(rate: f64, cpu_s: f64) -> Run {
        Run {
            rate,
            calls: rate * 10.0,
            server_cpu_s: cpu_s,
            wall_s: 10.0,
        }
    }

    #[test]
    fn a_goal_is_met_at_or_above_its_least_value() {
        let goal = Goal {
            name: "g",
            unit: "×",
            least: 0.7,
        };
        let row = |v: &[f64]| Row::of(goal, v, v, Vec::new()).unwrap();
        assert!(row(&[0.7]).met());
        assert!(row(&[0.6, 0.9, 0.7]).met());
        assert!(!row(&[0.69, 0.9, 0.5]).met());
        assert!(Row::of(goal, &[], &[], Vec::new()).is_none());
        let text = table(&[row(&[0.5])]);
        assert!(text.contains("MISS") && text.contains("0.500×"), "{text}");
        assert!(table(&[row(&[0.8])]).contains("met"));
    }

    #[test]
    fn rows_take_the_median_of_per_round_ratios() {
        let a = [run(100.0, 10.0), run(90.0, 9.0), run(200.0, 10.0)];
        let b = [run(50.0, 10.0), run(60.0, 9.0), run(50.0, 5.0)];
        let ratios = per_round(&a, &b, |a, b| a.rate / b.rate);
        assert_eq!(ratios, [2.0, 1.5, 4.0]);
        assert_eq!(median(&ratios), Some(2.0));
        // Per CPU: b's CPU per call over a's.
        let cpu = per_round(&a, &b, |a, b| b.cpu_per_call() / a.cpu_per_call());
        assert!((cpu[0] - 2.0).abs() < 1e-9 && (cpu[2] - 2.0).abs() < 1e-9);
        assert!((busy_of(&a) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn warm_up_ends_when_flat_within_three_percent_or_at_the_most() {
        let s = Duration::from_secs;
        assert!(!is_flat(&[100.0, 100.0]));
        assert!(is_flat(&[10.0, 100.0, 101.0, 102.9]));
        assert!(!is_flat(&[100.0, 101.0, 103.5]));
        assert_eq!(warm(&[100.0; 3], s(20), s(30), s(180)), Warm::More);
        assert_eq!(warm(&[100.0; 3], s(30), s(30), s(180)), Warm::Settled);
        assert_eq!(warm(&[50.0, 80.0, 100.0], s(60), s(30), s(180)), Warm::More);
        assert_eq!(
            warm(&[50.0, 80.0, 100.0], s(180), s(30), s(180)),
            Warm::GaveUp
        );
        assert!(!is_flat(&[0.0, 0.0, 0.0]));
    }

    #[test]
    fn each_target_comes_first_in_turn() {
        assert_eq!(rotation(3, 0), [0, 1, 2]);
        assert_eq!(rotation(3, 1), [1, 2, 0]);
        assert_eq!(rotation(3, 5), [2, 0, 1]);
        assert!(rotation(0, 2).is_empty());
    }
}
