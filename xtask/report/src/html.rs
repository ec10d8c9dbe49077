//! The self-contained `report.html`: alerts, findings, measured vs published, steps, inline SVG charts, provenance.
//!
//! Written as well-formed XHTML-compatible markup (every element closed, all text escaped) with
//! inline CSS and inline SVG: no scripts, fonts or URLs, so it opens offline and a test can parse it.

use std::fmt::Write as _;

use quick_xml::escape::escape;

use super::charts::{short_source, Chart};
use super::sweep::Curve;
use crate::summary::published_value;
use bench_proto::numbers::{fmt_ms, fmt_num, fmt_x, num};
use wsbench_harness::results::{flatten, Axis, Run, Step};
use wsbench_harness::rundoc::Status;
use wsbench_harness::stats::Estimate;

const STYLE: &str = r#"
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 1180px;
       padding: 16px 24px 48px; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; margin: 0.4em 0 0.1em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #ddd; padding-bottom: 4px; margin-top: 1.8em; }
.sub { color: #555; margin: 0; }
.badge { display: inline-block; background: #eef; color: #335; border-radius: 3px; padding: 0 6px; font-size: 0.85em; }
.alert { background: #fff4e5; border-left: 4px solid #e08a00; padding: 6px 12px; margin: 6px 0; }
.alert.bad { background: #fdecea; border-left-color: #c62828; }
.finding { background: #eef6ee; border-left: 4px solid #2e7d32; padding: 6px 12px; margin: 6px 0; }
table { border-collapse: collapse; font-size: 0.82em; margin: 8px 0; }
th, td { border: 1px solid #ddd; padding: 3px 6px; text-align: right; vertical-align: top; white-space: nowrap; }
td.wrap { white-space: normal; }
.scroll { overflow-x: auto; }
th { background: #f4f4f4; }
td.l, th.l { text-align: left; }
tr.knee td { background: #fdecea; }
td.err { color: #c62828; font-weight: bold; }
figure { margin: 18px 0 28px; }
figure svg { width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
table.prov td { text-align: left; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 0.95em; }
table.prov td.k { color: #555; white-space: nowrap; }
pre { margin: 0; white-space: pre-wrap; word-break: break-all; }
footer { color: #777; font-size: 0.85em; margin-top: 3em; }
"#;

/// Everything the page shows.
pub(crate) struct Page<'a> {
    pub run: &'a Run,
    pub axis: Axis,
    pub curves: &'a [Curve],
    pub knee_sentences: &'a [String],
    pub charts: &'a [Chart],
}

fn esc(s: &str) -> std::borrow::Cow<'_, str> {
    escape(s)
}

impl Page<'_> {
    pub(crate) fn render(&self) -> String {
        let run = self.run;
        let m = &run.manifest;
        let mut h = String::with_capacity(256 * 1024);
        let title = format!("wsbench: {}", run.title());
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n\
             <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
            esc(&title)
        );
        let stamp = run
            .dir
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let _ = write!(
            h,
            "<h1>{}</h1>\n<p class=\"sub\">{} · run {}",
            esc(&m.scenario),
            esc(&m.description),
            esc(&stamp)
        );
        if m.quick {
            h.push_str(" <span class=\"badge\">quick</span>");
        }
        h.push_str("</p>\n");
        if !m.reproduces.is_empty() {
            let seed = m.seed.clone();
            let _ = writeln!(
                h,
                "<p class=\"sub\">Reproduces: {} ({})</p>",
                esc(&m.reproduces),
                esc(&short_source(&seed))
            );
        }
        if !m.sets.is_empty() {
            let _ = writeln!(
                h,
                "<p class=\"sub\">Overrides: {}</p>",
                esc(&m.sets.join(", "))
            );
        }
        if !m.notes.is_empty() {
            h.push_str("<ul class=\"sub\">\n");
            for n in &m.notes {
                let _ = writeln!(h, "<li>{}</li>", esc(n));
            }
            h.push_str("</ul>\n");
        }

        status(&mut h, m);
        self.alerts(&mut h);
        self.findings(&mut h);
        self.published(&mut h);
        self.thresholds(&mut h);
        self.servers(&mut h);
        self.steps(&mut h);
        h.push_str("<h2>Charts</h2>\n");
        for c in self.charts {
            let _ = write!(
                h,
                "<figure id=\"{id}\">\n{svg}\n<figcaption>{cap} <a href=\"charts/{file}\">{file}</a></figcaption>\n</figure>\n",
                id = esc(c.file.trim_end_matches(".svg")),
                svg = c.svg.trim(),
                cap = esc(&c.caption),
                file = esc(&c.file),
            );
        }
        self.provenance(&mut h);
        let _ = write!(
            h,
            "<footer>Written by <code>cargo xtask report</code> from {}. Charts are also in <code>charts/</code> as SVG.</footer>\n</body>\n</html>\n",
            esc(&run.dir.display().to_string())
        );
        h
    }

    fn alerts(&self, h: &mut String) {
        let run = self.run;
        let mut bad: Vec<String> = vec![];
        let mut warn: Vec<String> = vec![];
        let mut repeated: Vec<(String, String, Vec<String>)> = vec![];
        if run.manifest.quick {
            warn.push("Quick run: short steps, so figures are indicative only.".into());
        }
        if run.provenance.is_none() {
            warn.push(
                "No provenance.json: the machine and build behind these numbers are unknown."
                    .into(),
            );
        }
        for p in &run.manifest.problems {
            bad.push(format!("Run problem: {p}"));
        }
        for b in &run.manifest.busy {
            bad.push(format!(
                "Busy machine: {b} — figures measured beside other work are low and noisy."
            ));
        }
        warn.extend(crate::host_state::steal_flags(run));
        for s in &run.steps {
            let label = &s.meta.label;
            match &s.doc {
                Err(_) if s.meta.status == Status::NotRun => bad.push(format!(
                    "Step {label}: not run (an earlier failure stopped the run)."
                )),
                Err(e) => bad.push(format!("Step {label}: {e}")),
                Ok(d) => {
                    if let Some(cut) = crate::summary::cut_short(&s.meta, d) {
                        bad.push(format!(
                            "Step {label}: {cut}; the figures cover the time measured."
                        ));
                    }
                    if let Some(text) = crate::summary::failed_calls(&d.counts) {
                        bad.push(format!("Step {label}: {text}, not counted as throughput."));
                    }
                    for w in &d.warnings {
                        // The same warning at many steps (client CPU, say) is one alert listing them.
                        let key: String = w
                            .chars()
                            .map(|c| if c.is_ascii_digit() { '#' } else { c })
                            .collect();
                        match repeated.iter_mut().find(|g| g.0 == key) {
                            Some(g) => g.2.push(label.clone()),
                            None => repeated.push((key, w.clone(), vec![label.clone()])),
                        }
                    }
                }
            }
        }
        for (_, first, labels) in repeated {
            let mut text = format!("Step {}: {first}", labels[0]);
            if labels.len() > 1 {
                let _ = write!(
                    text,
                    " — likewise at {} ({} steps in all).",
                    labels[1..].join(", "),
                    labels.len()
                );
            }
            warn.push(text);
        }
        for a in bad {
            let _ = writeln!(h, "<div class=\"alert bad\">{}</div>", esc(&a));
        }
        for a in warn {
            let _ = writeln!(h, "<div class=\"alert\">{}</div>", esc(&a));
        }
    }

    /// Every threshold at every step, as summary.md lists them (`results::Run::verdicts`).
    fn thresholds(&self, h: &mut String) {
        let verdicts = self.run.verdicts();
        if verdicts.is_empty() {
            return;
        }
        h.push_str(
            "<h2>Thresholds</h2>\n<table>\n<tr><th class=\"l\">threshold</th><th class=\"l\">step</th>\
             <th>measured</th><th class=\"l\">verdict</th></tr>\n",
        );
        for v in verdicts {
            let got = v.value.map_or("not measured".to_owned(), |x| {
                format!("{} {}", num(x), v.unit)
            });
            let (class, verdict) = if v.pass {
                ("l", "pass")
            } else {
                ("l err", "FAIL")
            };
            let _ = writeln!(
                h,
                "<tr data-threshold=\"{t}\" data-verdict=\"{verdict}\"><td class=\"l\"><code>{t}</code></td>\
                 <td class=\"l\">{}</td><td>{}</td><td class=\"{class}\">{verdict}</td></tr>",
                esc(&v.step),
                esc(&got),
                t = esc(&v.threshold),
            );
        }
        h.push_str("</table>\n");
    }

    fn findings(&self, h: &mut String) {
        h.push_str("<h2>Findings</h2>\n");
        for s in self.knee_sentences {
            let _ = writeln!(h, "<div class=\"finding\">{}</div>", esc(s));
        }
        for c in self.curves {
            let Some(best) = c.points.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
                continue;
            };
            let who = if self.curves.len() > 1 {
                format!("{}: ", c.name)
            } else {
                String::new()
            };
            let at = if self.axis == Axis::Step {
                String::new()
            } else {
                format!(" at {} {}", fmt_x(best.0), self.axis.name())
            };
            let unit = if self.run.is_chat() {
                "messages/s"
            } else {
                "calls/s"
            };
            let _ = writeln!(
                h,
                "<p>{}Peak throughput {} {unit}{at} (mean latency {:.3} ms).</p>",
                esc(&who),
                fmt_num(best.1),
                best.2
            );
        }
        if self.knee_sentences.is_empty() && self.curves.iter().all(|c| c.points.is_empty()) {
            h.push_str("<p>No step produced results.</p>\n");
        }
    }

    /// The same comparisons as summary.md (`results::Run::comparisons`): one row per published figure and
    /// step it is compared with, or one saying no step has its conditions.
    fn published(&self, h: &mut String) {
        let comparisons = self.run.comparisons();
        if comparisons.is_empty() {
            return;
        }
        h.push_str(
            "<h2>Measured vs published</h2>\n<p class=\"sub\">Published figures come from other hardware and \
             software; the ratio says how this machine compares, not whether either is right.</p>\n<table>\n\
             <tr><th class=\"l\">figure</th><th class=\"l\">metric</th><th class=\"l\">step</th><th>published</th>\
             <th>measured</th><th>measured / published</th></tr>\n",
        );
        for c in &comparisons {
            let p = c.published;
            let published = published_value(p);
            // The rounds of a repeated step make one row, as in summary.md: median and 95 % interval.
            let mut groups: Vec<(usize, Vec<f64>)> = vec![];
            for &(i, v) in &c.rows {
                let g = self.run.steps[i].meta.group();
                match groups
                    .iter_mut()
                    .find(|x| self.run.steps[x.0].meta.group() == g)
                {
                    Some(x) => x.1.extend(v),
                    None => groups.push((i, v.into_iter().collect())),
                }
            }
            let mut rows: Vec<(String, String, String, String)> = groups
                .into_iter()
                .map(|(i, vs)| {
                    let e = Estimate::of(&vs);
                    let ratio = match e {
                        Some(e) if p.value != 0.0 => format!("{:.2}", e.median / p.value),
                        _ => "—".into(),
                    };
                    let meta = &self.run.steps[i].meta;
                    // A failed step's figures are never compared (summary.md says the same).
                    let failed = meta.status == Status::Failed;
                    (
                        meta.group().to_owned(),
                        meta.label.clone(),
                        e.map_or_else(
                            || {
                                if failed {
                                    "failed: not compared"
                                } else {
                                    "not measured"
                                }
                                .into()
                            },
                            |e| format!("{} {}{}", num(e.median), p.unit, e.interval(num)),
                        ),
                        ratio,
                    )
                })
                .collect();
            if rows.is_empty() {
                let why = if self.run.manifest.emulated {
                    "emulated: not compared"
                } else {
                    "no step has its conditions"
                };
                rows.push((String::new(), "—".into(), why.into(), "—".into()));
            }
            for (id, step, measured, ratio) in rows {
                // The data attributes say what is compared, for tools and tests (`summary.md` compares the same).
                let _ = writeln!(
                    h,
                    "<tr data-figure=\"{}\" data-step=\"{}\" data-measured=\"{}\"><td class=\"l wrap\">{} <small>({})</small></td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(&p.label),
                    esc(&id),
                    esc(&measured),
                    esc(&p.label),
                    esc(&short_source(&p.source)),
                    esc(p.metric.name()),
                    esc(&step),
                    esc(&published),
                    esc(&measured),
                    ratio
                );
            }
        }
        h.push_str("</table>\n");
    }

    fn steps(&self, h: &mut String) {
        let run = self.run;
        let knees: Vec<usize> = self
            .curves
            .iter()
            .filter_map(|c| Some(c.steps[c.knee?.index]))
            .collect();
        let show_mb = super::charts::wants_mb(run);
        let has_sys = run.steps.iter().any(|s| !s.samples().is_empty());
        let unit = if run.is_chat() { "msg/s" } else { "calls/s" };
        let ops = self.run.series();
        let show_op = ops.len() > 1;
        h.push_str("<h2>Steps</h2>\n");
        if !show_op {
            if let Some(op) = run.steps.iter().find_map(Step::operation) {
                let _ = writeln!(h, "<p class=\"sub\">Operation: {}</p>", esc(&op));
            }
        }
        h.push_str("<div class=\"scroll\"><table>\n<tr><th class=\"l\">step</th>");
        if show_op {
            h.push_str("<th class=\"l\">operation</th>");
        }
        let _ = write!(
            h,
            "<th>ok</th><th>errors</th><th>{unit}</th><th>per client</th>"
        );
        if show_mb {
            h.push_str("<th>MB/s sent / received</th>");
        }
        h.push_str("<th>mean ms</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th><th>client CPU</th>");
        if has_sys {
            h.push_str("<th>user/sys/idle %</th><th>RSS MiB</th>");
        }
        h.push_str("</tr>\n");
        for (i, s) in run.steps.iter().enumerate() {
            let class = if knees.contains(&i) {
                " class=\"knee\""
            } else {
                ""
            };
            // Each round of a repeated step is its own row: say which.
            let round = match (s.meta.round, run.manifest.repeat) {
                (Some(r), Some(n)) => format!(" · round {r} of {n}"),
                (Some(r), None) => format!(" · round {r}"),
                _ => String::new(),
            };
            let _ = write!(
                h,
                "<tr{class}><td class=\"l\">{}{}{}</td>",
                esc(&s.meta.label),
                esc(&round),
                if knees.contains(&i) { " (knee)" } else { "" },
            );
            if show_op {
                let _ = write!(
                    h,
                    "<td class=\"l\">{}</td>",
                    esc(&s.operation().unwrap_or_default())
                );
            }
            let Ok(d) = &s.doc else {
                let _ = writeln!(h, "<td class=\"l err\" colspan=\"12\">no results</td></tr>");
                continue;
            };
            step_cells(h, s, d, show_mb, has_sys);
            h.push_str("</tr>\n");
        }
        h.push_str("</table></div>\n<p class=\"sub\">Latencies in ms (corrected for coordinated omission in open loop). \
                    Client CPU is bench-client's own use of one CPU-second per second of wall time.</p>\n");
    }

    /// The servers measured side by side (`--sut`), a row per server for each step.
    fn servers(&self, h: &mut String) {
        let table = crate::side::table(self.run);
        if table.is_empty() {
            return;
        }
        h.push_str(
            "<h2>Servers side by side</h2>\n<table>\n<tr><th>step</th><th>server</th><th>configuration</th>\
             <th>warm-up</th><th>req/s</th>\
             <th>p50 ms</th><th>p99 ms</th><th>server CPU per call</th><th>server RSS</th><th></th></tr>\n",
        );
        let or = |v: Option<f64>, unit: &str| {
            v.map_or("not sampled".to_owned(), |v| format!("{}{unit}", num(v)))
        };
        for (step, cells) in &table {
            for c in cells {
                let _ = writeln!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(step),
                    esc(&c.sut),
                    esc(c.config.as_deref().unwrap_or("–")),
                    esc(&crate::side::warm_up(c)),
                    or(c.per_s, ""),
                    or(c.p50_ms, ""),
                    or(c.p99_ms, ""),
                    or(c.cpu_us_per_call, " µs"),
                    or(c.rss_mib, " MiB"),
                    esc(&c.flags()),
                );
            }
        }
        h.push_str("</table>\n");
    }

    fn provenance(&self, h: &mut String) {
        h.push_str("<h2>Provenance</h2>\n");
        let m = &self.run.manifest;
        let mut rows: Vec<(String, String)> = vec![("scenario".into(), m.scenario.clone())];
        if !m.scenario_sha256.is_empty() {
            rows.push(("scenario_sha256".into(), m.scenario_sha256.clone()));
        }
        if !m.seed.is_empty() {
            rows.push(("seed".into(), m.seed.clone()));
        }
        match &self.run.provenance_json {
            Some(p) => flatten("", p, &mut rows),
            None => rows.push(("provenance.json".into(), "missing".into())),
        }
        h.push_str("<table class=\"prov\">\n");
        for (k, v) in rows {
            let _ = writeln!(
                h,
                "<tr><td class=\"k\">{}</td><td><pre>{}</pre></td></tr>",
                esc(&k),
                esc(&v)
            );
        }
        h.push_str("</table>\n");
    }
}

/// The run's status line: the one rule's verdict (run.json's `status`) in the words summary.md uses.
fn status(h: &mut String, m: &wsbench_harness::rundoc::RunDoc) {
    let class = match m.status {
        Status::Ok => "finding",
        _ => "alert bad",
    };
    let key = m.status.key();
    let _ = writeln!(
        h,
        "<div class=\"{class}\" id=\"status\" data-status=\"{key}\">Status: <strong>{}</strong></div>",
        esc(&m.status_words())
    );
}

/// One step's cells after its label: counts, throughput, latencies, CPU and memory.
fn step_cells(
    h: &mut String,
    s: &Step,
    d: &bench_proto::results::ResultsDoc,
    show_mb: bool,
    has_sys: bool,
) {
    let ms = |v: f64| fmt_ms(v / 1000.0);
    let ums = |v: u64| fmt_ms(v as f64 / 1000.0);
    let err_class = if d.counts.errors_total > 0 {
        " class=\"err\""
    } else {
        ""
    };
    let _ = write!(
        h,
        "<td>{}</td><td{err_class}>{}</td><td>{}</td><td>{}</td>",
        d.counts.ok,
        d.counts.errors_total,
        fmt_num(s.throughput().unwrap_or(0.0)),
        fmt_num(d.throughput.per_client_per_s)
    );
    if show_mb {
        let _ = write!(
            h,
            "<td>{:.2} / {:.2}</td>",
            d.throughput.sent_mb_per_s, d.throughput.received_mb_per_s
        );
    }
    match s.latency() {
        Some(l) => {
            let _ = write!(
                h,
                "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                ms(l.mean),
                ums(l.p50),
                ums(l.p90),
                ums(l.p99),
                ums(l.p99_9),
                ums(l.max)
            );
        }
        None => h.push_str("<td colspan=\"6\">—</td>"),
    }
    let cpu = Some(d.client.cpu_utilisation);
    let _ = write!(
        h,
        "<td>{}</td>",
        cpu.map(|c| format!("{:.0} %", c * 100.0))
            .unwrap_or_else(|| "—".into())
    );
    if has_sys {
        // The block's own mean: weighted by the time each sample covers.
        let mean = d.system.as_ref().map(|b| &b.mean);
        match mean.and_then(|m| m.cpu()) {
            None => h.push_str("<td>—</td><td>—</td>"),
            Some((user, sys, idle)) => {
                let rss = mean.and_then(|m| m.server_rss_kb_max);
                let _ = write!(
                    h,
                    "<td>{user:.0}/{sys:.0}/{idle:.0}</td><td>{}</td>",
                    rss.map(|r| format!("{:.1}", r as f64 / 1024.0))
                        .unwrap_or_else(|| "—".into())
                );
            }
        }
    }
}
