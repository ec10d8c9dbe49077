//! The report's charts, built from a loaded run: throughput, per-client throughput, XML MB/s and
//! latency against the swept variable, the latency distribution, CPU and server RSS over time.

use bench_proto::numbers::{fmt_num, fmt_x};
use plotters::prelude::{RGBColor, ViridisRGB};

use super::plot::{Line, Marker, Note, Plot, Reference, Scale, GREY, INK, PALETTE, WIDTH};
use super::sweep::Curve;
use wsbench_harness::metric::{Metric, Unit};
use wsbench_harness::results::{Axis, Run, Step};
use wsbench_harness::scenario::Published;

/// A rendered chart.
#[derive(Debug, Clone)]
pub(crate) struct Chart {
    /// File name under `charts/`.
    pub file: String,
    /// How to read it (shown under the chart).
    pub caption: String,
    pub svg: String,
}

/// Every chart the run has data for, in reading order.
pub(crate) fn all(run: &Run, axis: Axis, curves: &[Curve]) -> anyhow::Result<Vec<Chart>> {
    plots(run, axis, curves)?
        .into_iter()
        .map(|(file, plot, caption)| {
            Ok(Chart {
                file: file.to_string(),
                caption,
                svg: plot.to_svg()?,
            })
        })
        .collect()
}

/// Every chart the run has data for, before rendering: `(file, plot, caption)`.
pub(crate) fn plots(
    run: &Run,
    axis: Axis,
    curves: &[Curve],
) -> anyhow::Result<Vec<(&'static str, Plot, String)>> {
    // Several servers: their grouped bars first, as the side-by-side table comes before the steps.
    let mut plots: Vec<(&str, Plot, String)> =
        super::side_charts::plots(run, |m| references(run, Axis::Step, m, 1.0));
    let swept = curves.iter().any(|c| !c.points.is_empty());
    if swept {
        plots.push((
            "throughput.svg",
            throughput(run, axis, curves),
            throughput_caption(run, curves),
        ));
        if !run.is_chat() {
            let scale = if axis == Axis::Step {
                ""
            } else {
                ", log scale"
            };
            plots.push((
                "per-client.svg",
                per_client(run, axis, curves),
                format!(
                    "Successful calls per second per client{scale}. With a saturated server it falls as 1/clients.{}",
                    published_words(run, &[Metric::PerClientPerS])
                ),
            ));
        }
        if wants_mb(run) {
            plots.push((
                "xml-mb-per-s.svg",
                xml_mb(run, axis, curves),
                xml_mb_caption(run, curves),
            ));
        }
        plots.push((
            "latency.svg",
            latency(run, axis, curves),
            latency_caption(run),
        ));
    }
    plots.push((
        "latency-distribution.svg",
        distribution(run)?,
        distribution_caption(run),
    ));
    plots.extend(super::stage_charts::plots(run));
    plots.extend(super::soak_charts::plots(run));
    plots.push(("cpu.svg", cpu(run), cpu_caption(run)));
    plots.push((
        "server-rss.svg",
        rss(run),
        "Resident memory of the server process, sampled once a second from the step's start (0 s); each \
         reading is drawn across the second it closes."
            .into(),
    ));
    Ok(plots.into_iter().filter(|(_, p, _)| p.has_data()).collect())
}

fn x_scale(axis: Axis, curves: &[Curve]) -> Scale {
    let xs = curves.iter().flat_map(|c| c.points.iter().map(|p| p.0));
    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    });
    let ratio = if lo > 0.0 { hi / lo } else { 0.0 };
    match axis {
        Axis::Clients if ratio >= 8.0 => Scale::Log(2.0),
        Axis::Rate | Axis::Workers if ratio >= 20.0 => Scale::Log(10.0),
        _ => Scale::Linear,
    }
}

fn base_plot(title: &str, run: &Run, axis: Axis, curves: &[Curve], y_desc: &str) -> Plot {
    let mut p = Plot::new(title, axis.name(), y_desc);
    p.x_scale = x_scale(axis, curves);
    p.x_fmt = fmt_x_axis;
    p.x_ticks_at_data = true;
    if axis == Axis::Step {
        // Nothing numeric varies (one step, or steps of different kinds): one category per step.
        p.x_desc = "step".into();
        let mut cats: Vec<(f64, String)> = curves
            .iter()
            .flat_map(|c| c.steps.iter().zip(&c.points))
            .map(|(&s, q)| (q.0, category(run, s)))
            .collect();
        cats.sort_by(|a, b| a.0.total_cmp(&b.0));
        cats.dedup_by(|a, b| a.0 == b.0);
        let width = (WIDTH as usize - 360) / cats.len().max(1) / 7;
        for c in &mut cats {
            if c.1.chars().count() > width.max(6) {
                c.1 = c.1.chars().take(width.max(6) - 1).collect::<String>() + "…";
            }
        }
        p.categories = cats;
    }
    p
}

/// A step's name on a categorical axis: its label (`clients=16`), with the operation when steps differ in it.
fn category(run: &Run, i: usize) -> String {
    let s = &run.steps[i];
    // Rounds of one step share its label; only different steps with one label need their ids.
    let mut same_label: Vec<&str> = run
        .steps
        .iter()
        .filter(|o| o.meta.label == s.meta.label)
        .map(|o| o.meta.group())
        .collect();
    same_label.sort_unstable();
    same_label.dedup();
    if same_label.len() > 1 || s.meta.label.is_empty() {
        s.meta.group().to_owned()
    } else {
        s.meta.label.clone()
    }
}

fn fmt_x_axis(v: f64) -> String {
    if (v - v.round()).abs() < 1e-6 {
        fmt_num(v.round())
    } else {
        fmt_num(v)
    }
}

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Published figures of the given metrics, one reference per (metric, label), scaled by `factor`.
fn references(run: &Run, axis: Axis, metrics: &[Metric], factor: f64) -> Vec<Reference> {
    const REF_COLOURS: [RGBColor; 4] = [
        INK,
        RGBColor(0x9b, 0x1c, 0x1c),
        RGBColor(0x1b, 0x5e, 0x20),
        RGBColor(0x4a, 0x14, 0x8c),
    ];
    const MARKERS: [Marker; 3] = [Marker::Diamond, Marker::Triangle, Marker::Cross];
    let mut groups: Vec<(Metric, String, Vec<&Published>)> = vec![];
    for p in applicable(run, metrics) {
        match groups
            .iter_mut()
            .find(|g| g.0 == p.metric && g.1 == p.label)
        {
            Some(g) => g.2.push(p),
            None => groups.push((p.metric, p.label.clone(), vec![p])),
        }
    }
    groups
        .into_iter()
        .enumerate()
        .map(|(i, (metric, label, ps))| {
            let (points, levels): (Vec<_>, Vec<_>) = ps
                .iter()
                .copied()
                .partition(|p| axis.published_value(p).is_some());
            let source = ps
                .first()
                .map(|p| short_source(&p.source))
                .unwrap_or_default();
            let what = match metric {
                Metric::MeanLatencyMs => " mean",
                Metric::P99LatencyMs => " p99",
                Metric::ReceivedMbPerS => " received",
                Metric::SentMbPerS => " sent",
                Metric::XmlMbPerS => " sent + received",
                Metric::BusierMbPerS => " busier direction",
                _ => "",
            };
            let label = format!("published{what}: {label} ({source})");
            Reference {
                label,
                points: points
                    .iter()
                    .filter_map(|p| Some((axis.published_value(p)?, p.value * factor)))
                    .collect(),
                levels: levels.iter().map(|p| p.value * factor).collect(),
                color: REF_COLOURS[i % REF_COLOURS.len()],
                marker: MARKERS[i % MARKERS.len()],
            }
        })
        .collect()
}

/// The published figures of `metrics` that apply to this run: measured under the conditions of one of its
/// steps (`Published::matches`, as the tables compare them); none for an emulated run, which is never compared.
fn applicable<'a>(run: &'a Run, metrics: &'a [Metric]) -> impl Iterator<Item = &'a Published> + 'a {
    run.manifest
        .published
        .iter()
        .filter(|p| metrics.contains(&p.metric))
        .filter(|p| !run.manifest.emulated && run.manifest.steps.iter().any(|s| p.matches(s)))
}

/// A caption's sentence on the published figures of `metrics`: drawn for reference, or why none is.
fn published_words(run: &Run, metrics: &[Metric]) -> &'static str {
    let any = run
        .manifest
        .published
        .iter()
        .any(|p| metrics.contains(&p.metric));
    match applicable(run, metrics).next() {
        Some(_) => " Published figures (other hardware, other software) are drawn for reference only, each where its conditions match a step.",
        None if any && run.manifest.emulated => " No published figure is drawn: an emulated run is never compared.",
        None if any => " No published figure is drawn: none was measured under the conditions of these steps (see Measured vs published).",
        None => "",
    }
}

/// What the whiskers of repeated steps show: a 95 % interval from three rounds, the range below.
fn whisker_words(curves: &[Curve]) -> String {
    let rounds: Vec<usize> = curves
        .iter()
        .flat_map(|c| c.spread.iter().map(|e| e.n))
        .filter(|&n| n > 1)
        .collect();
    let (few, many) = (
        rounds.iter().any(|&n| n < 3),
        rounds.iter().any(|&n| n >= 3),
    );
    match (few, many) {
        (false, false) => String::new(),
        (true, false) => format!(
            " Whiskers: min–max of the rounds ({} rounds: no interval).",
            rounds[0]
        ),
        (false, true) => " Whiskers: the 95 % interval of the median of the rounds.".into(),
        (true, true) => " Whiskers: the 95 % interval of the median of the rounds; where there are only 2 rounds, their min–max (no interval).".into(),
    }
}

/// `000_9511573ff911d3e0.txt` → `seed 000`; other sources as they are.
pub(crate) fn short_source(source: &str) -> String {
    match source.split_once('_') {
        Some((n, _)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            format!("seed {n}")
        }
        _ => source.to_string(),
    }
}

fn knee_marks(axis: Axis, curves: &[Curve]) -> Vec<(f64, String)> {
    curves
        .iter()
        .filter_map(|c| {
            let k = c.knee?;
            let who = if curves.len() > 1 {
                format!(" ({})", c.name)
            } else {
                String::new()
            };
            Some((k.x, format!("knee: {} {}{who}", fmt_x(k.x), axis.name())))
        })
        .collect()
}

fn throughput(run: &Run, axis: Axis, curves: &[Curve]) -> Plot {
    let (title, y, metrics): (_, _, &[Metric]) = if run.is_chat() {
        ("Chat throughput", "messages/s", &[Metric::ChatScoreMsgPerS])
    } else {
        (
            "Total throughput",
            "successful calls/s",
            &[Metric::TotalPerS],
        )
    };
    let mut p = base_plot(title, run, axis, curves, y);
    p.bars = true;
    for (i, c) in curves.iter().enumerate() {
        let mut line = Line::new(
            c.name.clone(),
            c.points.iter().map(|q| (q.0, q.1)).collect(),
            colour(i),
        );
        // Repeated steps: the 95 % interval of each median as a whisker.
        line.whiskers = c
            .points
            .iter()
            .zip(&c.spread)
            .filter(|(_, e)| e.n > 1)
            .map(|(q, e)| (q.0, e.lo, e.hi))
            .collect();
        p.lines.push(line);
    }
    let whiskers = whisker_words(curves);
    if !whiskers.is_empty() {
        // The legend says what the whiskers span, as the caption does.
        let few = curves.iter().flat_map(|c| &c.spread).any(|e| e.n == 2);
        p.notes.push(Note {
            text: if few {
                "whiskers: min–max (2 rounds: no interval)".into()
            } else {
                "whiskers: 95 % interval of the median".into()
            },
            color: INK,
            dashed: false,
        });
    }
    p.references = references(run, axis, metrics, 1.0);
    p.vmarks = knee_marks(axis, curves);
    p.vmark_color = RGBColor(0xb0, 0x30, 0x30);
    p
}

fn throughput_caption(run: &Run, curves: &[Curve]) -> String {
    let what = if run.is_chat() {
        "VolanoMark-style score: messages delivered per second"
    } else {
        "Successful calls per second over the measured interval (failed calls are never counted)"
    };
    let knee = if curves.iter().any(|c| c.knee.is_some()) {
        "; the dashed red line marks the knee, where throughput stops rising while latency keeps rising"
    } else {
        ""
    };
    let metrics: &[Metric] = if run.is_chat() {
        &[Metric::ChatScoreMsgPerS]
    } else {
        &[Metric::TotalPerS]
    };
    format!(
        "{what}{knee}.{}{}",
        published_words(run, metrics),
        whisker_words(curves)
    )
}

fn per_client(run: &Run, axis: Axis, curves: &[Curve]) -> Plot {
    // Bars (one category per step) are read by their length: a linear axis from zero. A sweep of 1 to 1,024
    // clients spans three decades of per-client rate, which a linear axis crushes: points on a log axis.
    let log = axis != Axis::Step;
    let mut p = base_plot(
        "Throughput per client",
        run,
        axis,
        curves,
        if log {
            "calls/s per client (log scale)"
        } else {
            "calls/s per client"
        },
    );
    if log {
        p.y_scale = Scale::Log(10.0);
    }
    p.bars = true;
    for (i, c) in curves.iter().enumerate() {
        let pts = c
            .rounds
            .iter()
            .zip(&c.points)
            .filter_map(|(r, q)| Some((q.0, run.estimate(r, Step::per_client)?.median)))
            .filter(|q| q.1 > 0.0);
        p.lines
            .push(Line::new(c.name.clone(), pts.collect(), colour(i)));
    }
    p.references = references(run, axis, &[Metric::PerClientPerS], 1.0);
    p
}

/// The published MB/s figures, by the direction they count.
const MB_METRICS: [Metric; 4] = [
    Metric::XmlMbPerS,
    Metric::BusierMbPerS,
    Metric::ReceivedMbPerS,
    Metric::SentMbPerS,
];

/// Whether MB/s matters for this run: published MB/s figures or sized messages.
pub(crate) fn wants_mb(run: &Run) -> bool {
    let published = run
        .manifest
        .published
        .iter()
        .any(|p| p.metric.unit() == Unit::MbPerS);
    let sized = run.steps.iter().any(|s| {
        s.doc
            .as_ref()
            .is_ok_and(|d| d.params.message_size.is_some())
    });
    published || sized
}

/// MB/s against the swept variable, each published figure beside the measured line of its own direction:
/// sent and received apart (one series) or the busier direction (several), plus sent + received when a
/// published figure counts both.
fn xml_mb(run: &Run, axis: Axis, curves: &[Curve]) -> Plot {
    let mut p = base_plot(
        "XML throughput",
        run,
        axis,
        curves,
        "MB/s of XML body, by direction",
    );
    p.bars = true;
    let published = |m: Metric| run.manifest.published.iter().any(|p| p.metric == m);
    let mut kinds: Vec<(&str, Metric)> = if curves.len() == 1 {
        vec![
            ("sent (requests)", Metric::SentMbPerS),
            ("received (responses)", Metric::ReceivedMbPerS),
        ]
    } else {
        vec![("busier direction", Metric::BusierMbPerS)]
    };
    if curves.len() == 1 && published(Metric::BusierMbPerS) {
        kinds.push(("busier direction", Metric::BusierMbPerS));
    }
    if published(Metric::XmlMbPerS) {
        kinds.push(("sent + received", Metric::XmlMbPerS));
    }
    let mut n = 0;
    for c in curves {
        for &(kind, metric) in &kinds {
            let pts = c.rounds.iter().zip(&c.points).filter_map(|(r, q)| {
                let e = run.estimate(r, |s| s.value(metric))?;
                Some((q.0, e.median))
            });
            let name = if curves.len() == 1 {
                (*kind).to_owned()
            } else {
                format!("{} ({kind})", c.name)
            };
            p.lines.push(Line::new(name, pts.collect(), colour(n)));
            n += 1;
        }
    }
    p.references = references(run, axis, &MB_METRICS, 1.0);
    p
}

fn xml_mb_caption(run: &Run, curves: &[Curve]) -> String {
    let how = if curves.len() == 1 {
        "requests sent and responses received drawn apart"
    } else {
        "per operation the busier direction (the larger of sent and received)"
    };
    let published = published_words(run, &MB_METRICS);
    format!(
        "Megabytes (10⁶ bytes) of XML body per second, {how}.{published}{}",
        if published.contains("drawn for reference") {
            " Each is drawn beside the direction it counts."
        } else {
            ""
        }
    )
}

fn latency(run: &Run, axis: Axis, curves: &[Curve]) -> Plot {
    let mut p = base_plot("Latency", run, axis, curves, "latency (ms, log scale)");
    p.y_scale = Scale::Log(10.0);
    p.y_fmt = fmt_num;
    type Pick = fn(&bench_proto::results::LatencySummary) -> f64;
    let ms = |v: f64| v / 1000.0;
    let series = |c: &Curve, pick: Pick, uncorrected: bool| -> Vec<(f64, f64)> {
        c.rounds
            .iter()
            .zip(&c.points)
            .filter_map(|(r, q)| {
                let e = run.estimate(r, |st| {
                    let l = if uncorrected {
                        st.uncorrected()?
                    } else {
                        st.latency()?
                    };
                    Some(ms(pick(l)))
                })?;
                Some((q.0, e.median))
            })
            .filter(|q| q.1 > 0.0)
            .collect()
    };
    if curves.len() == 1 {
        let c = &curves[0];
        // Every series its own colour and mark: the mean (a ring) sits near p50 (a dot) and both show;
        // published levels are the dashed lines.
        let picks: [(&str, Pick, Marker); 5] = [
            ("p50", |l| l.p50 as f64, Marker::Dot),
            ("p90", |l| l.p90 as f64, Marker::Square),
            ("p99", |l| l.p99 as f64, Marker::Triangle),
            ("p99.9", |l| l.p99_9 as f64, Marker::Diamond),
            ("max", |l| l.max as f64, Marker::Cross),
        ];
        for (i, (name, pick, mark)) in picks.into_iter().enumerate() {
            p.lines
                .push(Line::new(name, series(c, pick, false), colour(i)).marked(mark));
        }
        p.lines
            .push(Line::new("mean", series(c, |l| l.mean, false), PALETTE[5]).marked(Marker::Ring));
        let unc = series(c, |l| l.p99 as f64, true);
        if !unc.is_empty() {
            p.lines.push(
                Line::new("p99 uncorrected (service time only)", unc, colour(2))
                    .dashed()
                    .no_dots(),
            );
        }
    } else {
        for (i, c) in curves.iter().enumerate() {
            p.lines.push(Line::new(
                format!("{} p50", c.name),
                series(c, |l| l.p50 as f64, false),
                colour(i),
            ));
            p.lines.push(
                Line::new(
                    format!("{} p99", c.name),
                    series(c, |l| l.p99 as f64, false),
                    colour(i),
                )
                .dashed()
                .marked(Marker::Triangle),
            );
        }
    }
    p.references = references(run, axis, &LATENCY_METRICS, 1.0);
    p
}

/// The published latency figures drawn on the latency chart.
const LATENCY_METRICS: [Metric; 2] = [Metric::MeanLatencyMs, Metric::P99LatencyMs];

fn latency_caption(run: &Run) -> String {
    let how = latency_how(run);
    format!("{how}{}", published_words(run, &LATENCY_METRICS))
}

fn latency_how(run: &Run) -> String {
    let open = run.steps.iter().any(|s| s.uncorrected().is_some());
    if open {
        "Open loop: percentiles are measured from each request's intended send time, so queueing behind a \
         slow response counts (coordinated omission corrected); the dashed p99 leaves that queueing out."
            .into()
    } else {
        "Closed loop: each client waits for its response before sending the next request. Log scale.".into()
    }
}

/// HdrHistogram percentile plot: x is 1/(1-p) on a log scale, labelled as the percentile.
fn distribution(run: &Run) -> anyhow::Result<Plot> {
    let mut p = Plot::new(
        "Latency distribution",
        "percentile (%, log scale of 1 / (1 − p))",
        "latency (ms, log scale)",
    );
    p.x_scale = Scale::Log(10.0);
    p.y_scale = Scale::Log(10.0);
    p.x_fmt = fmt_percentile;
    p.x_decades_only = true;
    let with_hist: Vec<usize> = (0..run.steps.len())
        .filter(|&i| {
            run.steps[i]
                .doc
                .as_ref()
                .is_ok_and(|d| !d.histograms.corrected.is_empty())
        })
        .collect();
    let shown = thin(&with_hist, 10);
    let mut any_uncorrected = false;
    for (n, &i) in shown.iter().enumerate() {
        let step = &run.steps[i];
        let (corrected, uncorrected) = step.histograms()?;
        let color = if shown.len() == 1 {
            PALETTE[0]
        } else {
            let c =
                ViridisRGB::get_color_normalized(n as f64, 0.0, (shown.len() - 1) as f64 / 0.85);
            RGBColor(c.0, c.1, c.2)
        };
        if let Some(h) = corrected {
            p.lines
                .push(Line::new(step.meta.label.clone(), percentile_curve(&h), color).no_dots());
        }
        if let Some(h) = uncorrected {
            any_uncorrected = true;
            p.lines.push(
                Line::new(String::new(), percentile_curve(&h), color)
                    .dashed()
                    .no_dots()
                    .unlisted(),
            );
        }
    }
    if any_uncorrected {
        p.notes.push(Note {
            text: "dashed: uncorrected (service time only)".into(),
            color: GREY,
            dashed: true,
        });
    }
    if shown.len() < with_hist.len() {
        p.notes.push(Note {
            text: format!("{} of {} steps shown", shown.len(), with_hist.len()),
            color: RGBColor(0xff, 0xff, 0xff),
            dashed: false,
        });
    }
    Ok(p)
}

fn distribution_caption(run: &Run) -> String {
    let mut s = String::from(
        "Each line is one step's full latency distribution from its HdrHistogram: read across to find the \
         latency that the given fraction of calls stayed under (90 %, 99 %, 99.9 % …).",
    );
    if run.steps.iter().any(|s| s.uncorrected().is_some()) {
        s.push_str(" Solid lines are corrected for coordinated omission, dashed lines are not.");
    }
    s
}

/// At most `max` items, evenly spread, always keeping the first and the last.
fn thin(items: &[usize], max: usize) -> Vec<usize> {
    if items.len() <= max || max < 2 {
        return items.to_vec();
    }
    let mut out: Vec<usize> = (0..max)
        .map(|k| items[(k * (items.len() - 1) + (max - 1) / 2) / (max - 1)])
        .collect();
    out.dedup();
    out
}

fn percentile_curve(h: &hdrhistogram::Histogram<u64>) -> Vec<(f64, f64)> {
    h.iter_quantiles(4)
        .filter_map(|v| {
            let q = v.quantile_iterated_to();
            (q < 1.0).then(|| {
                (
                    1.0 / (1.0 - q),
                    h.highest_equivalent(v.value_iterated_to()) as f64 / 1000.0,
                )
            })
        })
        .filter(|&(_, y)| y > 0.0)
        .collect()
}

fn fmt_percentile(x: f64) -> String {
    if x < 1.05 {
        return "0 %".into();
    }
    let pct = (1.0 - 1.0 / x) * 100.0;
    let decimals = (x.log10().round() as i32 - 2).max(0) as usize;
    format!("{pct:.decimals$} %")
}

/// `(start offset s, step index)` for a timeline of every step's samples laid end to end.
fn timeline(run: &Run) -> Vec<(f64, usize)> {
    let mut t = 0.0;
    let mut out = vec![];
    for (i, s) in run.steps.iter().enumerate() {
        let samples = s.samples();
        if samples.is_empty() {
            continue;
        }
        out.push((t, i));
        let last = samples.iter().map(|x| x.t_s).fold(0.0, f64::max);
        t += last + 1.0;
    }
    out
}

/// Each sample with the interval it closes, `(from s, to s, sample)`: the first from the step's 0 s.
fn intervals(
    samples: &[bench_proto::results::SystemSample],
) -> Vec<(f64, f64, &bench_proto::results::SystemSample)> {
    let mut from = 0.0;
    samples
        .iter()
        .map(|s| {
            let out = (from, s.t_s, s);
            from = s.t_s;
            out
        })
        .collect()
}

fn step_marks(run: &Run, axis: Axis, tl: &[(f64, usize)]) -> Vec<(f64, String)> {
    tl.iter()
        .map(|&(t0, i)| {
            let x = axis
                .value(i, &run.steps[i].meta)
                .map(fmt_x)
                .unwrap_or_else(|| run.steps[i].meta.id.clone());
            (t0, x)
        })
        .collect()
}

fn timeline_x_desc(axis: Axis) -> String {
    format!(
        "time (s), steps end to end; dashed lines start each step, labelled by {}",
        axis.name()
    )
}

fn cpu(run: &Run) -> Plot {
    let axis = run.axis();
    let tl = timeline(run);
    let mut p = Plot::new(
        "CPU (whole machine)",
        timeline_x_desc(axis),
        "% of all CPUs",
    );
    p.y_range = Some((0.0, 100.0));
    p.vmark_color = GREY;
    let mut user = vec![];
    let mut sys = vec![];
    let mut idle = vec![];
    let mut steal = vec![];
    let mut stolen = false;
    for &(t0, i) in &tl {
        for (from, to, s) in intervals(run.steps[i].samples()) {
            // A sample is the mean over the interval it closes: drawn flat across it, from the step's 0 s.
            for t in [t0 + from, t0 + to] {
                user.push((t, s.user_pct));
                sys.push((t, s.user_pct + s.sys_pct));
                idle.push((t, (s.user_pct + s.sys_pct + s.idle_pct).min(100.0)));
                if let Some(st) = s.steal_pct {
                    stolen |= st > 0.0;
                    steal.push((t, (s.user_pct + s.sys_pct + s.idle_pct + st).min(100.0)));
                }
            }
        }
    }
    // Steal on top: the time the hypervisor gave other guests (samples since issue 44 have it).
    if stolen {
        p.areas
            .push(Line::new("steal", steal, RGBColor(0xe3, 0x8b, 0x7f)));
    }
    p.areas
        .push(Line::new("idle", idle, RGBColor(0xdd, 0xdd, 0xdd)));
    p.areas.push(Line::new("sys", sys, PALETTE[1]));
    p.areas.push(Line::new("user", user, PALETTE[0]));
    p.vmarks = step_marks(run, axis, &tl);
    p
}

fn cpu_caption(run: &Run) -> String {
    if timeline(run).is_empty() {
        return String::new();
    }
    let agent = run
        .steps
        .iter()
        .filter_map(|s| s.record.as_ref()?.sampling.as_ref()?.agent.clone())
        .next();
    let whose = match agent {
        Some(a) => {
            format!("the server's host, read by the agent at {a} (the client ran elsewhere)")
        }
        None => "this machine: client and server share it, so this is both their load".to_owned(),
    };
    format!(
        "Stacked: user (bottom), sys, idle, and on top any steal (time the hypervisor gave other guests) — \
         whole-machine CPU from /proc/stat, once a second from each step's start (0 s), each second's mean \
         drawn across it. The machine is {whose}."
    )
}

fn rss(run: &Run) -> Plot {
    let axis = run.axis();
    let tl = timeline(run);
    let mut p = Plot::new("Server memory", timeline_x_desc(axis), "RSS (MiB)");
    p.vmark_color = GREY;
    let pts: Vec<(f64, f64)> = tl
        .iter()
        .flat_map(|&(t0, i)| {
            intervals(run.steps[i].samples())
                .into_iter()
                .filter_map(move |(from, to, s)| {
                    let mib = s.server_rss_kb? as f64 / 1024.0;
                    Some([(t0 + from, mib), (t0 + to, mib)])
                })
                .flatten()
        })
        .collect();
    p.lines
        .push(Line::new("server RSS", pts, PALETTE[4]).no_dots());
    p.vmarks = step_marks(run, axis, &tl);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_labels() {
        assert_eq!(fmt_percentile(1.0), "0 %");
        assert_eq!(fmt_percentile(10.0), "90 %");
        assert_eq!(fmt_percentile(100.0), "99 %");
        assert_eq!(fmt_percentile(1000.0), "99.9 %");
        assert_eq!(fmt_percentile(100_000.0), "99.999 %");
    }

    #[test]
    fn thinning_keeps_ends() {
        let v: Vec<usize> = (0..25).collect();
        let t = thin(&v, 10);
        assert_eq!(t.len(), 10);
        assert_eq!(t[0], 0);
        assert_eq!(*t.last().unwrap(), 24);
        assert_eq!(thin(&v[..5], 10), v[..5]);
    }
}
