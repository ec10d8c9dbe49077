//! A scenario's history as series: one per step, server, machine and configuration (runs are comparable
//! only within one), each a metric's value run after run, with its outliers and change points
//! ([`super::changes`]) and the commit range each change lies in.

use crate::metric::Metric;
use crate::rundoc::Status;

use super::changes::{self, Outlier};
use super::entry::{PublishedFigure, Recorded};

/// What to draw from the runs.
#[derive(Debug, Clone, Default)]
pub struct Select {
    /// None: the metric of the scenario's published figure (else throughput).
    pub metric: Option<Metric>,
    pub sut: Option<String>,
    /// Only steps whose id contains this.
    pub step: Option<String>,
    /// Only the newest N runs.
    pub last: Option<usize>,
}

/// One run's value in a series.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Index into [`History::runs`].
    pub run: usize,
    pub value: f64,
    pub interval: Option<(f64, f64)>,
    pub published: Option<PublishedFigure>,
    /// Outside the range the runs before it predict.
    pub outlier: Option<Outlier>,
    /// Left out of the change detection: the machine was busy, or the run did not measure to the end.
    pub suspect: bool,
}

/// Where a series' level moved: between the runs of two points.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The last point of the old level and the first of the new (indices into the series' points).
    pub before: usize,
    pub after: usize,
    /// Median of the old level's values and of the new one's, up to the next change.
    pub from: f64,
    pub to: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub step: String,
    pub sut: String,
    pub metric: Metric,
    pub fingerprint: String,
    pub config: String,
    pub points: Vec<Point>,
    pub changes: Vec<Change>,
}

/// The runs of a scenario and their series.
#[derive(Debug, Clone)]
pub struct History {
    pub runs: Vec<Recorded>,
    pub metric: Metric,
    pub series: Vec<Series>,
}

/// Whether a run's figures are left out of change detection (still shown, marked).
fn suspect(r: &Recorded) -> bool {
    r.entry.busy || r.entry.emulated || !matches!(r.entry.status, Status::Ok | Status::Errors)
}

/// The metric a scenario's history shows by default: that of its published figure, else throughput.
fn default_metric(runs: &[Recorded]) -> Metric {
    let all = || runs.iter().rev().flat_map(|r| &r.entry.measurements);
    all()
        .find(|m| m.published.is_some())
        .map(|m| m.metric)
        .or_else(|| {
            all()
                .find(|m| m.metric == Metric::TotalPerS)
                .map(|m| m.metric)
        })
        .or_else(|| all().next().map(|m| m.metric))
        .unwrap_or(Metric::TotalPerS)
}

/// The series of `runs` (oldest first) that `select` picks.
pub fn build(mut runs: Vec<Recorded>, select: &Select) -> History {
    if let Some(n) = select.last {
        runs.drain(..runs.len().saturating_sub(n));
    }
    let metric = select.metric.unwrap_or_else(|| default_metric(&runs));
    let mut series: Vec<Series> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        for m in r.entry.measurements.iter().filter(|m| m.metric == metric) {
            if select.sut.as_ref().is_some_and(|s| *s != m.sut)
                || select
                    .step
                    .as_ref()
                    .is_some_and(|s| !m.step.contains(s.as_str()))
            {
                continue;
            }
            let key = (&m.step, &m.sut, &r.fingerprint, &r.entry.config);
            let point = Point {
                run: i,
                value: m.value,
                interval: m.interval,
                published: m.published.clone(),
                outlier: None,
                suspect: suspect(r),
            };
            match series
                .iter_mut()
                .find(|s| (&s.step, &s.sut, &s.fingerprint, &s.config) == key)
            {
                Some(s) => s.points.push(point),
                None => series.push(Series {
                    step: m.step.clone(),
                    sut: m.sut.clone(),
                    metric,
                    fingerprint: r.fingerprint.clone(),
                    config: r.entry.config.clone(),
                    points: vec![point],
                    changes: Vec::new(),
                }),
            }
        }
    }
    series.iter_mut().for_each(detect);
    History {
        runs,
        metric,
        series,
    }
}

/// Outliers and change points of a series, over its points that are not suspect.
fn detect(s: &mut Series) {
    let judged: Vec<usize> = (0..s.points.len())
        .filter(|&i| !s.points[i].suspect)
        .collect();
    let xs: Vec<f64> = judged.iter().map(|&i| s.points[i].value).collect();
    for (k, o) in changes::outliers(&xs).into_iter().enumerate() {
        s.points[judged[k]].outlier = o;
    }
    let cuts = changes::change_points(&xs);
    let mut bounds = vec![0];
    bounds.extend(&cuts);
    bounds.push(xs.len());
    let level = |a: usize, b: usize| crate::stats::median(&xs[a..b]).unwrap_or(f64::NAN);
    s.changes = cuts
        .iter()
        .enumerate()
        .map(|(c, &cut)| Change {
            before: judged[cut - 1],
            after: judged[cut],
            from: level(bounds[c], cut),
            to: level(cut, bounds[c + 2]),
        })
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::entry::{Entry, Kind, Machine, Measurement};

    fn run(i: usize, value: f64, busy: bool) -> Recorded {
        Recorded {
            id: i as i64,
            fingerprint: "f".into(),
            entry: Entry {
                kind: Kind::Run,
                scenario: "s".into(),
                started_at: format!("2026-12-01T10:{i:02}:00Z"),
                finished_at: None,
                commit: Some(format!("c{i}")),
                dirty: false,
                profile: None,
                machine: Machine::default(),
                config: String::new(),
                sut_config: serde_json::Value::Null,
                status: Status::Ok,
                busy,
                emulated: false,
                dir: None,
                measurements: [Metric::TotalPerS, Metric::P99LatencyMs]
                    .map(|metric| Measurement {
                        step: "01-clients-100".into(),
                        sut: "bench-server".into(),
                        metric,
                        value,
                        interval: None,
                        rounds: 1,
                        published: None,
                    })
                    .to_vec(),
            },
        }
    }

    #[test]
    fn a_step_down_is_placed_between_two_commits_and_busy_runs_are_left_out() {
        let mut runs: Vec<Recorded> = (0..8)
            .map(|i| run(i, 100.0 + (i % 3) as f64, false))
            .collect();
        runs.push(run(8, 20.0, true));
        runs.extend((9..17).map(|i| run(i, 90.0 + (i % 3) as f64, false)));
        let h = build(runs, &Select::default());
        assert_eq!(h.metric, Metric::TotalPerS);
        assert_eq!(h.series.len(), 1);
        let s = &h.series[0];
        assert_eq!(s.points.len(), 17);
        assert!(s.points[8].suspect && s.points[8].outlier.is_none());
        assert_eq!(s.changes.len(), 1, "{:?}", s.changes);
        let c = &s.changes[0];
        // The busy run between is no evidence either way: the level moved between c7 and c9.
        assert_eq!((c.before, c.after), (7, 9));
        assert!(c.from > 99.0 && c.to < 92.0, "{c:?}");
        assert!(
            s.points[9].outlier.is_some(),
            "the first run of the new level is flagged"
        );
        let last3 = build(
            h.runs.clone(),
            &Select {
                last: Some(3),
                metric: Some(Metric::P99LatencyMs),
                ..Select::default()
            },
        );
        assert_eq!(last3.series[0].points.len(), 3);
        assert_eq!(last3.metric, Metric::P99LatencyMs);
        let none = build(
            h.runs,
            &Select {
                sut: Some("gsoap".into()),
                ..Select::default()
            },
        );
        assert!(none.series.is_empty());
    }
}
