//! The grouped charts of a run that measured several servers (`--sut a,b,…`): one group per step, one bar per
//! server, for each metric of the side-by-side table — throughput, p50, p99, server CPU per call, RSS.

use super::plot::{Line, Note, Plot, Reference, PALETTE, WIDTH};
use super::side::{self, Cell};
use bench_proto::numbers::fmt_num;
use wsbench_harness::metric::Metric;
use wsbench_harness::results::Run;

/// The grouped charts, `(file, plot, caption)`; none unless the run measured more than one server.
/// `published`: the published figures of the given metrics, as levels (a step is a category here).
pub(crate) fn plots(
    run: &Run,
    published: impl Fn(&[Metric]) -> Vec<Reference>,
) -> Vec<(&'static str, Plot, String)> {
    let table = side::table(run);
    let mut suts: Vec<String> = vec![];
    for c in table.iter().flat_map(|(_, cells)| cells) {
        if !suts.contains(&c.sut) {
            suts.push(c.sut.clone());
        }
    }
    if suts.len() < 2 {
        return vec![];
    }
    let unsampled = |f: fn(&Cell) -> Option<f64>| unsampled(&table, &suts, f);
    let (calls, metrics): (&str, &[Metric]) = if run.is_chat() {
        ("messages/s", &[Metric::ChatScoreMsgPerS])
    } else {
        ("successful calls/s", &[Metric::TotalPerS])
    };
    let median = "each bar the median of the step's rounds";
    let mut out = vec![];
    let mut throughput = grouped(&table, &suts, "Throughput by server", calls, |c| c.per_s);
    throughput.references = published(metrics);
    throughput.notes = rising(&table, &suts);
    out.push((
        "servers-throughput.svg",
        throughput,
        format!(
            "Throughput of each server at each step ({median}); only answers that passed bench-client's checks \
             count. Dashed levels: published figures measured under a step's conditions.{}",
            unsampled(|c| c.per_s)
        ),
    ));
    out.push((
        "servers-p50.svg",
        grouped(&table, &suts, "Median latency by server", "p50 (ms)", |c| c.p50_ms),
        format!("Median latency (p50, corrected for coordinated omission in open loop) of each server at each step ({median}).{}", unsampled(|c| c.p50_ms)),
    ));
    let mut p99 = grouped(&table, &suts, "p99 latency by server", "p99 (ms)", |c| {
        c.p99_ms
    });
    p99.references = published(&[Metric::P99LatencyMs]);
    out.push((
        "servers-p99.svg",
        p99,
        format!(
            "99th-percentile latency of each server at each step ({median}).{}",
            unsampled(|c| c.p99_ms)
        ),
    ));
    out.push((
        "servers-cpu-per-call.svg",
        grouped(&table, &suts, "Server CPU per call", "CPU µs per successful call", |c| c.cpu_us_per_call),
        format!(
            "The server process's user + system CPU time over the measured interval divided by its successful \
             calls ({median}); lower is cheaper.{}",
            unsampled(|c| c.cpu_us_per_call)
        ),
    ));
    out.push((
        "servers-rss.svg",
        grouped(
            &table,
            &suts,
            "Server memory by server",
            "RSS (MiB), most seen",
            |c| c.rss_mib,
        ),
        format!(
            "The server process's resident memory, the most seen during the step ({median}).{}",
            unsampled(|c| c.rss_mib)
        ),
    ));
    out
}

/// One chart: a category per step, a bar per server (in the order the servers were named).
fn grouped(
    table: &[(String, Vec<Cell>)],
    suts: &[String],
    title: &str,
    y_desc: &str,
    value: fn(&Cell) -> Option<f64>,
) -> Plot {
    let mut p = Plot::new(title, "step", y_desc);
    p.bars = true;
    // Long step ids are cut to what fits under their group.
    let width = ((WIDTH as usize - 360) / table.len().max(1) / 7).max(6);
    p.categories = table
        .iter()
        .enumerate()
        .map(|(i, (step, _))| {
            let name = if step.chars().count() > width {
                step.chars().take(width - 1).collect::<String>() + "…"
            } else {
                step.clone()
            };
            (i as f64 + 1.0, name)
        })
        .collect();
    for (k, sut) in suts.iter().enumerate() {
        let points = table
            .iter()
            .enumerate()
            .filter_map(|(i, (_, cells))| {
                let c = cells.iter().find(|c| &c.sut == sut)?;
                Some((i as f64 + 1.0, value(c)?))
            })
            .collect();
        let line = Line::new(sut.clone(), points, colour(k));
        // Colours stay the server's across charts; one with nothing here is left out of this legend.
        p.lines.push(if line.points.is_empty() {
            line.unlisted()
        } else {
            line
        });
    }
    p
}

/// A server's colour, the same in every chart.
fn colour(k: usize) -> plotters::style::RGBColor {
    PALETTE[k % PALETTE.len()]
}

/// The caption's sentence naming the servers with no value of `f` at any step (not sampled).
fn unsampled(
    table: &[(String, Vec<Cell>)],
    suts: &[String],
    f: fn(&Cell) -> Option<f64>,
) -> String {
    let missing: Vec<&str> = suts
        .iter()
        .filter(|s| {
            !table
                .iter()
                .flat_map(|(_, cells)| cells)
                .any(|c| &c.sut == *s && f(c).is_some())
        })
        .map(String::as_str)
        .collect();
    if missing.is_empty() {
        String::new()
    } else {
        format!(" No bar for {}: not sampled.", missing.join(", "))
    }
}

/// The table's flag, in the legend too: a bar that is still rising is not yet the server's figure.
fn rising(table: &[(String, Vec<Cell>)], suts: &[String]) -> Vec<Note> {
    let mut notes = vec![];
    for (k, sut) in suts.iter().enumerate() {
        let rise = table
            .iter()
            .flat_map(|(_, cells)| cells)
            .filter(|c| &c.sut == sut)
            .filter_map(|c| c.rising)
            .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
        if let Some(r) = rise {
            notes.push(Note {
                text: format!("{sut}: still rising (+{} %)", fmt_num(r * 100.0)),
                color: colour(k),
                dashed: true,
            });
        }
    }
    notes
}
