//! Renders reports from the fixture results and checks they are well-formed, self-contained and say the right things.

use std::fs;
use std::path::Path;

use quick_xml::events::Event;

use super::fixtures;
use wsbench_harness::results::Run;

/// A private copy of a fixture run (removed when dropped), so tests never write into the source tree.
pub(crate) struct Scratch(tempfile::TempDir);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

fn copy_of(fixture: &Path, name: &str) -> Scratch {
    let tmp = tempfile::Builder::new()
        .prefix(&format!("wsbench-report-{name}-"))
        .tempdir()
        .unwrap();
    copy_dir(fixture, tmp.path());
    Scratch(tmp)
}

fn copy_dir(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).unwrap();
    for e in fs::read_dir(src).unwrap() {
        let p = e.unwrap().path();
        let to = dst.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &to);
        } else {
            fs::copy(&p, &to).unwrap();
        }
    }
}

/// Parses `text` as XML, checking every end tag matches its start tag; returns the element names seen.
fn parse_xml(text: &str) -> Vec<String> {
    let mut r = quick_xml::Reader::from_str(text);
    r.config_mut().check_end_names = true;
    let mut stack: Vec<String> = vec![];
    let mut seen = vec![];
    loop {
        match r.read_event() {
            Ok(Event::Start(e)) => {
                let n = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                check_attrs(&e);
                seen.push(n.clone());
                stack.push(n);
            }
            Ok(Event::Empty(e)) => {
                check_attrs(&e);
                seen.push(String::from_utf8(e.name().as_ref().to_vec()).unwrap());
            }
            Ok(Event::End(_)) => {
                stack.pop().expect("end tag without start");
            }
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("not well-formed at byte {}: {e}", r.error_position()),
        }
    }
    assert!(stack.is_empty(), "unclosed elements: {stack:?}");
    seen
}

/// Nothing may load from elsewhere: no remote or protocol-relative src/href, no script sources.
fn check_attrs(e: &quick_xml::events::BytesStart<'_>) {
    let name = e.name();
    assert_ne!(name.as_ref(), b"script", "reports need no scripts");
    for a in e.attributes() {
        let a = a.unwrap();
        let key = a.key.as_ref();
        let value = a.unescape_value().unwrap().to_lowercase();
        if matches!(
            key,
            b"src" | b"href" | b"xlink:href" | b"srcset" | b"action" | b"data"
        ) {
            assert!(
                !(value.starts_with("http:")
                    || value.starts_with("https:")
                    || value.starts_with("//")),
                "external reference {}={value}",
                String::from_utf8_lossy(key)
            );
        }
    }
}

fn render(fixture: &Path, name: &str) -> (Scratch, String) {
    let dir = copy_of(fixture, name);
    let path = super::write_report(&dir).unwrap();
    assert_eq!(path, dir.join("report.html"));
    let html = fs::read_to_string(&path).unwrap();
    let elements = parse_xml(&html);
    assert!(elements.iter().any(|e| e == "svg"), "charts are inline");
    assert!(
        !html.contains("url(http") && !html.contains("@import"),
        "CSS loads nothing"
    );
    for e in fs::read_dir(dir.join("charts")).unwrap() {
        let p = e.unwrap().path();
        let svg = fs::read_to_string(&p).unwrap();
        assert_eq!(
            parse_xml(&svg).first().map(String::as_str),
            Some("svg"),
            "{}",
            p.display()
        );
        assert!(html.contains(&format!(
            "charts/{}",
            p.file_name().unwrap().to_string_lossy()
        )));
    }
    (dir, html)
}

fn chart_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn closed_loop_sweep_report() {
    let (dir, html) = render(&fixtures::sweep_a(), "sweep");
    assert_eq!(
        chart_names(&dir),
        [
            "cpu.svg",
            "latency-distribution.svg",
            "latency.svg",
            "per-client.svg",
            "server-rss.svg",
            "throughput.svg"
        ]
    );
    assert!(html.contains("Knee at 8 clients"), "knee stated");
    assert!(html.contains("knee: 8 clients"), "knee marked on the chart");
    assert!(
        html.contains("IBM client → Intel server, 60 s quick test"),
        "published figures labelled"
    );
    assert!(
        html.contains("1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c"),
        "provenance shown"
    );
    assert!(html.contains("Quick run"));
    let throughput = fs::read_to_string(dir.join("charts/throughput.svg")).unwrap();
    // Issue 27, item 3: the published total is for 100 clients, which this sweep (1 … 256) has no step of.
    assert!(
        !throughput.contains("published: 8 h run"),
        "a published total at conditions no step has is not drawn"
    );
    let per_client = fs::read_to_string(dir.join("charts/per-client.svg")).unwrap();
    assert!(
        per_client.contains("published: IBM client"),
        "published per-client figures at the sweep's client counts drawn"
    );
}

#[test]
fn open_loop_report_shows_uncorrected_and_errors() {
    let (dir, html) = render(&fixtures::open_loop(), "open");
    assert!(html.contains("37 failed calls (timeout 37), not counted as throughput"));
    assert!(html.contains("req/s offered"));
    let dist = fs::read_to_string(dir.join("charts/latency-distribution.svg")).unwrap();
    assert!(dist.contains("dashed: uncorrected"));
    assert!(
        dist.contains("99.9 %"),
        "percentile axis labelled as percentiles"
    );
}

#[test]
fn chat_report_uses_the_chat_score() {
    let (dir, html) = render(&fixtures::chat(), "chat");
    assert!(html.contains("messages/s"));
    assert!(!chart_names(&dir).contains(&"per-client.svg".to_string()));
    let t = fs::read_to_string(dir.join("charts/throughput.svg")).unwrap();
    assert!(
        t.contains("MQ scheduler"),
        "published chat scores drawn as reference levels"
    );
}

#[test]
fn report_survives_missing_step_documents_and_states_run_problems() {
    let dir = copy_of(&fixtures::sweep_a(), "missing");
    fs::remove_file(dir.join("steps/05-clients-16.json")).unwrap();
    fs::remove_file(dir.join("steps/09-clients-256.json")).unwrap();
    let mut run: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    run["problems"] =
        serde_json::json!(["bench-server exited (signal: 9) before step 09-clients-256"]);
    run["steps"][8]["status"] = serde_json::json!("not_run");
    fs::write(dir.join("run.json"), run.to_string()).unwrap();
    let html = fs::read_to_string(super::write_report(&dir).unwrap()).unwrap();
    parse_xml(&html);
    assert!(html.contains("clients=16: no results document"));
    assert!(html.contains("clients=256: not run"));
    assert!(html.contains("Run problem: bench-server exited (signal: 9)"));
}

#[test]
fn knee_lines_for_the_summary() {
    let lines = super::knee_lines(&Run::load(&fixtures::sweep_a()).unwrap());
    assert_eq!(lines.len(), 1);
    assert!(lines[0].starts_with("Knee at 8 clients"), "{}", lines[0]);
    let open = super::knee_lines(&Run::load(&fixtures::open_loop()).unwrap());
    assert!(
        open[0].starts_with("Knee at 18000 req/s offered"),
        "{}",
        open[0]
    );
}

#[test]
fn a_sweep_that_stops_before_saturation_says_so() {
    let dir = copy_of(&fixtures::sweep_a(), "rising");
    let mut run: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    run["steps"].as_array_mut().unwrap().truncate(3);
    fs::write(dir.join("run.json"), run.to_string()).unwrap();
    let lines = super::knee_lines(&Run::load(&dir).unwrap());
    assert!(
        lines[0].starts_with("No knee yet: total throughput still rises ")
            && lines[0].contains("from 2 to 4 clients"),
        "{}",
        lines[0]
    );
}

/// Every fixture run: the single-step customer-small run, the closed-loop sweep, the open-loop and chat runs.
fn every_fixture() -> Vec<(&'static str, Run)> {
    let single = wsbench_harness::paths::project_root().join("xtask/tests/fixtures/summary");
    [
        ("single-step", single),
        ("sweep", fixtures::sweep_a()),
        ("open-loop", fixtures::open_loop()),
        ("chat", fixtures::chat()),
    ]
    .into_iter()
    .map(|(n, d)| (n, Run::load(&d).unwrap()))
    .collect()
}

/// The text of every `<text>` element of an SVG, unescaped.
fn svg_texts(svg: &str) -> Vec<String> {
    let mut r = quick_xml::Reader::from_str(svg);
    let (mut out, mut inside) = (vec![], false);
    loop {
        match r.read_event().unwrap() {
            Event::Start(e) if e.name().as_ref() == b"text" => inside = true,
            Event::End(e) if e.name().as_ref() == b"text" => inside = false,
            Event::Text(t) if inside => out.push(t.unescape().unwrap().trim().to_string()),
            Event::Eof => break,
            _ => {}
        }
    }
    out
}

#[test]
fn every_chart_has_distinct_ordered_tick_labels_and_a_labelled_unit() {
    for (name, run) in every_fixture() {
        let (axis, curves) = super::sweep::curves(&run, super::DEFAULT_KNEE_GAIN);
        for (file, plot, _) in super::charts::plots(&run, axis, &curves).unwrap() {
            let svg = plot.to_svg().unwrap();
            let texts = svg_texts(&svg);
            let (xt, yt) = plot.ticks();
            for (which, ticks) in [("x", &xt), ("y", &yt)] {
                let categorical = which == "x" && !plot.categories.is_empty();
                assert!(
                    ticks.0.len() >= 2 || categorical,
                    "{name} {file}: {which} has {:?}",
                    ticks.0
                );
                for w in ticks.0.windows(2) {
                    assert!(
                        w[0].0 < w[1].0,
                        "{name} {file}: {which} ticks out of order {w:?}"
                    );
                    assert_ne!(w[0].1, w[1].1, "{name} {file}: {which} labels repeat {w:?}");
                }
                for (_, label) in &ticks.0 {
                    assert!(
                        texts.contains(label),
                        "{name} {file}: {which} label {label:?} not drawn"
                    );
                }
            }
            let unit = ["(", "/s", "%", "clients", "step", "time"];
            for desc in [&plot.x_desc, &plot.y_desc] {
                assert!(
                    texts.contains(desc),
                    "{name} {file}: axis title {desc:?} not drawn"
                );
                assert!(
                    unit.iter().any(|u| desc.contains(u)),
                    "{name} {file}: {desc:?} names no unit"
                );
            }
            if plot.y_scale != super::plot::Scale::Linear {
                assert!(
                    plot.y_desc.contains("log"),
                    "{name} {file}: log axis not said to be log"
                );
            }
            for r in &plot.references {
                assert!(
                    texts.contains(&r.label),
                    "{name} {file}: reference {:?} not labelled on the chart",
                    r.label
                );
            }
        }
    }
}

#[test]
fn a_single_step_run_is_drawn_by_category_not_on_a_fractional_axis() {
    let (_, run) = every_fixture().remove(0);
    let (axis, curves) = super::sweep::curves(&run, super::DEFAULT_KNEE_GAIN);
    let plots = super::charts::plots(&run, axis, &curves).unwrap();
    let throughput = &plots.iter().find(|p| p.0 == "throughput.svg").unwrap().1;
    assert_eq!(
        throughput.x_ticks(0.0, 2.0).0,
        [(1.0, "clients=16".to_owned())]
    );
    let svg = throughput.to_svg().unwrap();
    assert!(
        !svg_texts(&svg).iter().any(|t| t.starts_with("0.9")),
        "no 0.996 … 1 axis"
    );
    assert!(svg.contains("<rect"), "a bar");
}

#[test]
fn a_latency_axis_below_one_millisecond_is_labelled_there() {
    let t = super::plot::log_ticks(0.05, 20.0, 10.0, false);
    let labels = super::plot::label_ticks(t, bench_proto::numbers::fmt_num).0;
    let names: Vec<&str> = labels.iter().map(|l| l.1.as_str()).collect();
    assert_eq!(
        names,
        ["0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10", "20"]
    );
    let t = super::plot::log_ticks(0.0004, 0.003, 10.0, false);
    let labels = super::plot::label_ticks(t, bench_proto::numbers::fmt_num).0;
    assert!(labels.iter().any(|l| l.1 == "0.0005"), "{labels:?}");
}

#[test]
fn mb_per_s_references_sit_beside_the_direction_they_count() {
    let (_, run) = every_fixture().remove(0);
    let (axis, curves) = super::sweep::curves(&run, super::DEFAULT_KNEE_GAIN);
    let plots = super::charts::plots(&run, axis, &curves).unwrap();
    let mb = &plots.iter().find(|p| p.0 == "xml-mb-per-s.svg").unwrap().1;
    assert!(!mb.references.is_empty());
    for r in &mb.references {
        let dir = ["sent + received", "busier direction", "received", "sent"]
            .into_iter()
            .find(|d| r.label.starts_with(&format!("published {d}")))
            .unwrap_or_else(|| panic!("{:?} names no direction", r.label));
        assert!(
            mb.lines.iter().any(|l| l.name.starts_with(dir)),
            "{:?}: no measured {dir} line among {:?}",
            r.label,
            mb.lines.iter().map(|l| &l.name).collect::<Vec<_>>()
        );
    }
    assert!(!mb.y_desc.contains("sent + received"));
}

/// The single-step fixture as a run of three rounds (throughput 6,000, 6,226 and 6,400/s), with thresholds.
fn repeated() -> Scratch {
    rounds(&[6000.0, 6226.0, 6400.0])
}

/// The single-step fixture as a run of one round per throughput in `rates`, with thresholds.
fn rounds(rates: &[f64]) -> Scratch {
    let single = wsbench_harness::paths::project_root().join("xtask/tests/fixtures/summary");
    let dir = copy_of(&single, "repeated");
    let mut run: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    let step = run["steps"][0].clone();
    let doc: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("steps/01-clients-16.json")).unwrap())
            .unwrap();
    let mut steps = vec![];
    for (r, &rate) in (1..).zip(rates) {
        let mut s = step.clone();
        s["id"] = format!("01-clients-16-r{r}").into();
        s["round"] = r.into();
        s["result"] = format!("steps/01-clients-16-r{r}.json").into();
        let mut d = doc.clone();
        d["throughput"]["total_per_s"] = rate.into();
        fs::write(
            dir.join(format!("steps/01-clients-16-r{r}.json")),
            d.to_string(),
        )
        .unwrap();
        steps.push(s);
    }
    run["steps"] = steps.into();
    run["repeat"] = rates.len().into();
    run["thresholds"] = serde_json::json!(["throughput>6100/s", "p99<1ms"]);
    fs::write(dir.join("run.json"), run.to_string()).unwrap();
    dir
}

#[test]
fn repeated_rounds_are_one_median_with_its_interval_and_thresholds_are_judged_on_it() {
    let dir = repeated();
    let run = Run::load(&dir).unwrap();
    let md = crate::summary::render(&run, &[]);
    // Median 6,226; t interval over 3 values: 6208.7 ± 4.303 × 200.3 / √3.
    assert!(
        md.contains("| 6,226 tx/s [5,710–6,707, n=3, t] | 01-clients-16 |"),
        "{md}"
    );
    assert!(md.contains("Repeated: every step 3 rounds"), "{md}");
    assert!(
        md.contains("| `throughput>6100/s` | 01-clients-16 | 6,226 /s | pass |"),
        "{md}"
    );
    assert!(md.contains("**1 of 2 checks FAILED**"), "{md}");
    let verdicts = run.verdicts();
    assert_eq!(verdicts.iter().filter(|v| !v.pass).count(), 1);
    assert_eq!(verdicts[1].threshold, "p99<1ms");
    let (axis, curves) = super::sweep::curves(&run, super::DEFAULT_KNEE_GAIN);
    assert_eq!(curves[0].points.len(), 1, "three rounds, one point");
    let plots = super::charts::plots(&run, axis, &curves).unwrap();
    let t = &plots.iter().find(|p| p.0 == "throughput.svg").unwrap().1;
    assert_eq!(t.lines[0].points, [(1.0, 6226.0)]);
    assert_eq!(t.lines[0].whiskers.len(), 1, "the interval drawn");
    assert_eq!(
        t.categories,
        [(1.0, "clients=16".to_owned())],
        "rounds share one category"
    );
    let html = fs::read_to_string(super::write_report(&dir).unwrap()).unwrap();
    assert!(
        html.contains("6,226 tx/s [5,710–6,707, n=3, t]"),
        "report shows the same"
    );
}

/// A full-length plan of scenario `name` as a results directory in which every step measured cleanly, each
/// step's figures made distinct so that a mix-up would show.
fn planned_run(name: &str) -> Scratch {
    use bench_proto::results::ResultsDoc;
    use wsbench_harness::rundoc::{RunDoc, Status};
    use wsbench_harness::scenario::Scenario;
    let root = wsbench_harness::paths::project_root();
    let s = Scenario::load(&root, name).unwrap();
    let mut sets = Vec::new();
    let scaled = s
        .file
        .published
        .iter()
        .any(|p| p.instances.is_some_and(|i| i > 1));
    if scaled && s.file.scale_out.is_none() {
        sets.push("servers=1,3".to_owned());
    }
    let plan = s.plan(false, &sets).unwrap();
    let tmp = tempfile::Builder::new()
        .prefix(&format!("wsbench-agree-{name}-"))
        .tempdir()
        .unwrap();
    fs::create_dir_all(tmp.path().join("steps")).unwrap();
    let doc = |file: &str| -> ResultsDoc {
        let path = root.join("xtask/tests/fixtures").join(file);
        serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
    };
    let mut run = RunDoc::planned(&plan, "2026-12-01T00:00:00Z".into());
    for (i, (step, entry)) in plan.steps().zip(&mut run.steps).enumerate() {
        let f = 1.0 + i as f64 / 8.0;
        let mut d = if step.client.operation.is_chat() {
            doc("results/volano-chat/20260304T100000Z/steps/03-rooms-10.json")
        } else {
            doc("summary/steps/01-clients-16.json")
        };
        if let Some(c) = d.chat.as_mut() {
            c.score_msg_per_s *= f;
        } else {
            d.params.operation = step.client.operation.name().to_owned();
            d.params.clients = step.client.clients.map_or(1, u64::from);
            d.throughput.total_per_s *= f;
            d.throughput.per_client_per_s *= f;
            d.throughput.sent_mb_per_s *= f;
            d.throughput.received_mb_per_s *= f;
        }
        let json = serde_json::to_string(&d).unwrap();
        fs::write(tmp.path().join(&entry.result), json).unwrap();
        entry.status = Status::Ok;
        entry.client_exit = Some(0);
    }
    run.settle();
    let json = serde_json::to_string_pretty(&run).unwrap();
    fs::write(tmp.path().join("run.json"), json).unwrap();
    Scratch(tmp)
}

/// (figure label, step id, measured value as shown) of summary.md's measured-vs-published table.
fn summary_comparisons(md: &str) -> std::collections::BTreeSet<(String, String, String)> {
    let section = md
        .split("## Measured here vs published")
        .nth(1)
        .unwrap_or_default()
        .split("\n## ")
        .next()
        .unwrap_or_default();
    section
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| published figure"))
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            let label = cells.first()?.split_once(": ")?.1.to_owned();
            let measured = cells.get(2)?.split(" ⚠").next()?.to_owned();
            Some((label, cells.get(3)?.to_string(), measured))
        })
        .collect()
}

/// The same triples from report.html's rows (their data attributes).
fn report_comparisons(html: &str) -> std::collections::BTreeSet<(String, String, String)> {
    let attr = |row: &str, name: &str| -> String {
        let start = row
            .find(&format!("{name}=\""))
            .map(|i| i + name.len() + 2)
            .unwrap_or(0);
        let end = row[start..].find('"').map_or(start, |e| start + e);
        row[start..end]
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
    };
    html.lines()
        .filter(|l| l.starts_with("<tr data-figure="))
        .filter(|l| !attr(l, "data-step").is_empty())
        .map(|l| {
            (
                attr(l, "data-figure"),
                attr(l, "data-step"),
                attr(l, "data-measured"),
            )
        })
        .collect()
}

/// For every scenario file, a full-length plan measured cleanly: summary.md and report.html compare exactly the
/// same published figures, at the same steps, with the same values.
#[test]
fn summary_and_report_compare_the_same_figures_for_every_scenario() {
    let root = wsbench_harness::paths::project_root();
    for name in wsbench_harness::scenario::names(&root).unwrap() {
        let dir = planned_run(&name);
        let md = super::write_summary(&dir).unwrap();
        let html = fs::read_to_string(super::write_report(&dir).unwrap()).unwrap();
        let (a, b) = (summary_comparisons(&md), report_comparisons(&html));
        assert!(!a.is_empty(), "{name}: summary.md compares nothing\n{md}");
        assert_eq!(
            a, b,
            "{name}: summary.md and report.html compare different figures"
        );
        // One row per figure and step, the rounds of a repeated step counting once.
        let loaded = Run::load(&dir).unwrap();
        let expected: usize = loaded
            .comparisons()
            .iter()
            .map(|c| {
                let mut groups: Vec<&str> = c
                    .rows
                    .iter()
                    .map(|r| loaded.steps[r.0].meta.group())
                    .collect();
                groups.sort_unstable();
                groups.dedup();
                groups.len()
            })
            .sum();
        assert_eq!(a.len(), expected, "{name}");
    }
}

/// Issue 40, item 5: a scale-out run's summary fits the Universal Scalability Law to its 1, 2, 3 instances and
/// projects the instances the paper's 4,590 tps would need, every figure of the model called a projection.
#[test]
fn a_scale_out_summary_plans_with_a_fitted_model() {
    let dir = planned_run("oss-scale-out");
    let md = super::write_summary(&dir).unwrap();
    let at = md
        .find("## Plan with it: the Universal Scalability Law (a model, not a measurement)")
        .unwrap_or_else(|| panic!("no model section:\n{md}"));
    let section = &md[at..];
    assert!(section.contains("measured 1: "), "{section}");
    assert!(section.contains("σ = "), "{section}");
    assert!(section.contains("- Projection: 4,590 /s"), "{section}");
    let plain = planned_run("cxf-echo-complex");
    let md = super::write_summary(&plain).unwrap();
    assert!(
        !md.contains("Universal Scalability Law"),
        "one instance: nothing to fit"
    );
}

/// Issue 27, item 4: the labels of published figures that lie close together — CXF's 348.5 / 334.0 / 304.9
/// per client beside 171.8, OSS/J's 1,800 / 1,980 — can be read, as levels (one step) or as points at their
/// x (a sweep), on a linear or a log axis: as headless Chromium lays the SVG out, no label's box meets another
/// text's, and no other published figure's line or mark strikes through it (unless a white ground drawn
/// after that line and before the label covers it).
#[test]
fn labels_of_close_published_figures_never_overlap() {
    use super::plot::{Line, Marker, Plot, Reference, PALETTE};
    use plotters::style::RGBColor;
    const COLOURS: [RGBColor; 4] = [
        RGBColor(0x22, 0x22, 0x22),
        RGBColor(0x9b, 0x1c, 0x1c),
        RGBColor(0x1b, 0x5e, 0x20),
        RGBColor(0x4a, 0x14, 0x8c),
    ];
    let hex = |c: RGBColor| format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
    let sh = xshell::Shell::new().unwrap();
    type Case<'a> = (&'a str, &'a [(&'a str, f64)], f64);
    let cases: [Case<'_>; 2] = [
        (
            "CXF per client",
            &[
                ("CXF 1B run, 8 h", 348.53),
                ("earlier tuning, 8 h", 334.0),
                ("Java 17 ZGC (untuned), 8 h", 304.86),
                ("Intel server, IBM POWER (ppc64le) client, 8 h", 171.77),
            ],
            95.0,
        ),
        (
            "OSS/J",
            &[
                ("OSS/J single instance (V880)", 1800.0),
                ("OSS/J single instance, JDK 1.4.2 beta", 1980.0),
                ("OSS/J projection, 3 instances", 4590.0),
            ],
            1700.0,
        ),
    ];
    for (title, figures, measured) in cases {
        for (levels, log) in [(true, false), (true, true), (false, false), (false, true)] {
            let mut p = Plot::new(title, "clients", "calls/s");
            if log {
                p.y_scale = super::plot::Scale::Log(10.0);
            }
            if levels {
                p.categories = vec![(1.0, "clients=100".into())];
                p.bars = true;
                p.lines
                    .push(Line::new("measured", vec![(1.0, measured)], PALETTE[0]));
            } else {
                p.lines.push(Line::new(
                    "measured",
                    vec![(50.0, measured * 0.6), (100.0, measured)],
                    PALETTE[0],
                ));
            }
            for (i, (label, value)) in figures.iter().enumerate() {
                p.references.push(Reference {
                    label: format!("published: {label} (seed 002)"),
                    points: if levels {
                        vec![]
                    } else {
                        vec![(100.0, *value)]
                    },
                    levels: if levels { vec![*value] } else { vec![] },
                    color: COLOURS[i],
                    marker: [Marker::Diamond, Marker::Triangle, Marker::Cross][i % 3],
                });
            }
            let svg = p.to_svg().unwrap();
            let shapes = wsbench_harness::screenshot::shapes(&sh, &svg).unwrap();
            let case = format!("{title} (levels: {levels}, log: {log})");
            // Each label is drawn twice: beside its mark and in the legend; the plot's are left of the legend.
            let labels: Vec<(usize, &wsbench_harness::screenshot::Shape)> = shapes
                .iter()
                .enumerate()
                .filter(|(_, s)| s.tag == "text" && s.text.starts_with("published: "))
                .filter(|(_, s)| s.left < f64::from(super::plot::WIDTH - 270))
                .collect();
            assert_eq!(labels.len(), figures.len(), "{case}: {labels:#?}");
            let others: Vec<String> = COLOURS[..figures.len()].iter().map(|&c| hex(c)).collect();
            for &(at, label) in &labels {
                assert!(
                    label.right > label.left && label.bottom > label.top,
                    "{label:?}"
                );
                for (k, s) in shapes.iter().enumerate() {
                    let inner = wsbench_harness::screenshot::Shape {
                        left: label.left + 1.0,
                        top: label.top + 2.0,
                        right: label.right - 1.0,
                        bottom: label.bottom - 2.0,
                        ..label.clone()
                    };
                    if k == at || !inner.overlaps(s) {
                        continue;
                    }
                    assert!(s.tag != "text", "{case}: {label:#?} meets {s:#?}");
                    // Another published figure's line or mark through the label.
                    let foreign = [&s.stroke, &s.fill]
                        .iter()
                        .any(|c| others.contains(c) && **c != label.fill);
                    let covered = shapes[k.min(at)..at].iter().any(|g| {
                        g.tag == "rect"
                            && g.fill == "#FFFFFF"
                            && g.left <= inner.left.max(s.left)
                            && g.right >= inner.right.min(s.right)
                            && g.top <= inner.top
                            && g.bottom >= inner.bottom
                    });
                    assert!(
                        !foreign || (k < at && covered),
                        "{case}: {label:#?} is struck through by {s:#?}"
                    );
                }
            }
        }
    }
}

fn plots_of(dir: &Path) -> Vec<(&'static str, super::plot::Plot, String)> {
    let run = Run::load(dir).unwrap();
    let (axis, curves) = super::sweep::curves(&run, super::DEFAULT_KNEE_GAIN);
    super::charts::plots(&run, axis, &curves).unwrap()
}

/// Issue 27, item 1: a run that failed a check says so at the top of report.html, naming it, and the page
/// lists the thresholds and the busy machine's warning.
#[test]
fn the_report_states_a_failed_run_its_thresholds_and_a_busy_machine() {
    let dir = repeated();
    let mut run: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    run["status"] = "failed".into();
    run["busy"] = serde_json::json!(["other processes used 1.02 CPUs of 2 (this machine) just before the load started: spin (pid 9) 100 %"]);
    run["failed_checks"] = serde_json::json!([
        { "check": "threshold", "detail": "p99<1ms at 01-clients-16 (3.2 ms)" },
        { "check": "busy machine", "detail": "other processes used 1.02 CPUs of 2 (this machine) just before the load started: spin (pid 9) 100 %" }
    ]);
    fs::write(dir.join("run.json"), run.to_string()).unwrap();
    let html = fs::read_to_string(super::write_report(&dir).unwrap()).unwrap();
    assert!(
        html.contains("<div class=\"alert bad\" id=\"status\" data-status=\"failed\">Status: <strong>FAILED: threshold p99&lt;1ms at 01-clients-16 (3.2 ms); busy machine: other processes used 1.02 CPUs of 2 (this machine) just before the load started; all 1 step × 3 rounds"),
        "{html}"
    );
    assert!(
        html.contains("all 1 step × 3 rounds measured without errors"),
        "{html}"
    );
    assert!(html.contains("<h2>Thresholds</h2>"), "{html}");
    assert!(
        html.contains("data-threshold=\"p99&lt;1ms\" data-verdict=\"FAIL\""),
        "{html}"
    );
    assert!(
        html.contains("data-threshold=\"throughput&gt;6100/s\" data-verdict=\"pass\""),
        "{html}"
    );
    assert!(
        html.contains("Busy machine: other processes used 1.02 CPUs"),
        "{html}"
    );
    let md = crate::summary::render(&Run::load(&dir).unwrap(), &[]);
    assert!(
        md.contains(
            "- Status: **FAILED: threshold p99<1ms at 01-clients-16 (3.2 ms); busy machine"
        ),
        "{md}"
    );
}

/// Issue 27, item 3: a published figure is drawn only in a run with a step under its conditions; where
/// none applies the caption says so.
#[test]
fn published_figures_are_drawn_only_where_their_conditions_match() {
    let single = wsbench_harness::paths::project_root().join("xtask/tests/fixtures/summary");
    let matching = plots_of(&single);
    let t = matching.iter().find(|p| p.0 == "throughput.svg").unwrap();
    assert!(!t.1.references.is_empty());
    assert!(
        t.2.contains("each where its conditions match a step"),
        "{}",
        t.2
    );
    let dir = copy_of(&single, "conditions");
    let mut run: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    for p in run["published"].as_array_mut().unwrap() {
        p["clients"] = 100.into();
    }
    fs::write(dir.join("run.json"), run.to_string()).unwrap();
    let plots = plots_of(&dir);
    for (file, plot, caption) in &plots {
        assert!(plot.references.is_empty(), "{file}: {:?}", plot.references);
        let svg = plot.to_svg().unwrap();
        assert!(!svg.contains("published"), "{file}");
        if ["throughput.svg", "xml-mb-per-s.svg"].contains(file) {
            assert!(
                caption.contains("No published figure is drawn: none was measured under the conditions of these steps"),
                "{file}: {caption}"
            );
        }
    }
}

/// Issue 27, item 5: bars are read by their length, so the per-client bars stand on a linear axis from
/// zero; a sweep's points may take a log axis.
#[test]
fn per_client_bars_are_linear_and_a_sweep_may_be_log() {
    use super::plot::Scale;
    let single = wsbench_harness::paths::project_root().join("xtask/tests/fixtures/summary");
    let bars = plots_of(&single);
    let pc = bars.iter().find(|p| p.0 == "per-client.svg").unwrap();
    assert_eq!(pc.1.y_scale, Scale::Linear);
    assert!(!pc.1.categories.is_empty(), "bars");
    assert!(!pc.2.contains("log"), "{}", pc.2);
    let (ticks_x, ticks_y) = pc.1.ticks();
    assert_eq!(ticks_x.0.len(), 1);
    assert_eq!(ticks_y.0[0].1, "0", "a labelled zero: {ticks_y:?}");
    let sweep = plots_of(&fixtures::sweep_a());
    let pc = sweep.iter().find(|p| p.0 == "per-client.svg").unwrap();
    assert!(matches!(pc.1.y_scale, Scale::Log(_)));
    assert!(pc.1.categories.is_empty(), "points, not bars");
}

/// Issue 27, item 6: every series of the latency chart has its own colour and mark (the mean a ring, p50 a
/// dot), and none looks like a published level (a dashed line in a reference's colour).
#[test]
fn every_latency_series_has_its_own_mark() {
    use super::plot::Marker;
    for dir in [
        wsbench_harness::paths::project_root().join("xtask/tests/fixtures/summary"),
        fixtures::sweep_a(),
    ] {
        let plots = plots_of(&dir);
        let Some(l) = plots.iter().find(|p| p.0 == "latency.svg") else {
            continue;
        };
        let series: Vec<_> =
            l.1.lines
                .iter()
                .map(|x| (x.color, x.marker, x.dashed, x.dots))
                .collect();
        for (i, a) in series.iter().enumerate() {
            for b in &series[i + 1..] {
                assert!(a != b, "two series look alike: {series:?}");
            }
        }
        let mean = l.1.lines.iter().find(|x| x.name == "mean").unwrap();
        let p50 = l.1.lines.iter().find(|x| x.name == "p50").unwrap();
        assert_eq!((mean.marker, p50.marker), (Marker::Ring, Marker::Dot));
        assert!(!mean.dashed, "dashed lines are published levels");
        for r in &l.1.references {
            assert!(
                l.1.lines.iter().all(|x| x.color != r.color || !x.dashed),
                "{}",
                r.label
            );
        }
        let svg = l.1.to_svg().unwrap();
        assert!(svg.contains("fill=\"none\""), "a ring is drawn hollow");
    }
}

/// Issue 27, item 7: two rounds make no interval: the whisker spans their min–max and says so, and each
/// round's row in the steps tables says which round it is.
#[test]
fn two_rounds_show_their_range_and_each_round_is_labelled() {
    let dir = rounds(&[24_000.0, 25_800.0]);
    let plots = plots_of(&dir);
    let t = plots.iter().find(|p| p.0 == "throughput.svg").unwrap();
    assert_eq!(t.1.lines[0].whiskers, [(1.0, 24_000.0, 25_800.0)]);
    assert!(
        t.2.contains("min–max of the rounds (2 rounds: no interval)"),
        "{}",
        t.2
    );
    assert!(t
        .1
        .notes
        .iter()
        .any(|n| n.text == "whiskers: min–max (2 rounds: no interval)"));
    let run = Run::load(&dir).unwrap();
    let md = crate::summary::render(&run, &[]);
    assert!(md.contains("| 01-clients-16 (round 1 of 2) | ok |"), "{md}");
    assert!(md.contains("| 01-clients-16 (round 2 of 2) | ok |"), "{md}");
    assert!(md.contains("2 rounds: no interval]"), "{md}");
    let html = fs::read_to_string(super::write_report(&dir).unwrap()).unwrap();
    assert!(html.contains("clients=16 · round 1 of 2</td>"), "{html}");
    assert!(html.contains("clients=16 · round 2 of 2</td>"), "{html}");
    let three = plots_of(&repeated());
    let t = three.iter().find(|p| p.0 == "throughput.svg").unwrap();
    assert!(t.2.contains("95 % interval"), "{}", t.2);
}

/// Issue 27, item 8: the CPU and memory series start at each step's 0 s, not at its first sample (1 s).
#[test]
fn time_series_start_at_zero_seconds() {
    let plots = plots_of(&fixtures::sweep_a());
    let cpu = plots.iter().find(|p| p.0 == "cpu.svg").unwrap();
    for a in &cpu.1.areas {
        assert_eq!(a.points.first().map(|p| p.0), Some(0.0), "{}", a.name);
    }
    let rss = plots.iter().find(|p| p.0 == "server-rss.svg").unwrap();
    assert_eq!(rss.1.lines[0].points.first().map(|p| p.0), Some(0.0));
}

/// The single-step fixture as a run of two steps against three servers (`--sut bench-server,gsoap,jaxws`),
/// jaxws's CPU not sampled.
fn three_servers() -> Scratch {
    let single = wsbench_harness::paths::project_root().join("xtask/tests/fixtures/summary");
    let dir = copy_of(&single, "servers");
    let mut run: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    let step = run["steps"][0].clone();
    let doc: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("steps/01-clients-16.json")).unwrap())
            .unwrap();
    let mut steps = vec![];
    for (n, label) in [(1, "clients=16"), (2, "clients=64")] {
        for (k, sut) in ["bench-server", "gsoap", "jaxws"].iter().enumerate() {
            let id = format!("0{n}-{}-{sut}", label.replace('=', "-"));
            let mut s = step.clone();
            s["id"] = id.clone().into();
            s["label"] = label.into();
            s["sut"] = (*sut).into();
            s["result"] = format!("steps/{id}.json").into();
            let mut d = doc.clone();
            d["throughput"]["total_per_s"] = (9000.0 / (k as f64 + 1.0) * n as f64).into();
            d["system"]["mean"]["server_rss_kb_max"] = (20_000 * (k + 1) * (k + 1)).into();
            fs::write(dir.join(format!("steps/{id}.json")), d.to_string()).unwrap();
            steps.push(s);
        }
    }
    run["steps"] = steps.into();
    fs::write(dir.join("run.json"), run.to_string()).unwrap();
    dir
}

/// Issue 25, item 3: a run of several servers gets a grouped chart per metric of its side-by-side table — a
/// group per step, a bar per server in its own colour, the servers in the legend — and, as headless Chromium
/// lays the SVG out, every step's name and every server's is drawn and no two texts meet.
#[test]
fn several_servers_get_grouped_bars_per_metric() {
    let dir = three_servers();
    let plots = plots_of(&dir);
    let files: Vec<&str> = plots.iter().map(|p| p.0).collect();
    for want in [
        "servers-throughput.svg",
        "servers-p50.svg",
        "servers-p99.svg",
        "servers-rss.svg",
    ] {
        assert!(files.contains(&want), "{want} missing from {files:?}");
    }
    let sh = xshell::Shell::new().unwrap();
    let (_, tput, caption) = plots
        .iter()
        .find(|p| p.0 == "servers-throughput.svg")
        .unwrap();
    assert!(tput.bars, "{caption}");
    let names: Vec<&str> = tput.lines.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["bench-server", "gsoap", "jaxws"]);
    assert_eq!(
        tput.categories
            .iter()
            .map(|c| c.1.as_str())
            .collect::<Vec<_>>(),
        ["01-clients-16", "02-clients-64"]
    );
    assert!(tput.notes.is_empty(), "{:?}", tput.notes);
    // Step 2 of gsoap: 9000 / 2 × 2.
    assert!(
        tput.lines[1].points.contains(&(2.0, 9000.0)),
        "{:?}",
        tput.lines[1]
    );
    let svg = tput.to_svg().unwrap();
    let shapes = wsbench_harness::screenshot::shapes(&sh, &svg).unwrap();
    let texts: Vec<&wsbench_harness::screenshot::Shape> =
        shapes.iter().filter(|s| s.tag == "text").collect();
    for want in [
        "01-clients-16",
        "02-clients-64",
        "bench-server",
        "gsoap",
        "jaxws",
    ] {
        assert!(
            texts.iter().any(|t| t.text == want),
            "{want} not drawn: {texts:#?}"
        );
    }
    for (i, a) in texts.iter().enumerate() {
        for b in &texts[i + 1..] {
            let inner = wsbench_harness::screenshot::Shape {
                left: a.left + 1.0,
                top: a.top + 2.0,
                right: a.right - 1.0,
                bottom: a.bottom - 2.0,
                ..(*a).clone()
            };
            assert!(!inner.overlaps(b), "{a:#?} meets {b:#?}");
        }
    }
    // Six bars, one per server and step, each in its server's colour.
    let bars = |hex: &str| {
        shapes
            .iter()
            .filter(|s| s.tag == "rect" && s.fill == hex)
            .count()
    };
    assert_eq!(bars("#4E79A7") + bars("#F28E2B") + bars("#E15759"), 6 + 3);
    let html = fs::read_to_string(super::write_report(&dir).unwrap()).unwrap();
    assert!(
        html.contains("<figure id=\"servers-p99\">"),
        "p99 chart not in the page"
    );
}

/// A run of one server (the default) draws no grouped chart.
#[test]
fn one_server_gets_no_grouped_bars() {
    for (name, run) in every_fixture() {
        let (axis, curves) = super::sweep::curves(&run, super::DEFAULT_KNEE_GAIN);
        let plots = super::charts::plots(&run, axis, &curves).unwrap();
        assert!(plots.iter().all(|p| !p.0.starts_with("servers-")), "{name}");
    }
}

/// Servers side by side each report their own worker count (gsoap 64, jaxws 2): that is no workers sweep, and
/// no knee is read into it; one server's steps over worker counts still are a sweep.
#[test]
fn servers_side_by_side_are_no_workers_sweep() {
    use wsbench_harness::results::{Axis, Run};
    let dir = three_servers();
    let set_workers = |workers: &dyn Fn(&str, usize) -> u32| {
        let path = dir.join("run.json");
        let mut run: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        for (i, s) in run["steps"].as_array_mut().unwrap().iter_mut().enumerate() {
            s["clients"] = 16.into();
            s["workers"] = workers(s["sut"].as_str().unwrap(), i).into();
        }
        fs::write(&path, run.to_string()).unwrap();
        Run::load(&dir).unwrap().axis()
    };
    let own = |sut: &str, _: usize| match sut {
        "gsoap" => 64,
        "jaxws" => 2,
        _ => 1,
    };
    assert_eq!(set_workers(&own), Axis::Step);
    assert_eq!(set_workers(&|_, i| 1 + i as u32 / 3), Axis::Workers);
}

/// Each server measured in a step the published throughput selects gets one line against it; a server whose
/// step failed is said to have failed and is not compared.
#[test]
fn each_server_beside_the_published_figure_unless_its_step_failed() {
    use wsbench_harness::results::Run;
    let dir = three_servers();
    let path = dir.join("run.json");
    let mut run: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    for s in run["steps"].as_array_mut().unwrap() {
        if s["sut"] == "jaxws" && s["id"].as_str().unwrap().starts_with("01-") {
            s["status"] = "failed".into();
        }
    }
    fs::write(&path, run.to_string()).unwrap();
    let lines = super::side::lines(&Run::load(&dir).unwrap()).join("\n");
    let against = |sut: &str, step: &str| {
        lines.lines().any(|l| {
            l.starts_with(&format!("- **{sut}**"))
                && l.contains(&format!("in step {step} here"))
                && l.contains("the published 1,100 tx/s")
        })
    };
    assert!(against("bench-server", "01-clients-16"), "{lines}");
    assert!(against("gsoap", "02-clients-64"), "{lines}");
    assert!(against("jaxws", "02-clients-64"), "{lines}");
    assert!(!against("jaxws", "01-clients-16"), "{lines}");
    assert!(
        lines.contains("- **jaxws**: step 01-clients-16 failed here, so it is not compared"),
        "{lines}"
    );
}

/// Issue 38, item 3: a peer configuration's title (peer.toml), not its `--sut` suffix, names it in the
/// side-by-side table (`Metro 4.0.5, …` for `--sut jaxws-4`, whose configuration is `4`); a record without a
/// title keeps the name.
#[test]
fn side_by_side_names_a_configuration_by_its_title() {
    use wsbench_harness::results::Run;
    let dir = three_servers();
    let path = dir.join("provenance.json");
    let mut prov: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    prov["sut"] = serde_json::json!([
        {"name": "bench-server", "started_by_wsbench": true, "sampled_pid": null},
        {"name": "gsoap", "started_by_wsbench": true, "sampled_pid": null, "config_name": "events"},
        {"name": "jaxws", "started_by_wsbench": true, "sampled_pid": null, "config_name": "4",
         "config_title": "Metro 4.0.5, 2 threads per core"}
    ]);
    fs::write(&path, prov.to_string()).unwrap();
    let run = Run::load(&dir).unwrap();
    let lines = super::side::lines(&run);
    let row = |sut: &str| {
        lines
            .iter()
            .find(|l| l.starts_with(&format!("| 01-clients-16 | {sut} |")))
            .unwrap_or_else(|| panic!("no {sut} row in {lines:#?}"))
            .clone()
    };
    assert!(
        row("jaxws").contains("| Metro 4.0.5, 2 threads per core |"),
        "{}",
        row("jaxws")
    );
    assert!(!row("jaxws").contains("| 4 |"));
    assert!(row("gsoap").contains("| events |"), "{}", row("gsoap"));
    let html = fs::read_to_string(super::write_report(&dir).unwrap()).unwrap();
    assert!(html.contains("<td>Metro 4.0.5, 2 threads per core</td>"));
}
