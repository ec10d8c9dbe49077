//! A staged step's charts (issue 43): throughput, p99 and errors second by second over the step, with its
//! stages shaded behind, the offered rate of a rate ramp beside the calls it got, and a mark where a run
//! stopped early on a failed threshold.

use bench_proto::numbers::level;
use bench_proto::results::{Interval, ResultsDoc, StageResults, Timeline};
use bench_proto::shape::Ramped;
use wsbench_harness::results::{Run, Step};

use super::plot::{Line, Plot, GREY, PALETTE};
use super::ramp::{self, Ramp};

/// A step with stages and the series to draw them against.
struct Staged<'a> {
    step: &'a Step,
    doc: &'a ResultsDoc,
    timeline: &'a Timeline,
}

/// The three charts, or none when no step of the run had stages (or none recorded its seconds).
pub(crate) fn plots(run: &Run) -> Vec<(&'static str, Plot, String)> {
    let staged: Vec<Staged<'_>> = run
        .steps
        .iter()
        .filter_map(|step| {
            let doc = step.doc.as_ref().ok()?;
            let timeline = step.record.as_ref()?.timeline.as_ref()?;
            (!doc.shape.stages.is_empty()).then_some(Staged {
                step,
                doc,
                timeline,
            })
        })
        .collect();
    let Some(first) = staged.first() else {
        return Vec::new();
    };
    let mut throughput = plot("Staged load: calls per second", "calls/s");
    let mut p99 = plot("Staged load: p99 latency each second", "p99 (ms)");
    let mut errors = plot("Staged load: errors per second", "errors/s");
    for (k, s) in staged.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let name = |what: &str| match staged.len() {
            1 => what.to_owned(),
            _ => format!("{} {what}", s.step.meta.id),
        };
        let series = |f: &dyn Fn(&Interval) -> Option<f64>| -> Vec<(f64, f64)> {
            s.timeline
                .intervals
                .iter()
                .filter(|i| i.dur_s > 0.0)
                .filter_map(|i| Some((i.t_s + i.dur_s / 2.0, f(i)?)))
                .collect()
        };
        throughput.lines.push(Line::new(
            name("ok calls/s"),
            series(&|i| Some(i.ok as f64 / i.dur_s)),
            color,
        ));
        if s.doc.shape.stages[0].ramped == Ramped::Rate {
            throughput.lines.push(
                Line::new(name("offered"), offered(&s.doc.shape.stages), color)
                    .dashed()
                    .no_dots(),
            );
        }
        p99.lines.push(Line::new(
            name("p99"),
            series(&|i| (i.ok > 0).then(|| i.p99_us as f64 / 1e3)),
            color,
        ));
        errors.lines.push(Line::new(
            name("errors/s"),
            series(&|i| Some(i.errors.total() as f64 / i.dur_s)),
            color,
        ));
        if let Some(Ramp::BrokeDown { at_s, .. }) = ramp::judge(&s.doc.shape.stages, s.timeline) {
            for p in [&mut throughput, &mut p99, &mut errors] {
                p.vmarks.push((at_s, name("breaks down")));
            }
        }
        if let Some(a) = &s.doc.shape.aborted {
            for p in [&mut throughput, &mut p99, &mut errors] {
                p.vmarks.push((a.at_s, name("aborted")));
            }
        }
    }
    let bands = bands(&first.doc.shape.stages);
    for p in [&mut throughput, &mut p99, &mut errors] {
        p.bands = bands.clone();
    }
    let shaded = shaded_words(&staged);
    vec![
        (
            "stages-throughput.svg",
            throughput,
            format!(
                "Successful calls each second, drawn at the middle of the second they completed in; dashed, \
                 the rate offered (a rate ramp); the mark: where the calls completed first fell more than 3 % \
                 short of it three seconds running. {shaded}"
            ),
        ),
        (
            "stages-p99.svg",
            p99,
            format!(
                "The 99th percentile of each second's successful calls (corrected for coordinated omission); \
                 seconds without one are left out. {shaded}"
            ),
        ),
        (
            "stages-errors.svg",
            errors,
            format!("Failed calls each second, all kinds together. {shaded}"),
        ),
    ]
}

fn plot(title: &str, y: &str) -> Plot {
    let mut p = Plot::new(title, "seconds from the step's start", y);
    p.vmark_color = GREY;
    p
}

/// The offered rate: each stage's line from its start level to its end level.
fn offered(stages: &[StageResults]) -> Vec<(f64, f64)> {
    stages
        .iter()
        .flat_map(|s| [(s.from_s, s.start), (s.to_s, s.end)])
        .collect()
}

/// One shaded span per stage, labelled with its number and its levels.
fn bands(stages: &[StageResults]) -> Vec<(f64, f64, String)> {
    stages
        .iter()
        .map(|s| {
            let unit = match s.ramped {
                Ramped::Clients => "clients",
                Ramped::Rate => "/s",
            };
            let level = match s.start == s.end {
                true => level(s.end),
                false => format!("{}→{}", level(s.start), level(s.end)),
            };
            (s.from_s, s.to_s, format!("{} {level} {unit}", s.stage))
        })
        .collect()
}

/// Which stages are shaded, in words: the first staged step's, and whether the others' lie elsewhere.
fn shaded_words(staged: &[Staged<'_>]) -> String {
    let places = |s: &Staged<'_>| -> Vec<(f64, f64)> {
        s.doc
            .shape
            .stages
            .iter()
            .map(|x| (x.from_s, x.to_s))
            .collect()
    };
    let first = &staged[0];
    let n = first.doc.shape.stages.len();
    let whose = match staged.len() {
        1 => "the step's".to_owned(),
        _ if staged.iter().all(|s| places(s) == places(first)) => "the steps'".to_owned(),
        _ => format!(
            "{}'s (the other steps' stages lie elsewhere)",
            first.step.meta.id
        ),
    };
    format!("Shaded: {whose} {n} stage(s), numbered, with the level each ramps from and to.")
}

#[cfg(test)]
pub(crate) mod tests {
    use std::fs;

    use bench_proto::results::{
        encode_histogram, new_histogram, ErrorCounts, Interval, Part, StageResults, Timeline,
    };
    use bench_proto::shape::Ramped;
    use wsbench_harness::results::Run;

    /// A run whose one step ramped its rate 0 → 100/s over 10 s and held it 10 s, its last 5 s failing.
    pub(crate) fn staged_run(dir: &std::path::Path) -> Run {
        let single = wsbench_harness::paths::project_root().join("xtask/tests/fixtures/summary");
        crate::soak::tests::copy_tree(&single, dir);
        let intervals = (0..20u64)
            .map(|k| {
                let rate = if k < 10 { k * 10 + 5 } else { 100 };
                let mut h = new_histogram();
                h.record_n(1_000 + k * 100, rate).unwrap();
                Interval {
                    t_s: k as f64,
                    dur_s: 1.0,
                    ok: rate,
                    errors: ErrorCounts {
                        io: if k >= 15 { 7 } else { 0 },
                        ..ErrorCounts::default()
                    },
                    p99_us: 1_000 + k * 100,
                    corrected: encode_histogram(&h),
                    ..Interval::default()
                }
            })
            .collect();
        let timeline = Timeline {
            interval_s: 1.0,
            intervals,
            ..Timeline::default()
        };
        let stage = |n: u32, from_s: f64, to_s: f64, start: f64| StageResults {
            stage: n,
            ramped: Ramped::Rate,
            from_s,
            to_s,
            start,
            end: 100.0,
            calls: Part::default(),
        };
        let step = dir.join("steps/01-clients-16.json");
        let mut doc: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&step).unwrap()).unwrap();
        doc["timeline"] = serde_json::to_value(&timeline).unwrap();
        doc["stages"] =
            serde_json::to_value([stage(1, 0.0, 10.0, 0.0), stage(2, 10.0, 20.0, 100.0)]).unwrap();
        fs::write(&step, doc.to_string()).unwrap();
        Run::load(dir).unwrap()
    }

    /// Issue 43, item 2: a staged step's report draws throughput, p99 and errors each second, its stages
    /// shaded and the offered rate beside the calls.
    #[test]
    fn a_staged_step_gets_its_three_charts_with_the_stages_shaded() {
        let tmp = tempfile::tempdir().unwrap();
        let run = staged_run(tmp.path());
        let plots = super::plots(&run);
        let files: Vec<&str> = plots.iter().map(|p| p.0).collect();
        assert_eq!(
            files,
            [
                "stages-throughput.svg",
                "stages-p99.svg",
                "stages-errors.svg"
            ]
        );
        for (file, plot, caption) in &plots {
            assert_eq!(
                plot.bands,
                [
                    (0.0, 10.0, "1 0→100 /s".to_owned()),
                    (10.0, 20.0, "2 100 /s".to_owned())
                ],
                "{file}"
            );
            assert!(
                caption.contains("Shaded: the step's 2 stage(s)"),
                "{caption}"
            );
            let svg = plot.to_svg().unwrap();
            assert!(
                svg.contains("1 0→100 /s"),
                "{file}: the band's label is drawn"
            );
        }
        let t = &plots[0].1;
        assert_eq!(t.lines[0].points[0], (0.5, 5.0));
        assert_eq!(t.lines[0].points[19], (19.5, 100.0));
        assert_eq!(t.lines[1].name, "offered");
        assert!(
            t.lines[1].dashed && !t.lines[1].dots,
            "a schedule, not measurements"
        );
        assert_eq!(
            t.lines[1].points,
            [(0.0, 0.0), (10.0, 100.0), (10.0, 100.0), (20.0, 100.0)]
        );
        assert_eq!(plots[1].1.lines[0].points[3], (3.5, 1.3));
        let errors = &plots[2].1.lines[0].points;
        assert_eq!(errors[14], (14.5, 0.0));
        assert_eq!(errors[15], (15.5, 7.0));
    }

    #[test]
    fn a_run_without_stages_has_none() {
        let tmp = tempfile::tempdir().unwrap();
        let run = crate::soak::tests::soak_run(tmp.path(), 0);
        assert!(super::plots(&run).is_empty());
    }
}
