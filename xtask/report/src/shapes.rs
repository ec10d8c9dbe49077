//! summary.md's section for shaped loads (issue 43): each operation of a mix, each stage, where the calls'
//! time went (connect, first byte, transfer), and where a rate ramp broke down. An early stop on a failed
//! threshold is in the thresholds section.

use bench_proto::numbers::{level, num, thousands};
use bench_proto::results::{LatencySummary, Part, ResultsDoc};
use bench_proto::shape::Ramped;
use wsbench_harness::results::{Run, Step};

use super::ramp::{self, Ramp};

/// The section's lines (none when no step was shaped).
pub(crate) fn section(run: &Run) -> Vec<String> {
    let shaped: Vec<(&Step, &ResultsDoc)> = run
        .steps
        .iter()
        .filter_map(|s| Some((s, s.doc.as_ref().ok()?)))
        .filter(|(_, d)| {
            !d.shape.operations.is_empty() || !d.shape.stages.is_empty() || has_phases(d)
        })
        .collect();
    if shaped.is_empty() {
        return Vec::new();
    }
    let mut o = vec!["\n## Load shapes\n".to_owned()];
    mix(&mut o, &shaped);
    stages(&mut o, &shaped);
    phases(&mut o, &shaped);
    o
}

fn has_phases(d: &ResultsDoc) -> bool {
    d.shape
        .phases
        .as_ref()
        .is_some_and(|p| p.ttfb.latency_us.count > 0 || p.connect.latency_us.count > 0)
}

fn ms(us: u64) -> String {
    // Under 10 µs `num` would write 9.00e-3: a phase of a few µs (a loopback transfer) reads as 0.009 ms.
    match us {
        0..=9 => format!("{:.3}", us as f64 / 1e3),
        _ => num(us as f64 / 1e3),
    }
}

fn latency(l: &LatencySummary) -> String {
    match l.count {
        0 => "–".to_owned(),
        _ => format!("{} / {} / {}", ms(l.p50), ms(l.p99), ms(l.p99_9)),
    }
}

fn calls(p: &Part) -> u64 {
    p.ok + p.errors_total
}

/// Each operation of a mix: the share asked, the share drawn, errors, latency, bytes.
fn mix(o: &mut Vec<String>, shaped: &[(&Step, &ResultsDoc)]) {
    let mixed: Vec<_> = shaped
        .iter()
        .filter(|(_, d)| !d.shape.operations.is_empty())
        .collect();
    if mixed.is_empty() {
        return;
    }
    o.push("Each operation of a mix (calls drawn from the seeded generator; a call's operation is drawn before it is sent):\n".into());
    o.push("| step | operation | weight | calls (share drawn) | ok | errors | p50 / p99 / p99.9 ms | MB sent / recv |".into());
    o.push("|---|---|---|---|---|---|---|---|".into());
    for (s, d) in mixed {
        let total = d
            .shape
            .operations
            .iter()
            .map(|x| calls(&x.calls))
            .sum::<u64>();
        for x in &d.shape.operations {
            let n = calls(&x.calls);
            let drawn = match total {
                0 => "–".to_owned(),
                t => format!("{} %", num(n as f64 * 100.0 / t as f64)),
            };
            o.push(format!(
                "| {} | {} | {} % | {} ({drawn}) | {} | {} | {} | {} / {} |",
                s.meta.id,
                x.operation,
                level(x.share * 100.0),
                thousands(n),
                thousands(x.calls.ok),
                thousands(x.calls.errors_total),
                latency(&x.calls.latency_us),
                num(x.bytes_sent as f64 / 1e6),
                num(x.bytes_received as f64 / 1e6),
            ));
        }
    }
    o.push(String::new());
}

/// Each stage: where it lies, its level, what completed in it; then a rate ramp's breakdown line.
fn stages(o: &mut Vec<String>, shaped: &[(&Step, &ResultsDoc)]) {
    let staged: Vec<_> = shaped
        .iter()
        .filter(|(_, d)| !d.shape.stages.is_empty())
        .collect();
    if staged.is_empty() {
        return;
    }
    o.push("Each stage (calls counted in the stage they completed in; the level is clients, or calls/s offered):\n".into());
    o.push(
        "| step | stage | from–to s | level | ok calls | ok /s | errors | p50 / p99 / p99.9 ms |"
            .into(),
    );
    o.push("|---|---|---|---|---|---|---|---|".into());
    for (s, d) in &staged {
        for x in &d.shape.stages {
            let secs = x.to_s - x.from_s;
            let per_s = match secs > 0.0 {
                true => num(x.calls.ok as f64 / secs),
                false => "–".to_owned(),
            };
            let unit = match x.ramped {
                Ramped::Clients => "clients",
                Ramped::Rate => "/s",
            };
            let lv = match x.start == x.end {
                true => level(x.end),
                false => format!("{} → {}", level(x.start), level(x.end)),
            };
            o.push(format!(
                "| {} | {} | {}–{} | {lv} {unit} | {} | {per_s} | {} | {} |",
                s.meta.id,
                x.stage,
                level(x.from_s),
                level(x.to_s),
                thousands(x.calls.ok),
                thousands(x.calls.errors_total),
                latency(&x.calls.latency_us),
            ));
        }
    }
    o.push(String::new());
    for (s, d) in &staged {
        if let Some(line) = breakdown_line(s, d) {
            o.push(line);
        }
    }
}

/// A rate ramp in a sentence: how far it kept up, or where the calls completed fell short of it.
pub(crate) fn breakdown_line(s: &Step, d: &ResultsDoc) -> Option<String> {
    let timeline = s.record.as_ref()?.timeline.as_ref()?;
    let words = match ramp::judge(&d.shape.stages, timeline)? {
        Ramp::KeptUp {
            highest,
            worst_p99_us,
        } => format!(
            "kept up with the rate offered every second, up to {}/s (the worst second's p99 {} ms).",
            level(highest),
            ms(worst_p99_us)
        ),
        Ramp::BrokeDown {
            at_s,
            offered,
            achieved,
            p99_us,
            last_good,
        } => {
            let before = last_good.map_or(String::new(), |(rate, p99)| {
                format!("kept up until {}/s offered (p99 {} ms); ", num(rate), ms(p99))
            });
            format!(
                "{before}breaks down at {} s: from that second the calls completed fell more than 3 % short of \
                 the rate offered three seconds running ({}/s completed of {}/s offered, p99 {} ms).",
                num(at_s),
                num(achieved),
                num(offered),
                ms(p99_us)
            )
        }
    };
    Some(format!("- {}, rate ramp: {words}", s.meta.id))
}

/// Where each step's time went: connect, time to first byte, transfer.
fn phases(o: &mut Vec<String>, shaped: &[(&Step, &ResultsDoc)]) {
    let with: Vec<_> = shaped.iter().filter(|(_, d)| has_phases(d)).collect();
    if with.is_empty() {
        return;
    }
    o.push("\nWhere the calls' time went (connect: each connection made; first byte: from the request's send to the response's first byte; transfer: on to its last, 0 when one read brought it all):\n".into());
    o.push("| step | phase | p50 / p99 / p99.9 ms | max ms | count |".into());
    o.push("|---|---|---|---|---|".into());
    for (s, d) in with {
        let Some(p) = &d.shape.phases else { continue };
        for (name, ph) in [
            ("connect", &p.connect),
            ("first byte", &p.ttfb),
            ("transfer", &p.transfer),
        ] {
            let l = &ph.latency_us;
            o.push(format!(
                "| {} | {name} | {} | {} | {} |",
                s.meta.id,
                latency(l),
                if l.count > 0 { ms(l.max) } else { "–".into() },
                thousands(l.count)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use bench_proto::results::{new_histogram, ErrorCounts, OperationResults, Part, Phase, Phases};
    use wsbench_harness::results::Run;

    /// A phase of a few microseconds reads in milliseconds, never in exponent notation.
    #[test]
    fn microsecond_phases_read_as_milliseconds() {
        assert_eq!(super::ms(9), "0.009");
        assert_eq!(super::ms(0), "0.000");
        assert_eq!(super::ms(4_321), "4.32");
    }

    /// The staged fixture with a mix of two operations and its phases.
    fn shaped_run(dir: &std::path::Path) -> Run {
        crate::stage_charts::tests::staged_run(dir);
        let op = |name: &str, share: f64, ok: u64, io: u64, us: u64| {
            let mut h = new_histogram();
            h.record_n(us, ok).unwrap();
            OperationResults {
                operation: name.into(),
                share,
                calls: Part::new(
                    ok,
                    ErrorCounts {
                        io,
                        ..ErrorCounts::default()
                    },
                    &h,
                ),
                bytes_sent: ok * 1_000,
                bytes_received: ok * 2_000,
            }
        };
        let mut ttfb = new_histogram();
        ttfb.record_n(800, 10).unwrap();
        let phases = Phases {
            connect: Phase::of(&new_histogram()),
            ttfb: Phase::of(&ttfb),
            transfer: Phase::of(&new_histogram()),
        };
        let step = dir.join("steps/01-clients-16.json");
        let mut doc: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&step).unwrap()).unwrap();
        doc["operations"] = serde_json::to_value([
            op("get", 0.8, 790, 10, 1_000),
            op("add", 0.2, 200, 0, 3_000),
        ])
        .unwrap();
        doc["phases"] = serde_json::to_value(phases).unwrap();
        fs::write(&step, doc.to_string()).unwrap();
        Run::load(dir).unwrap()
    }

    /// Issue 43, item 3: summary.md has a line per operation and per stage, the phases, and a rate ramp's
    /// breakdown line.
    #[test]
    fn the_summary_has_each_operation_each_stage_and_the_ramps_line() {
        let tmp = tempfile::tempdir().unwrap();
        let run = shaped_run(tmp.path());
        let md = crate::summary::render(&run, &[]);
        for row in [
            "| 01-clients-16 | get | 80 % | 800 (80.00 %) | 790 | 10 | 1.00 / 1.00 / 1.00 | 0.790 / 1.58 |",
            "| 01-clients-16 | add | 20 % | 200 (20.00 %) | 200 | 0 | 3.00 / 3.00 / 3.00 | 0.200 / 0.400 |",
            "| 01-clients-16 | 1 | 0–10 | 0 → 100 /s | 0 | 0 | 0 | – |",
            "| 01-clients-16 | 2 | 10–20 | 100 /s | 0 | 0 | 0 | – |",
            "| 01-clients-16 | first byte | 0.800 / 0.800 / 0.800 | 0.800 | 10 |",
            "- 01-clients-16, rate ramp: kept up with the rate offered every second, up to 100/s (the worst \
             second's p99 2.90 ms).",
        ] {
            assert!(md.contains(row), "missing {row}\n{md}");
        }
        let shapes = md.find("## Load shapes").unwrap();
        assert!(md.find("## Steps").unwrap() < shapes, "after the steps");
    }

    #[test]
    fn a_run_without_shapes_has_no_section() {
        let tmp = tempfile::tempdir().unwrap();
        let run = crate::soak::tests::soak_run(tmp.path(), 0);
        assert!(super::section(&run).is_empty());
    }
}
