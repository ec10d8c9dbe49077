//! The history for other tools: Bencher Metric Format (BMF) JSON — `{ benchmark: { measure: { value,
//! lower_value?, upper_value? } } }`, one document per run, as `bencher run --adapter json --file` takes it —
//! and CSV, one row per run, step and metric.

use std::fmt::Write as _;

use serde_json::{json, Map, Value};

use wsbench_harness::history::series::History;

/// The BMF document of each run in `h` (oldest first) with the run: benchmarks named
/// `<scenario>/<step>/<server>`, measures by the metric's key in kebab case (`total-per-s`); the interval,
/// when the run had repeats, as the lower and upper values.
pub fn bencher<'h>(
    h: &'h History,
    scenario: &str,
) -> Vec<(&'h wsbench_harness::history::Recorded, Value)> {
    let mut docs: Vec<(usize, Map<String, Value>)> = Vec::new();
    for s in &h.series {
        let bench = format!("{scenario}/{}/{}", s.step, s.sut);
        for p in &s.points {
            let mut metric = Map::new();
            metric.insert("value".into(), json!(p.value));
            if let Some((lo, hi)) = p.interval {
                metric.insert("lower_value".into(), json!(lo));
                metric.insert("upper_value".into(), json!(hi));
            }
            let doc = match docs.iter_mut().find(|(run, _)| *run == p.run) {
                Some((_, d)) => d,
                None => {
                    docs.push((p.run, Map::new()));
                    &mut docs.last_mut().expect("just pushed").1
                }
            };
            let measures = doc
                .entry(bench.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(m) = measures {
                m.insert(s.metric.key().replace('_', "-"), Value::Object(metric));
            }
        }
    }
    docs.sort_by_key(|(run, _)| *run);
    docs.into_iter()
        .map(|(run, d)| (&h.runs[run], Value::Object(d)))
        .collect()
}

/// CSV (RFC 4180): a header, then one row per run, step and server of the history's metric.
pub fn csv(h: &History, scenario: &str) -> String {
    let mut out = String::from(
        "started_at,scenario,step,sut,metric,value,lower,upper,rounds,published,commit,dirty,profile,machine,config,status,busy,dir\n",
    );
    let opt = |v: Option<f64>| v.map_or_else(String::new, |x| x.to_string());
    let mut rows: Vec<(usize, String)> = Vec::new();
    for s in &h.series {
        for p in &s.points {
            let r = &h.runs[p.run];
            let e = &r.entry;
            let fields = [
                e.started_at.clone(),
                scenario.to_owned(),
                s.step.clone(),
                s.sut.clone(),
                s.metric.key().to_owned(),
                p.value.to_string(),
                opt(p.interval.map(|i| i.0)),
                opt(p.interval.map(|i| i.1)),
                rounds(h, s, p.run),
                opt(p.published.as_ref().map(|x| x.value)),
                e.commit.clone().unwrap_or_default(),
                e.dirty.to_string(),
                e.profile.clone().unwrap_or_default(),
                r.fingerprint.clone(),
                e.config.clone(),
                e.status.key().to_owned(),
                e.busy.to_string(),
                e.dir
                    .as_ref()
                    .map(|d| d.display().to_string())
                    .unwrap_or_default(),
            ];
            let line: Vec<String> = fields.iter().map(|f| field(f)).collect();
            rows.push((p.run, line.join(",")));
        }
    }
    rows.sort_by_key(|(run, _)| *run);
    for (_, row) in rows {
        let _ = writeln!(out, "{row}");
    }
    out
}

/// The rounds behind a point (from the run's measurement of the series' step and metric).
fn rounds(h: &History, s: &wsbench_harness::history::series::Series, run: usize) -> String {
    h.runs[run]
        .entry
        .measurements
        .iter()
        .find(|m| m.step == s.step && m.sut == s.sut && m.metric == s.metric)
        .map_or_else(String::new, |m| m.rounds.to_string())
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn field(f: &str) -> String {
    if f.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", f.replace('"', "\"\""))
    } else {
        f.to_owned()
    }
}
