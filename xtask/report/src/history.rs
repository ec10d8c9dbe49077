//! A scenario's history, as `cargo xtask history` shows it: a table per series (each run's value with its
//! interval, commit, machine, status, flags and the published figure), the change points with the commit
//! range each lies in, the exports (Bencher Metric Format, CSV) and the trend chart (`--html`).

mod chart;
mod export;

use std::fmt::Write as _;

use bench_proto::numbers::num;
use wsbench_harness::history::series::{History, Series};
use wsbench_harness::history::Recorded;

pub use chart::html;
pub use export::{bencher, csv};

/// The commit as the table shows it: 10 hex digits, `+` when the tree was dirty.
pub(crate) fn short_commit(r: &Recorded) -> String {
    let c = r.entry.commit.as_deref().unwrap_or("?");
    format!(
        "{}{}",
        &c[..c.len().min(10)],
        if r.entry.dirty { "+" } else { "" }
    )
}

/// `this` for this machine's fingerprint, else its first 8 digits.
fn machine_name(fingerprint: &str, this: &str) -> String {
    if fingerprint == this {
        "this".to_owned()
    } else {
        fingerprint[..fingerprint.len().min(8)].to_owned()
    }
}

/// The heading of a series: step, server, and where it differs from the plain case, machine and config.
pub(crate) fn series_title(s: &Series, this: &str) -> String {
    let mut t = format!("{} · {}", s.step, s.sut);
    if s.fingerprint != this {
        let _ = write!(t, " · machine {}", machine_name(&s.fingerprint, this));
    }
    if !s.config.is_empty() {
        let _ = write!(t, " · {}", s.config);
    }
    t
}

/// The table of every series, then its changes; `this` is this machine's fingerprint.
pub fn table(h: &History, scenario: &str, this: &str) -> String {
    let mut out = format!(
        "{scenario}: {} ({}), {} run{}\n",
        h.metric.name(),
        h.metric.key(),
        h.runs.len(),
        if h.runs.len() == 1 { "" } else { "s" }
    );
    if h.series.is_empty() {
        out += "  no run of it measured this metric (see --metric, --sut, --machine)\n";
    }
    for s in &h.series {
        out += &series_table(h, s, this);
    }
    out
}

fn series_table(h: &History, s: &Series, this: &str) -> String {
    let mut out = format!("\n{}\n", series_title(s, this));
    let _ = writeln!(
        out,
        "  {:<20} {:<11} {:<8} {:<9} {:>12}  {:<24} flags",
        "started (UTC)", "commit", "machine", "status", "value", "interval"
    );
    for (k, p) in s.points.iter().enumerate() {
        let r = &h.runs[p.run];
        let interval = p.interval.map_or_else(String::new, |(lo, hi)| {
            format!("[{} – {}]", num(lo), num(hi))
        });
        let mut flags = Vec::new();
        if r.entry.busy {
            flags.push("busy machine".to_owned());
        }
        if r.entry.emulated {
            flags.push("emulated".to_owned());
        }
        if let Some(o) = p.outlier {
            flags.push(format!(
                "OUTLIER: outside {} – {} (99 % of the runs before)",
                num(o.low),
                num(o.high)
            ));
        }
        if let Some(c) = s.changes.iter().find(|c| c.after == k) {
            flags.push(format!("CHANGE: level {} → {}", num(c.from), num(c.to)));
        }
        let _ = writeln!(
            out,
            "  {:<20} {:<11} {:<8} {:<9} {:>12}  {:<24} {}",
            r.entry.started_at,
            short_commit(r),
            machine_name(&r.fingerprint, this),
            r.entry.status.key(),
            num(p.value),
            interval,
            flags.join("; ")
        );
    }
    if let Some(p) = s.points.iter().rev().find_map(|p| p.published.as_ref()) {
        let range = p.max.map_or_else(String::new, |m| format!("–{}", num(m)));
        let _ = writeln!(out, "  published: {}{range} ({})", num(p.value), p.label);
    }
    for c in &s.changes {
        let (a, b) = (
            &h.runs[s.points[c.before].run],
            &h.runs[s.points[c.after].run],
        );
        let _ = writeln!(
            out,
            "  change point: {} → {} ({:+.1} %) between {} and {}: git log {}..{}",
            num(c.from),
            num(c.to),
            (c.to / c.from - 1.0) * 100.0,
            a.entry.started_at,
            b.entry.started_at,
            short_commit(a).trim_end_matches('+'),
            short_commit(b).trim_end_matches('+'),
        );
    }
    out
}

/// Every scenario in the store with its runs: how many, and the newest few of each with their headline
/// figure (its default metric at its first step).
pub fn overview(scenarios: &[(String, History)], this: &str) -> String {
    let mut out = String::new();
    if scenarios.is_empty() {
        out += "no run recorded yet: `cargo xtask run <scenario>` records each run \
                (`cargo xtask history import results/` records the folders already there)\n";
    }
    for (name, h) in scenarios {
        let n = h.runs.len();
        let _ = writeln!(
            out,
            "{name}: {n} run{}, {}",
            if n == 1 { "" } else { "s" },
            h.metric.key()
        );
        let Some(s) = h.series.first() else { continue };
        for p in s.points.iter().rev().take(5).rev() {
            let r = &h.runs[p.run];
            let _ = writeln!(
                out,
                "  {:<20} {:<11} {:<8} {:<9} {:>12}  {}",
                r.entry.started_at,
                short_commit(r),
                machine_name(&r.fingerprint, this),
                r.entry.status.key(),
                num(p.value),
                series_title(s, this)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use wsbench_harness::history::entry::{Entry, Kind, Machine, Measurement, PublishedFigure};
    use wsbench_harness::history::series::{build, Select};
    use wsbench_harness::metric::Metric;
    use wsbench_harness::rundoc::Status;

    /// 16 runs of one step: 8 at ~60,000/s, then 8 at ~54,000/s from commit c8 on; run 5 on a busy machine,
    /// run 11 with repeats.
    pub(crate) fn history() -> History {
        let runs = (0..16)
            .map(|i| {
                let value = if i < 8 { 60_000.0 } else { 54_000.0 } + (i % 3) as f64 * 200.0;
                Recorded {
                    id: i,
                    fingerprint: "aaaaaaaaaaaaaaaa".into(),
                    entry: Entry {
                        kind: Kind::Run,
                        scenario: "cxf-echo-complex".into(),
                        started_at: format!("2026-12-{:02}T10:00:00Z", i + 1),
                        finished_at: None,
                        commit: Some(format!("c{i}{}", "0".repeat(38))),
                        dirty: i == 15,
                        profile: Some("release".into()),
                        machine: Machine::default(),
                        config: String::new(),
                        sut_config: serde_json::Value::Null,
                        status: Status::Ok,
                        busy: i == 5,
                        emulated: false,
                        dir: None,
                        measurements: vec![Measurement {
                            step: "01-clients-100".into(),
                            sut: "bench-server".into(),
                            metric: Metric::TotalPerS,
                            value,
                            interval: (i == 11).then_some((53_000.0, 55_500.0)),
                            rounds: if i == 11 { 5 } else { 1 },
                            published: Some(PublishedFigure {
                                value: 34_854.0,
                                max: None,
                                label: "CXF 2.2 on a 2008 Xeon".into(),
                            }),
                        }],
                    },
                }
            })
            .collect();
        build(runs, &Select::default())
    }

    #[test]
    fn the_table_names_the_change_and_its_commit_range() {
        let h = history();
        let text = table(&h, "cxf-echo-complex", "aaaaaaaaaaaaaaaa");
        assert!(
            text.starts_with("cxf-echo-complex: total throughput (total_per_s), 16 runs"),
            "{text}"
        );
        assert!(text.contains("busy machine"), "{text}");
        assert!(text.contains("[53,000 – 55,500]"), "{text}");
        assert!(
            text.contains("published: 34,854 (CXF 2.2 on a 2008 Xeon)"),
            "{text}"
        );
        assert!(
            text.contains("change point: 60,200 → 54,200 (-10.0 %)")
                && text.contains("git log c700000000..c800000000"),
            "{text}"
        );
        assert!(
            text.contains("c150000000+"),
            "a dirty tree is marked: {text}"
        );
        let o = overview(&[("cxf-echo-complex".to_owned(), h)], "aaaaaaaaaaaaaaaa");
        assert_eq!(o.lines().count(), 6, "{o}");
    }

    #[test]
    fn exports_follow_the_bencher_metric_format_and_csv() {
        let h = history();
        let docs = bencher(&h, "cxf-echo-complex");
        assert_eq!(docs.len(), 16);
        let (run, doc) = &docs[11];
        assert_eq!(run.id, 11);
        let m = &doc["cxf-echo-complex/01-clients-100/bench-server"]["total-per-s"];
        assert_eq!(m["value"], 54_400.0);
        assert_eq!(
            (m["lower_value"].as_f64(), m["upper_value"].as_f64()),
            (Some(53_000.0), Some(55_500.0))
        );
        assert!(
            docs[0].1["cxf-echo-complex/01-clients-100/bench-server"]["total-per-s"]
                .get("lower_value")
                .is_none()
        );
        let text = csv(&h, "cxf-echo-complex");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 17);
        assert!(
            lines[0].starts_with("started_at,scenario,step,sut,metric,value,lower,upper,rounds,")
        );
        assert!(lines[12].starts_with("2026-12-12T10:00:00Z,cxf-echo-complex,01-clients-100,bench-server,total_per_s,54400,53000,55500,5,34854,"), "{}", lines[12]);
    }

    #[test]
    fn the_chart_draws_runs_published_line_and_change() {
        let h = history();
        let page = html(&h, "cxf-echo-complex", "aaaaaaaaaaaaaaaa").expect("drawn");
        if let Some(out) = std::env::var_os("WSBENCH_HISTORY_PAGE") {
            std::fs::write(out, &page).expect("written");
        }
        assert!(page.contains("<svg") && page.contains("</html>"));
        for text in [
            "published: 34,854",
            "change -10.0 % (c700000000..c800000000)",
            "busy machine or failed run",
            "E-divisive",
        ] {
            assert!(page.contains(text), "{text} missing");
        }
    }
}
