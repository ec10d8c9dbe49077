//! Per fault (`[[fault]]`, `--fault`): the calls that failed, the time to the first success after it, and p99
//! before, during and after it, from the step's timeline (its intervals' counts and histograms, its
//! recoveries) and the fault's times as xtask recorded them. Pure: a loaded results directory in, lines out.

use bench_proto::numbers::{num, thousands};
use bench_proto::results::{decode_histogram, ErrorCounts, ErrorKind, Timeline};
use hdrhistogram::Histogram;
use wsbench_harness::faults::FaultKind;
use wsbench_harness::results;
use wsbench_harness::rundoc::FaultRecord;

/// A fault's figures on its step's timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultFigures {
    /// When it was done and undone, in s from the step's t = 0 (`ended` None: it could not be undone).
    pub began_s: f64,
    pub ended_s: Option<f64>,
    /// The failed calls of the intervals from the fault to the recovery after it, by kind.
    pub failed: ErrorCounts,
    /// From the end of the fault to the first success after it (None: no call failed, or none succeeded).
    pub first_ok_after_s: Option<f64>,
    /// When every connection that failed had succeeded again (the end of the fault if none failed).
    pub recovered_s: f64,
    /// p99 of the ok calls before, during (fault to recovery) and after, µs.
    pub p99_us: [Option<u64>; 3],
}

/// The figures of fault `f` on `timeline`, its before and after bounded by `window` (s: the previous fault's
/// recovery and the next fault's start, so one fault's after is not another's during).
pub fn figures(f: &FaultRecord, timeline: &Timeline, window: (f64, f64)) -> FaultFigures {
    let on_timeline = |unix_us: u64| (unix_us as f64 - timeline.start_unix_us as f64) / 1e6;
    let began_s = on_timeline(f.began_unix_us);
    let ended_s = f.ended_unix_us.map(on_timeline);
    let end = ended_s.unwrap_or(f64::INFINITY);
    // Failures known up to an interval after the fault (a timeout, a backoff) are the fault's.
    let slack = timeline.interval_s.max(1.0);
    let ours: Vec<_> = timeline
        .recoveries
        .iter()
        .filter(|r| r.failed_from_s >= began_s - 0.1 && r.failed_from_s <= end + slack)
        .collect();
    let first_ok = ours
        .iter()
        .map(|r| r.first_ok_s)
        .fold(f64::INFINITY, f64::min);
    let last_ok = ours.iter().map(|r| r.last_ok_s).fold(end, f64::max);
    let recovered_s = if last_ok.is_finite() {
        last_ok
    } else {
        began_s
    };
    let mut failed = ErrorCounts::default();
    let mut parts: [Option<Histogram<u64>>; 3] = [None, None, None];
    for i in &timeline.intervals {
        let (from, to) = (i.t_s, i.t_s + i.dur_s);
        if to <= window.0 + 1e-6 || from >= window.1 - 1e-6 {
            continue;
        }
        let part = if to <= began_s + 1e-6 {
            0
        } else if from >= recovered_s {
            2
        } else {
            failed.add(&i.errors);
            1
        };
        if let Ok(h) = decode_histogram(&i.corrected) {
            match &mut parts[part] {
                Some(acc) => {
                    let _ = acc.add(&h);
                }
                slot => *slot = Some(h),
            }
        }
    }
    FaultFigures {
        began_s,
        ended_s,
        failed,
        first_ok_after_s: (first_ok.is_finite() && ended_s.is_some())
            .then(|| (first_ok - end).max(0.0)),
        recovered_s,
        p99_us: parts.map(|h| {
            h.filter(|h| !h.is_empty())
                .map(|h| h.value_at_quantile(0.99))
        }),
    }
}

/// `## Faults`: a row per fault of every step that had some, as Markdown lines (none without faults).
pub fn section(loaded: &results::Run) -> Vec<String> {
    let mut lines = Vec::new();
    let o = &mut lines;
    let steps: Vec<_> = loaded
        .steps
        .iter()
        .filter(|s| !s.meta.faults.is_empty())
        .collect();
    if steps.is_empty() {
        return lines;
    }
    line(o, "\n## Faults\n");
    line(o, "| step | fault | done at / undone at s | calls failed | first success after it | recovered at s | p99 before / during / after ms |");
    line(o, "|---|---|---|---|---|---|---|");
    for s in steps {
        let timeline = s.record.as_ref().and_then(|r| r.timeline.as_ref());
        let mut from = 0.0;
        for (n, f) in s.meta.faults.iter().enumerate() {
            let what = format!("{} at {} s for {} s", f.kind, num(f.at_s), num(f.for_s));
            let Some(t) = timeline else {
                line(
                    o,
                    format!(
                        "| {} | {what} | | no timeline in the step's document | | | |",
                        s.meta.id
                    ),
                );
                continue;
            };
            let next = s.meta.faults.get(n + 1).map_or(f64::INFINITY, |next| {
                (next.began_unix_us as f64 - t.start_unix_us as f64) / 1e6
            });
            let g = figures(f, t, (from, next));
            from = g.recovered_s;
            let ms = |v: Option<u64>| v.map_or("–".to_owned(), |us| num(us as f64 / 1000.0));
            line(
                o,
                format!(
                    "| {} | {what} | {} / {} | {} | {} | {} | {} / {} / {} |",
                    s.meta.id,
                    num(g.began_s),
                    g.ended_s.map_or("never".to_owned(), num),
                    failed_text(&g.failed),
                    g.first_ok_after_s
                        .map_or("no call failed".to_owned(), |x| format!("{} s", num(x))),
                    num(g.recovered_s),
                    ms(g.p99_us[0]),
                    ms(g.p99_us[1]),
                    ms(g.p99_us[2]),
                ),
            );
        }
    }
    line(o, format!("\nA fault is done at its time from the step's t = 0 (the start of measuring) and undone `for` later: \
         {}. Calls failed are the errors of the intervals from the fault \
         to the recovery (every connection that failed succeeded again); they count as errors, never as throughput. \
         Before and after stop at the faults on either side, by whole intervals. \
         The first success is timed from when the fault was undone. After a kill-server the server's RSS and CPU \
         are those of the process killed (bench-client's --monitor-pid does not follow the restart).",
        FaultKind::what_each_is()
    ));
    lines
}

fn line(o: &mut Vec<String>, text: impl Into<String>) {
    o.push(text.into());
}

fn failed_text(e: &ErrorCounts) -> String {
    let total = e.total();
    if total == 0 {
        return "0".to_owned();
    }
    let kinds: Vec<String> = ErrorKind::ALL
        .iter()
        .filter(|&&k| e.get(k) > 0)
        .map(|&k| format!("{} {}", k.as_str(), thousands(e.get(k))))
        .collect();
    format!("{} ({})", thousands(total), kinds.join(", "))
}
