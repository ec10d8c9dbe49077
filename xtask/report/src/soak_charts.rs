//! A soak's charts: per step, the per-minute server RSS, open fds and p99 that the soak verdict judged,
//! each with the verdict's lines — the RSS slope limit drawn from the first judged minute beside the
//! least-squares fit, the fd ceiling (first judged minute + the growth allowed), the p99 ceiling (the first
//! third's p99 + the drift allowed) — and a mark where the settling minutes end.

use wsbench_harness::results::Run;
use wsbench_harness::soak::{self, Minute, SoakLimits, SoakVerdict};

use super::plot::{Line, Plot, GREY, PALETTE};

/// The limits' colour: the verdict's lines stand apart from the measured series.
const LIMIT: plotters::prelude::RGBColor = plotters::prelude::RGBColor(0xc0, 0x39, 0x2b);

/// The three charts, or none when the run was not judged as a soak.
pub(crate) fn plots(run: &Run) -> Vec<(&'static str, Plot, String)> {
    let Some(limits) = &run.manifest.soak else {
        return Vec::new();
    };
    let verdicts = run.soak_verdicts();
    let mut rss = plot("Soak: server RSS per minute", "RSS (MiB)");
    let mut fds = plot("Soak: server open file descriptors per minute", "open fds");
    let mut p99 = plot("Soak: p99 latency per minute", "p99 (ms)");
    for (k, (step, v)) in run.steps.iter().zip(&verdicts).enumerate() {
        let Some(timeline) = step.record.as_ref().and_then(|r| r.timeline.as_ref()) else {
            continue;
        };
        let minutes = soak::minutes(timeline);
        let judged = &minutes[minutes.len().min(limits.settle_minutes as usize)..];
        let color = PALETTE[k % PALETTE.len()];
        let name = |what: &str| {
            if run.steps.len() > 1 {
                format!("{} {what}", step.meta.id)
            } else {
                what.to_owned()
            }
        };
        let series = |f: &dyn Fn(&Minute) -> Option<f64>| -> Vec<(f64, f64)> {
            minutes
                .iter()
                .filter_map(|m| Some((m.mid_s / 60.0, f(m)?)))
                .collect()
        };
        rss.lines.push(Line::new(
            name("RSS"),
            series(&|m| Some(m.rss_kb? as f64 / 1024.0)),
            color,
        ));
        rss.lines.extend(rss_lines(
            judged,
            v,
            limits.rss_slope_mib_per_h,
            color,
            &name,
        ));
        fds.lines.push(Line::new(
            name("open fds"),
            series(&|m| Some(m.fds? as f64)),
            color,
        ));
        if let Some((first, _)) = v.fds_first_last {
            let ceiling = (first + limits.fd_growth) as f64;
            fds.lines.push(level(
                judged,
                ceiling,
                name(&format!("limit: {first} + {}", limits.fd_growth)),
            ));
        }
        p99.lines.push(Line::new(
            name("p99"),
            series(&|m| {
                (!m.latencies.is_empty()).then(|| m.latencies.value_at_quantile(0.99) as f64 / 1e3)
            }),
            color,
        ));
        if let Some((first, _)) = v.p99_first_last_us {
            let ceiling = first as f64 / 1e3 * (1.0 + limits.p99_drift_pct / 100.0);
            p99.lines.push(level(
                judged,
                ceiling,
                name(&format!(
                    "limit: first third's p99 + {} %",
                    limits.p99_drift_pct
                )),
            ));
        }
    }
    captioned([rss, fds, p99], limits)
}

/// The three charts with the settling mark, named and captioned with the limits they were judged by.
fn captioned(plots: [Plot; 3], limits: &SoakLimits) -> Vec<(&'static str, Plot, String)> {
    let [mut rss, mut fds, mut p99] = plots;
    let settle = f64::from(limits.settle_minutes);
    for p in [&mut rss, &mut fds, &mut p99] {
        if settle > 0.0 {
            p.vmarks.push((settle, "settled".to_owned()));
        }
    }
    let settling = format!(
        "The first {} minute(s) settle and are not judged (the mark).",
        limits.settle_minutes
    );
    vec![
        (
            "soak-rss.svg",
            rss,
            format!("The server's RSS, the most read in each minute; dashed in its colour, the least-squares fit the verdict's slope comes from; red, the limit ({} MiB/h) drawn from the first judged minute: a fit steeper than it fails. {settling}", limits.rss_slope_mib_per_h),
        ),
        (
            "soak-fds.svg",
            fds,
            format!("The server's open file descriptors, the most read in each minute; red, the ceiling: the first judged minute's count + {} (the growth allowed). {settling}", limits.fd_growth),
        ),
        (
            "soak-p99.svg",
            p99,
            format!("Each minute's p99 (exact, from its intervals' histograms); red, the ceiling the last third's p99 is judged against: the first third's + {} %. {settling}", limits.p99_drift_pct),
        ),
    ]
}

fn plot(title: &str, y: &str) -> Plot {
    let mut p = Plot::new(title, "minutes from the step's start", y);
    p.vmark_color = GREY;
    p
}

/// A horizontal limit across the judged minutes.
fn level(judged: &[Minute], y: f64, name: String) -> Line {
    let (a, b) = ends(judged);
    Line::new(name, vec![(a, y), (b, y)], LIMIT)
        .dashed()
        .no_dots()
}

fn ends(judged: &[Minute]) -> (f64, f64) {
    let a = judged.first().map_or(0.0, |m| m.mid_s / 60.0);
    let b = judged.last().map_or(a, |m| m.mid_s / 60.0);
    (a, b)
}

/// The least-squares fit (through the judged minutes' mean, at the verdict's slope) and the slope limit
/// from the first judged minute.
fn rss_lines(
    judged: &[Minute],
    v: &SoakVerdict,
    limit_mib_per_h: f64,
    color: plotters::prelude::RGBColor,
    name: &dyn Fn(&str) -> String,
) -> Vec<Line> {
    let pts: Vec<(f64, f64)> = judged
        .iter()
        .filter_map(|m| Some((m.mid_s / 60.0, m.rss_kb? as f64 / 1024.0)))
        .collect();
    let (Some(first), Some(slope)) = (pts.first(), v.rss_slope_mib_per_h) else {
        return Vec::new();
    };
    let (a, b) = ends(judged);
    let n = pts.len() as f64;
    let (mx, my) = pts
        .iter()
        .fold((0.0, 0.0), |(x, y), p| (x + p.0 / n, y + p.1 / n));
    let fit = |x: f64| my + slope * (x - mx) / 60.0;
    let limit = |x: f64| first.1 + limit_mib_per_h * (x - first.0) / 60.0;
    vec![
        Line::new(
            name(&format!("fit {slope:+.2} MiB/h")),
            vec![(a, fit(a)), (b, fit(b))],
            color,
        )
        .dashed()
        .no_dots(),
        Line::new(
            name(&format!("limit {limit_mib_per_h} MiB/h")),
            vec![(first.0, limit(first.0)), (b, limit(b))],
            LIMIT,
        )
        .dashed()
        .no_dots(),
    ]
}

#[cfg(test)]
mod tests {
    use crate::soak::tests::soak_run;

    /// Issue 44, item 4: a soak's report draws its per-minute RSS, fds and p99 with the verdict's lines.
    #[test]
    fn a_soak_gets_its_three_charts_with_the_verdicts_lines() {
        let tmp = tempfile::tempdir().unwrap();
        let run = soak_run(tmp.path(), 2_000);
        let plots = super::plots(&run);
        let files: Vec<&str> = plots.iter().map(|p| p.0).collect();
        assert_eq!(files, ["soak-rss.svg", "soak-fds.svg", "soak-p99.svg"]);
        let names =
            |i: usize| -> Vec<String> { plots[i].1.lines.iter().map(|l| l.name.clone()).collect() };
        let rss = names(0);
        assert_eq!(rss[0], "RSS");
        assert!(rss[1].starts_with("fit +"), "{rss:?}");
        assert_eq!(rss[2], "limit 8 MiB/h");
        // The limit line climbs 8 MiB an hour from the first judged minute; the leak's fit climbs faster.
        let limit = &plots[0].1.lines[2].points;
        let per_h = |p: &[(f64, f64)]| (p[1].1 - p[0].1) / (p[1].0 - p[0].0) * 60.0;
        assert!((per_h(limit) - 8.0).abs() < 1e-9, "{limit:?}");
        assert!(per_h(&plots[0].1.lines[1].points) > 8.0);
        assert!(
            names(1).iter().any(|n| n == "limit: 107 + 16"),
            "{:?}",
            names(1)
        );
        assert!(names(2)
            .iter()
            .any(|n| n.starts_with("limit: first third's p99 + 50")));
        for (file, plot, caption) in &plots {
            assert!(plot.has_data() && !caption.is_empty(), "{file}");
            assert!(plot.to_svg().unwrap().contains("limit"), "{file}");
        }
        assert_eq!(plots[0].1.vmarks, [(1.0, "settled".to_owned())]);
    }

    #[test]
    fn a_run_that_is_no_soak_has_none() {
        let tmp = tempfile::tempdir().unwrap();
        let mut run = soak_run(tmp.path(), 0);
        run.manifest.soak = None;
        assert!(super::plots(&run).is_empty());
    }
}
