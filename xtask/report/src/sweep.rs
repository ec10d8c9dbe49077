//! A run seen as a sweep: per series (operation), throughput and latency against the swept variable, and the knee.

use super::knee::{find_knee, Knee};
use bench_proto::numbers::fmt_x;
use wsbench_harness::results::{Axis, Run, Step};
use wsbench_harness::stats::Estimate;

/// A point being built: its first round, every round, throughput's spread, `(x, throughput, latency)`.
type Row = (usize, Vec<usize>, Estimate, (f64, f64, f64));

/// One curve of the sweep.
#[derive(Debug, Clone)]
pub(crate) struct Curve {
    pub name: String,
    /// Indices into `run.steps`, sorted by x, only steps with a results document: a repeated step's first round.
    pub steps: Vec<usize>,
    /// Per point, every round of the step (itself alone when not repeated).
    pub rounds: Vec<Vec<usize>>,
    /// Per point, total throughput's median and 95 % interval over the rounds.
    pub spread: Vec<Estimate>,
    /// `(x, total throughput /s, mean corrected latency ms)`, sorted by x: medians over rounds.
    pub points: Vec<(f64, f64, f64)>,
    pub knee: Option<Knee>,
}

/// The run's axis and curves; knees only when something numeric is swept over at least three points.
pub(crate) fn curves(run: &Run, min_gain: f64) -> (Axis, Vec<Curve>) {
    let axis = run.axis();
    let curves = run
        .series()
        .into_iter()
        .map(|(name, idx)| {
            let mut seen: Vec<&str> = vec![];
            let mut rows: Vec<Row> = idx
                .into_iter()
                .filter_map(|i| {
                    let s = &run.steps[i];
                    let g = s.meta.group();
                    if seen.contains(&g) {
                        return None;
                    }
                    seen.push(g);
                    let rounds = run.rounds_of(i);
                    let x = axis.value(i, &s.meta)?;
                    let t = run.estimate(&rounds, Step::throughput)?;
                    let l = run
                        .estimate(&rounds, |s| s.latency().map(|l| l.mean / 1000.0))
                        .map_or(f64::NAN, |e| e.median);
                    let first = rounds.iter().copied().find(|&r| run.steps[r].doc.is_ok())?;
                    Some((first, rounds, t, (x, t.median, l)))
                })
                .collect();
            rows.sort_by(|a, b| a.3 .0.total_cmp(&b.3 .0));
            let points: Vec<_> = rows.iter().map(|r| r.3).collect();
            let knee = (axis != Axis::Step && points.len() >= 3)
                .then(|| find_knee(&points, min_gain))
                .flatten();
            let steps = rows.iter().map(|r| r.0).collect();
            let spread = rows.iter().map(|r| r.2).collect();
            let rounds = rows.into_iter().map(|r| r.1).collect();
            Curve {
                name,
                steps,
                rounds,
                spread,
                points,
                knee,
            }
        })
        .collect();
    (axis, curves)
}

/// Summary sentences for the knees (or their absence) of every curve.
pub(crate) fn knee_sentences(axis: Axis, curves: &[Curve], min_gain: f64) -> Vec<String> {
    if axis == Axis::Step {
        return vec![];
    }
    curves
        .iter()
        .filter(|c| c.points.len() >= 3)
        .map(|c| {
            let prefix = if curves.len() > 1 { format!("{}: ", c.name) } else { String::new() };
            match &c.knee {
                Some(k) => {
                    let e = c.spread[k.index];
                    let repeated = if e.n > 1 {
                        format!(
                            " Figures are medians of {} rounds; throughput at the knee has the 95 % interval {}–{}/s.",
                            e.n,
                            fmt_x(e.lo.round()),
                            fmt_x(e.hi.round())
                        )
                    } else {
                        String::new()
                    };
                    format!("{prefix}{}{repeated}", k.sentence(axis.name(), min_gain, "ms"))
                }
                None => {
                    let n = c.points.len();
                    let ((xa, ta, _), (xb, tb, _)) = (c.points[n - 2], c.points[n - 1]);
                    let gain = if ta > 0.0 { tb / ta - 1.0 } else { f64::INFINITY };
                    if gain > min_gain {
                        format!(
                            "{prefix}No knee yet: total throughput still rises {:.0} % from {} to {} {} \
                             (more than the {:.0} % threshold), so the sweep ends before the server saturates.",
                            gain * 100.0,
                            fmt_x(xa),
                            fmt_x(xb),
                            axis.name(),
                            min_gain * 100.0
                        )
                    } else {
                        format!(
                            "{prefix}No knee: where total throughput levels off, latency does not keep \
                             rising (by more than {:.0} %) — the load did not saturate the server.",
                            min_gain * 100.0
                        )
                    }
                }
            }
        })
        .collect()
}
