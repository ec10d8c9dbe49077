//! `cargo xtask history <scenario> --html`: the trend chart. One chart per step and server: each run a point
//! with its interval, commits on the x axis in the order the runs were made, the published figure as a
//! line, each machine its own colour and mark (runs from other machines drawn apart), busy or failed runs
//! marked with a red cross, outliers ringed, change points as vertical lines naming the commit range.
//! Self-contained HTML (inline SVG and CSS), as report.html.

use std::fmt::Write as _;

use quick_xml::escape::escape;

use super::{series_title, short_commit, table};
use crate::plot::{Line, Marker, Plot, Reference, GREY, PALETTE};
use bench_proto::numbers::num;
use wsbench_harness::history::series::{History, Series};

const STYLE: &str = "body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 1180px; padding: 16px 24px; color: #222; }
h1 { font-size: 1.5em; } figure { margin: 18px 0 28px; } figure svg { width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; } pre { font-size: 0.8em; overflow-x: auto; }";

const FAILED: plotters::style::RGBColor = plotters::style::RGBColor(0xc6, 0x28, 0x28);

/// The page: a chart per step and server (machines and configurations together, apart by colour), then the
/// table.
pub fn html(h: &History, scenario: &str, this: &str) -> anyhow::Result<String> {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>wsbench history: {s}</title>\n\
         <style>{STYLE}</style>\n</head>\n<body>\n<h1>{s}: {} over time</h1>\n",
        escape(h.metric.name()),
        s = escape(scenario),
    );
    let mut groups: Vec<(&str, &str, Vec<&Series>)> = Vec::new();
    for s in &h.series {
        match groups
            .iter_mut()
            .find(|g| (g.0, g.1) == (s.step.as_str(), s.sut.as_str()))
        {
            Some(g) => g.2.push(s),
            None => groups.push((&s.step, &s.sut, vec![s])),
        }
    }
    for (step, sut, series) in &groups {
        let svg = chart(h, &format!("{step} · {sut}"), series, this).to_svg()?;
        let _ = write!(
            page,
            "<figure>\n{svg}\n<figcaption>{}</figcaption>\n</figure>\n",
            escape(caption(h, series, this))
        );
    }
    let _ = write!(
        page,
        "<h2>Runs</h2>\n<pre>{}</pre>\n</body>\n</html>\n",
        escape(table(h, scenario, this))
    );
    Ok(page)
}

/// One step's chart: a line (of points) per machine and configuration.
fn chart(h: &History, title: &str, series: &[&Series], this: &str) -> Plot {
    let mut plot = Plot::new(
        format!("{title}: {}", h.metric.name()),
        "commit (runs in the order they were made)",
        h.metric.key(),
    );
    // Seven digits of each commit, and no more than about 14 labels: the runs between are still drawn.
    let every = h.runs.len().div_ceil(14).max(1);
    plot.categories = (0..h.runs.len())
        .map(|i| {
            let c = short_commit(&h.runs[i]);
            let label = if i % every == 0 {
                c.chars().take(7).collect()
            } else {
                String::new()
            };
            (i as f64, label)
        })
        .collect();
    plot.vmark_color = GREY;
    let marks = [
        Marker::Dot,
        Marker::Square,
        Marker::Diamond,
        Marker::Triangle,
    ];
    for (k, s) in series.iter().enumerate() {
        let (good, bad): (Vec<_>, Vec<_>) = s.points.iter().partition(|p| !p.suspect);
        let mut line = Line::new(
            series_title(s, this),
            good.iter().map(|p| (p.run as f64, p.value)).collect(),
            PALETTE[k % PALETTE.len()],
        )
        .marked(marks[k % marks.len()]);
        line.whiskers = good
            .iter()
            .filter_map(|p| p.interval.map(|(lo, hi)| (p.run as f64, lo, hi)))
            .collect();
        plot.lines.push(line);
        let outliers: Vec<(f64, f64)> = good
            .iter()
            .filter(|p| p.outlier.is_some())
            .map(|p| (p.run as f64, p.value))
            .collect();
        if !outliers.is_empty() {
            plot.lines.push(
                Line::new("outlier (99 % of the runs before)", outliers, FAILED)
                    .marked(Marker::Ring),
            );
        }
        if !bad.is_empty() {
            let points = bad.iter().map(|p| (p.run as f64, p.value)).collect();
            plot.lines.push(
                Line::new("busy machine or failed run", points, FAILED).marked(Marker::Cross),
            );
        }
        for c in &s.changes {
            let (a, b) = (s.points[c.before].run, s.points[c.after].run);
            let label = format!(
                "change {:+.1} % ({}..{})",
                (c.to / c.from - 1.0) * 100.0,
                short_commit(&h.runs[a]).trim_end_matches('+'),
                short_commit(&h.runs[b]).trim_end_matches('+'),
            );
            plot.vmarks.push(((a + b) as f64 / 2.0, label));
        }
    }
    if let Some(p) = series
        .iter()
        .flat_map(|s| s.points.iter().rev())
        .find_map(|p| p.published.as_ref())
    {
        let mut levels = vec![p.value];
        levels.extend(p.max);
        plot.references.push(Reference {
            label: format!("published: {} ({})", num(p.value), p.label),
            points: Vec::new(),
            levels,
            color: GREY,
            marker: Marker::Dot,
        });
    }
    plot
}

/// What the chart shows, in words: runs, machines, changes.
fn caption(h: &History, series: &[&Series], this: &str) -> String {
    let mut parts = Vec::new();
    for s in series {
        let mut t = format!("{}: {} runs", series_title(s, this), s.points.len());
        for c in &s.changes {
            let (a, b) = (
                &h.runs[s.points[c.before].run],
                &h.runs[s.points[c.after].run],
            );
            let _ = write!(
                t,
                "; change point {} → {} between {} and {}",
                num(c.from),
                num(c.to),
                short_commit(a),
                short_commit(b)
            );
        }
        parts.push(t);
    }
    parts.push("Change points: E-divisive means (Matteson & James 2014); outliers: Student's t over the 10 runs before, 99 %.".to_owned());
    parts.join(". ")
}
