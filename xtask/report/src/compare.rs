//! `cargo xtask compare`'s text: provenance differences in words first, then per step the change in
//! throughput and latency percentiles, with a 95 % interval when either side has repeated runs; as Markdown
//! ([`markdown`]) or one JSON document ([`json`]).

mod provenance;
mod stats;

use std::fmt::Write as _;

use bench_proto::numbers::compact;
use wsbench_harness::metric::Metric;
use wsbench_harness::results::{Run, Step};
use wsbench_harness::stats::Estimate;

/// Whether the two sides can be compared at all: never emulated beside native figures, never two different
/// operations only.
pub fn check(a: &[Run], b: &[Run]) -> anyhow::Result<()> {
    let emulated = |side: &[Run]| side.iter().any(|r| r.manifest.emulated);
    let native = |side: &[Run]| side.iter().any(|r| !r.manifest.emulated);
    if (emulated(a) || emulated(b)) && (native(a) || native(b)) {
        anyhow::bail!("one side ran its client under emulation (--client-arch): emulated figures are never compared with native ones");
    }
    let rows = rows(a, b);
    let comparable = rows.iter().any(|r| !r.values.is_empty());
    let differing: Vec<&Row> = rows.iter().filter(|r| r.operations.is_some()).collect();
    if !comparable && !differing.is_empty() {
        let (oa, ob) = differing[0].operations.clone().unwrap_or_default();
        anyhow::bail!(
            "A and B measure different operations ({oa} against {ob}): their figures are not comparable"
        );
    }
    Ok(())
}

/// The comparison as one JSON document.
pub fn json(a: &[Run], b: &[Run]) -> serde_json::Value {
    to_json(a, b, &rows(a, b))
}

/// The metrics compared at each step, in the order of the table.
const METRICS: [Metric; 5] = [
    Metric::ThroughputPerS,
    Metric::MeanLatencyMs,
    Metric::P50LatencyMs,
    Metric::P99LatencyMs,
    Metric::P999LatencyMs,
];

/// A metric's column name: `throughput /s`, `p99 ms`.
fn column(m: Metric) -> String {
    format!("{} {}", m.short().unwrap_or(m.key()), m.unit().symbol())
}

/// The steps of `run` that are "the same step" (every round of it): same id without the round, else
/// same label.
fn find<'a>(run: &'a Run, like: &Step) -> Vec<&'a Step> {
    let by_id: Vec<&Step> = run
        .steps
        .iter()
        .filter(|s| s.meta.group() == like.meta.group())
        .collect();
    if !by_id.is_empty() {
        return by_id;
    }
    run.steps
        .iter()
        .filter(|s| s.meta.label == like.meta.label)
        .collect()
}

/// A side's values of a metric at a step: one per run and round; for a single chat run, its scored runs.
fn side_values(side: &[Run], like: &Step, m: Metric) -> Vec<f64> {
    let steps: Vec<&Step> = side
        .iter()
        .flat_map(|r| find(r, like))
        .filter(|s| s.doc.is_ok())
        .collect();
    if m == Metric::ThroughputPerS && steps.len() == 1 {
        let runs = steps[0].chat_run_scores();
        if runs.len() >= 2 {
            return runs;
        }
    }
    steps.iter().filter_map(|s| s.value(m)).collect()
}

fn describe(side: &[Run]) -> String {
    let first = &side[0];
    let names: Vec<String> = side
        .iter()
        .map(|r| {
            r.dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    let runs = if side.len() == 1 {
        "1 run".to_string()
    } else {
        format!("{} runs", side.len())
    };
    format!(
        "{} — {runs}: {} ({})",
        first.manifest.scenario,
        names.join(", "),
        first.dir.display()
    )
}

fn fmt_val(xs: &[f64]) -> String {
    match Estimate::of(xs) {
        None => "—".into(),
        Some(e) if e.n == 1 => compact(e.median),
        Some(e) => format!(
            "{}{} (n={})",
            compact(e.median),
            e.interval(compact).replace(&format!(", n={}", e.n), ""),
            e.n
        ),
    }
}

fn fmt_change(a: &[f64], b: &[f64]) -> String {
    let Some(c) = stats::change(a, b) else {
        return "—".into();
    };
    let Some(rel) = c.relative() else {
        return format!("{:+}", compact(c.diff));
    };
    let mut s = format!("{:+.1} %", rel * 100.0);
    match (c.half_width, c.significant()) {
        (Some(hw), Some(sig)) => {
            let _ = write!(s, " ± {:.1} %", hw / c.a.abs() * 100.0);
            s.push_str(if sig { " (real)" } else { " (noise)" });
        }
        _ => s.push_str(" (n=1: no interval)"),
    }
    s
}

/// The whole comparison, as Markdown.
pub fn markdown(a: &[Run], b: &[Run]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# wsbench compare\n\nA: {}\nB: {}\n",
        describe(a),
        describe(b)
    );
    out.push_str("## Provenance\n\n");
    for line in provenance::differences(a, b) {
        let _ = writeln!(out, "- {line}");
    }
    out.push_str("\n## Steps\n\n");
    let repeated =
        a.len() > 1 || b.len() > 1 || a.iter().chain(b).any(|r| r.manifest.repeat.is_some());
    out.push_str(if repeated {
        "Values are the median over runs and rounds with its 95 % interval in brackets (`t`: Student's t, \
         under six values); the change is B's mean against A's with its 95 % interval (Welch). \"noise\": \
         the interval includes no change.\n\n"
    } else {
        "One run on each side: changes carry no interval (repeat: `run --repeat N`, or pass runs comma-joined, \
         to get one); chat steps use their scored runs.\n\n"
    });
    out.push_str("| step | metric | A | B | change |\n|---|---|---|---|---|\n");
    for row in rows(a, b) {
        if let Some(only) = row.only {
            let _ = writeln!(out, "| {} | | only in {only} | | |", row.label);
            continue;
        }
        if let Some((oa, ob)) = &row.operations {
            let _ = writeln!(
                out,
                "| {} | | A runs {oa}, B runs {ob}: different operations, not compared | | |",
                row.label
            );
            continue;
        }
        for (i, (name, va, vb)) in row.values.iter().enumerate() {
            let label = if i == 0 { row.label.as_str() } else { "" };
            let _ = writeln!(
                out,
                "| {label} | {name} | {} | {} | {} |",
                fmt_val(va),
                fmt_val(vb),
                fmt_change(va, vb)
            );
        }
        let (ea, eb) = row.errors;
        if ea + eb > 0 {
            let _ = writeln!(out, "| | failed calls | {ea} | {eb} | |");
        }
    }
    out
}

/// One step of the comparison: its figures on both sides, or why it has none.
#[derive(Debug)]
struct Row {
    label: String,
    /// The step is on one side only.
    only: Option<&'static str>,
    /// The sides ran different operations at this step: `(A's, B's)`.
    operations: Option<(String, String)>,
    /// `(metric, A's values, B's values)`.
    values: Vec<(String, Vec<f64>, Vec<f64>)>,
    errors: (u64, u64),
}

fn rows(a: &[Run], b: &[Run]) -> Vec<Row> {
    let mut out = vec![];
    let mut labels_done: Vec<String> = vec![];
    let all_steps = a.iter().chain(b).flat_map(|r| r.steps.iter());
    for step in all_steps {
        if labels_done.contains(&step.meta.label) {
            continue;
        }
        labels_done.push(step.meta.label.clone());
        let mut row = Row {
            label: step.meta.label.clone(),
            only: None,
            operations: None,
            values: vec![],
            errors: (0, 0),
        };
        let first_op = |side: &[Run]| {
            side.iter()
                .flat_map(|r| find(r, step))
                .find_map(Step::operation)
        };
        let (op_a, op_b) = (first_op(a), first_op(b));
        let in_a = a.iter().any(|r| !find(r, step).is_empty());
        let in_b = b.iter().any(|r| !find(r, step).is_empty());
        if !(in_a && in_b) {
            row.only = Some(if in_a { "A" } else { "B" });
            out.push(row);
            continue;
        }
        if let (Some(oa), Some(ob)) = (&op_a, &op_b) {
            if oa != ob {
                row.operations = Some((oa.clone(), ob.clone()));
                out.push(row);
                continue;
            }
        }
        for m in METRICS {
            let (va, vb) = (side_values(a, step, m), side_values(b, step, m));
            if va.is_empty() && vb.is_empty() {
                continue;
            }
            row.values.push((column(m), va, vb));
        }
        let errors = |side: &[Run]| -> u64 {
            side.iter()
                .flat_map(|r| find(r, step))
                .filter_map(|s| s.doc.as_ref().ok())
                .map(|d| d.counts.errors_total)
                .sum()
        };
        row.errors = (errors(a), errors(b));
        out.push(row);
    }
    out
}

/// The comparison as one JSON document: both sides, provenance differences, and per step and metric the
/// median and interval of each side and the change.
fn to_json(a: &[Run], b: &[Run], rows: &[Row]) -> serde_json::Value {
    use serde_json::json;
    let side = |xs: &[f64]| {
        Estimate::of(xs)
            .map(|e| json!({"n": e.n, "median": e.median, "low": e.lo, "high": e.hi, "values": xs}))
    };
    let dirs = |s: &[Run]| {
        s.iter()
            .map(|r| r.dir.display().to_string())
            .collect::<Vec<_>>()
    };
    let steps: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let metrics: Vec<serde_json::Value> = r
                .values
                .iter()
                .map(|(name, va, vb)| {
                    let c = stats::change(va, vb);
                    json!({
                        "metric": name,
                        "a": side(va),
                        "b": side(vb),
                        "change": c.map(|c| json!({
                            "relative": c.relative(),
                            "half_width_relative": c.half_width.map(|h| h / c.a.abs()),
                            "significant": c.significant(),
                        })),
                    })
                })
                .collect();
            json!({
                "step": r.label,
                "only_in": r.only,
                "different_operations": r.operations.as_ref().map(|(x, y)| json!({"a": x, "b": y})),
                "metrics": metrics,
                "failed_calls": {"a": r.errors.0, "b": r.errors.1},
            })
        })
        .collect();
    json!({
        "schema": "wsbench.compare/v1",
        "a": {"scenario": a[0].manifest.scenario, "runs": dirs(a)},
        "b": {"scenario": b[0].manifest.scenario, "runs": dirs(b)},
        "provenance": provenance::differences(a, b),
        "steps": steps,
    })
}

#[cfg(test)]
mod tests;
