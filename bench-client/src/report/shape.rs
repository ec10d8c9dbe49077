//! The summary's parts for a shaped load, within 80 columns: an early stop on a failed threshold, where each
//! call's time went (connect, time to first byte, transfer), each operation of a mix, each stage.

use std::fmt::Write as _;

use bench_proto::results::{LatencySummary, Part, ResultsDoc};
use bench_proto::shape::Ramped;
use bench_proto::thresholds::Threshold;

use super::columns;
use bench_proto::numbers::{thousands, thousands_f};

/// How the load was shaped, for the heading: the stages, the arrivals, the seed.
pub(super) fn load(doc: &ResultsDoc) -> Option<String> {
    let sh = &doc.params.shape;
    let mut parts = Vec::new();
    if let Some(a) = sh.arrivals.filter(|a| *a != Default::default()) {
        parts.push(format!("{} arrivals", a.name()));
    }
    if !sh.stages.is_empty() {
        let list: Vec<String> = sh
            .stages
            .iter()
            .map(|s| format!("{}s→{}", s.for_s, s.target))
            .collect();
        parts.push(format!(
            "{} ramped: {}",
            sh.stages[0].ramped.name(),
            list.join(", ")
        ));
    }
    if let Some(seed) = sh.seed {
        parts.push(format!("draws seeded {seed}"));
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// A run stopped on a failed threshold: when, which, what the window measured.
pub(super) fn aborted(s: &mut String, doc: &ResultsDoc) {
    let Some(a) = &doc.shape.aborted else {
        return;
    };
    let unit = Threshold::parse(&a.threshold).map_or("", |t| t.unit());
    let text = format!(
        "at {:.1} s: {} failed on the last {:.1} s ({} calls): {} {unit} measured; the figures below \
         cover the run until then",
        a.at_s,
        a.threshold,
        a.window_s,
        thousands(a.calls),
        thousands_f(a.measured, 3)
    );
    columns::field(s, "STOPPED", &text);
}

/// Connect, time to first byte and transfer, in ms (the run's ok calls; connect: every connection made).
pub(super) fn phases(s: &mut String, doc: &ResultsDoc) {
    let Some(p) = &doc.shape.phases else {
        return;
    };
    if p.ttfb.latency_us.count == 0 && p.connect.latency_us.count == 0 {
        return;
    }
    table(
        s,
        "Phases (ms)",
        &[
            ("connect", &p.connect.latency_us),
            ("first byte", &p.ttfb.latency_us),
            ("transfer", &p.transfer.latency_us),
        ],
    );
    columns::words(
        s,
        "    ",
        4,
        "connect: each connection made; first byte: from the request's send to the response's first \
         byte; transfer: on to its last (0 when one read brought it all)",
    );
}

/// Each operation of a mix: its share of the weights, calls, errors, p50 and p99.
pub(super) fn operations(s: &mut String, doc: &ResultsDoc) {
    let ops = &doc.shape.operations;
    if ops.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "  {:<20}{:>7}{:>13}{:>10}{:>12}{:>12}",
        "Mix", "share", "calls", "failed", "p50 ms", "p99 ms"
    );
    let total = ops
        .iter()
        .map(|o| o.calls.ok + o.calls.errors_total)
        .sum::<u64>()
        .max(1);
    for o in ops {
        let calls = o.calls.ok + o.calls.errors_total;
        let _ = writeln!(
            s,
            "    {:<18}{:>7}{:>13}{:>10}{:>12}{:>12}",
            o.operation,
            format!("{:.0}%", o.share * 100.0),
            format!(
                "{} {:.0}%",
                thousands(calls),
                calls as f64 * 100.0 / total as f64
            ),
            thousands(o.calls.errors_total),
            ms(o.calls.latency_us.p50),
            ms(o.calls.latency_us.p99),
        );
    }
}

/// Each stage: where it lies, its level from start to end, calls, errors and p99.
pub(super) fn stages(s: &mut String, doc: &ResultsDoc) {
    let st = &doc.shape.stages;
    if st.is_empty() {
        return;
    }
    let what = match st[0].ramped {
        Ramped::Clients => "clients",
        Ramped::Rate => "rate /s",
    };
    let _ = writeln!(
        s,
        "  {:<8}{:>14}{:>16}{:>12}{:>12}{:>10}",
        "Stages", "s", what, "ok /s", "failed", "p99 ms"
    );
    for x in st {
        let secs = x.to_s - x.from_s;
        let rate = if secs > 0.0 {
            x.calls.ok as f64 / secs
        } else {
            0.0
        };
        let _ = writeln!(
            s,
            "    {:<6}{:>14}{:>16}{:>12}{:>12}{:>10}",
            x.stage,
            format!("{:.0}–{:.0}", x.from_s, x.to_s),
            format!("{}→{}", thousands_f(x.start, 0), thousands_f(x.end, 0)),
            thousands_f(rate, 1),
            thousands(x.calls.errors_total),
            p99(&x.calls),
        );
    }
}

fn p99(p: &Part) -> String {
    if p.ok == 0 {
        "–".to_owned()
    } else {
        ms(p.latency_us.p99)
    }
}

fn ms(us: u64) -> String {
    format!("{:.3}", us as f64 / 1000.0)
}

/// A latency table's rows: p50 … max per row.
fn table(s: &mut String, title: &str, rows: &[(&str, &LatencySummary)]) {
    let _ = write!(s, "  {title:<15}");
    for n in ["p50", "p90", "p99", "p99.9", "max", "count"] {
        let _ = write!(s, "{n:>10}");
    }
    let _ = writeln!(s);
    for (label, r) in rows {
        let _ = write!(s, "    {label:<13}");
        for v in [r.p50, r.p90, r.p99, r.p99_9, r.max] {
            let _ = write!(s, "{:>10}", ms(v));
        }
        let _ = writeln!(s, "{:>10}", thousands(r.count));
    }
}
