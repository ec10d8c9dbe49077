//! The one reader of a results directory (`run.json`, `provenance.json`, `steps/*.json`), which the
//! summary, the report and `compare` all use; with the one function that gives a step's value of a published
//! figure's metric, and the one list of which steps each published figure is compared with.
//!
//! Reading is tolerant (defaults for absent fields): a report must still render, with the gaps stated, for
//! an interrupted run or one written by an older wsbench.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use bench_proto::results::{
    LatencySummary, Mode, ResultsDoc, RunRecord, SystemSample, Timeline, SCHEMA,
};
use hdrhistogram::Histogram;

use super::metric::Metric;
use super::provenance::Provenance;
use super::rundoc::{RunDoc, Status, StepEntry};
use super::scenario::Published;
use super::soak::{self, SoakVerdict};
use super::stats::Estimate;
use super::thresholds::{self, Threshold};

/// A step's results document as read back, or why there is none.
pub type StepDoc = Result<ResultsDoc, String>;

/// A step's `(corrected, uncorrected)` latency histograms.
pub(crate) type HistogramPair = (Option<Histogram<u64>>, Option<Histogram<u64>>);

/// A results directory, loaded.
#[derive(Debug)]
pub struct Run {
    pub dir: PathBuf,
    /// `run.json`.
    pub manifest: RunDoc,
    /// `provenance.json`, typed (None when absent or not of this version's shape)…
    pub provenance: Option<Provenance>,
    /// …and as written, for showing and comparing every field.
    pub provenance_json: Option<serde_json::Value>,
    pub steps: Vec<Step>,
}

/// One step: what `run.json` asked for and what bench-client measured (if it wrote a document).
#[derive(Debug)]
pub struct Step {
    pub meta: StepEntry,
    pub doc: StepDoc,
    /// What bench-client recorded beside the figures (timeline, the monitored process's CPU time), when
    /// its document has it.
    pub record: Option<RunRecord>,
}

/// A published figure and the steps it is compared with, each with its measured value (None: the step
/// has no measurement of that metric).
#[derive(Debug, Clone)]
pub struct Comparison<'a> {
    pub published: &'a Published,
    pub rows: Vec<(usize, Option<f64>)>,
}

/// What the sweep varies, in order of preference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    Clients,
    Rate,
    Workers,
    /// Nothing numeric varies: steps are plotted by position.
    Step,
}

impl Axis {
    pub fn name(self) -> &'static str {
        match self {
            Axis::Clients => "clients",
            Axis::Rate => "req/s offered",
            Axis::Workers => "server workers",
            Axis::Step => "step",
        }
    }

    /// The step's x, or `None` when the step lacks it.
    pub fn value(self, index: usize, meta: &StepEntry) -> Option<f64> {
        match self {
            Axis::Clients => meta.clients.map(f64::from),
            Axis::Rate => meta.rate,
            Axis::Workers => meta.workers.map(f64::from),
            Axis::Step => Some(index as f64 + 1.0),
        }
    }

    /// The published figure's x on this axis, if it has one.
    pub fn published_value(self, p: &Published) -> Option<f64> {
        match self {
            Axis::Clients => p.clients.map(f64::from),
            Axis::Rate => None,
            Axis::Workers => p.workers.map(f64::from),
            Axis::Step => None,
        }
    }
}

/// A threshold judged on one step (the median of its rounds), or the one a step stopped on.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub threshold: String,
    /// The step's id without its round (with it, for a step that stopped).
    pub step: String,
    /// None: the step did not measure the figure (which fails the threshold). For a step that stopped on
    /// it, what its last window measured.
    pub value: Option<f64>,
    pub unit: &'static str,
    pub pass: bool,
    /// The step stopped early on this threshold (`--abort-on-fail`): when, and the window judged.
    pub stopped: Option<Stopped>,
}

/// When and on what a step stopped early: its results document's `aborted`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stopped {
    /// Seconds from the start of the measured interval.
    pub at_s: f64,
    pub window_s: f64,
    /// The calls the window held.
    pub calls: u64,
}

impl Verdict {
    /// `p99<1ms at 01-clients-16 (3.2 ms)`: the threshold, where, and what was measured; for a step that
    /// stopped on it, `p99<1ms at 01-ramp: stopped at 23.0 s (3.2 ms over the last 10 s, 1,234 calls)`.
    pub fn describe(&self) -> String {
        let got = self.value.map_or("not measured".to_owned(), |x| {
            format!("{} {}", bench_proto::numbers::num(x), self.unit)
        });
        match &self.stopped {
            None => format!("{} at {} ({got})", self.threshold, self.step),
            Some(s) => format!(
                "{} at {}: stopped at {} ({got} over the last {}, {} calls)",
                self.threshold,
                self.step,
                bench_proto::numbers::span(s.at_s),
                bench_proto::numbers::span(s.window_s),
                bench_proto::numbers::thousands(s.calls)
            ),
        }
    }
}

impl Run {
    /// Steps grouped by id without the round (the rounds of a repeated step), in order of first appearance.
    pub fn groups(&self) -> Vec<(String, Vec<usize>)> {
        let mut out: Vec<(String, Vec<usize>)> = vec![];
        for (i, s) in self.steps.iter().enumerate() {
            let g = s.meta.group();
            match out.iter_mut().find(|(name, _)| name == g) {
                Some((_, idx)) => idx.push(i),
                None => out.push((g.to_owned(), vec![i])),
            }
        }
        out
    }

    /// The indices of the rounds of step `i` (itself alone when not repeated).
    pub fn rounds_of(&self, i: usize) -> Vec<usize> {
        let g = self.steps[i].meta.group();
        (0..self.steps.len())
            .filter(|&j| self.steps[j].meta.group() == g)
            .collect()
    }

    /// The median and 95 % interval of `f` over the steps `group`; None when none measured it.
    pub fn estimate(&self, group: &[usize], f: impl Fn(&Step) -> Option<f64>) -> Option<Estimate> {
        let xs: Vec<f64> = group
            .iter()
            .filter_map(|&i| f(self.steps.get(i)?))
            .collect();
        Estimate::of(&xs)
    }

    /// Every threshold of the run judged on every step that has a results document or should have one.
    pub fn verdicts(&self) -> Vec<Verdict> {
        let thresholds: Vec<Threshold> = self
            .manifest
            .thresholds
            .iter()
            .filter_map(|t| Threshold::parse(t).ok())
            .collect();
        let mut out = vec![];
        for (group, idx) in self.groups() {
            for t in &thresholds {
                let value = thresholds::metric(t)
                    .and_then(|m| self.estimate(&idx, |s| s.value(m)))
                    .map(|e| e.median);
                out.push(Verdict {
                    threshold: t.text.clone(),
                    step: group.clone(),
                    value,
                    unit: t.unit(),
                    pass: value.is_some_and(|v| t.holds(v)),
                    stopped: None,
                });
            }
        }
        // A step stopped on a threshold (`--abort-on-fail`) failed it, whatever its whole figures say.
        out.extend(self.steps.iter().filter_map(Step::stopped));
        out
    }

    /// Every step judged as a soak by the run's `soak` limits (none without them); a step without a
    /// timeline is judged on an empty one (not measured: a failure).
    pub fn soak_verdicts(&self) -> Vec<SoakVerdict> {
        let Some(limits) = &self.manifest.soak else {
            return vec![];
        };
        let empty = Timeline::default();
        self.steps
            .iter()
            .map(|s| {
                let timeline = s
                    .record
                    .as_ref()
                    .and_then(|r| r.timeline.as_ref())
                    .unwrap_or(&empty);
                soak::judge(&s.meta.id, timeline, limits)
            })
            .collect()
    }

    /// Loads `dir`; a missing or unreadable step document is recorded on the step, not an error.
    pub fn load(dir: &Path) -> anyhow::Result<Run> {
        let manifest_path = dir.join("run.json");
        let manifest: RunDoc = read_json(&manifest_path)?;
        let provenance_json = match dir.join("provenance.json") {
            p if p.exists() => Some(read_json::<serde_json::Value>(&p)?),
            _ => None,
        };
        let provenance = provenance_json
            .as_ref()
            .and_then(|v| serde_json::from_value(v.clone()).ok());
        let steps = manifest
            .steps
            .iter()
            .map(|meta| {
                let doc = read_doc(&dir.join(&meta.result));
                let mut meta = meta.clone();
                // A step xtask never judged (it was killed mid-step) whose client left a partial document: a
                // checkpoint, the figures of a step cut short.
                if meta.status == Status::NotRun && doc.as_ref().is_ok_and(|d| d.partial) {
                    meta.status = Status::CutShort;
                }
                let record = read_record(&dir.join(&meta.result));
                Step { meta, doc, record }
            })
            .collect();
        Ok(Run {
            dir: dir.to_path_buf(),
            manifest,
            provenance,
            provenance_json,
            steps,
        })
    }

    /// Every published figure with the steps it is compared with (every selector it gives must match the
    /// step) and their measured values; a figure no step matches has no rows. Emulated runs compare nothing,
    /// and a failed step's figures are never compared (its value is None: whatever it measured before it
    /// failed is not a result).
    pub fn comparisons(&self) -> Vec<Comparison<'_>> {
        self.manifest
            .published
            .iter()
            .map(|p| Comparison {
                published: p,
                rows: if self.manifest.emulated {
                    Vec::new()
                } else {
                    self.steps
                        .iter()
                        .enumerate()
                        .filter(|(_, s)| p.matches(&s.meta))
                        .map(|(i, s)| {
                            let failed = s.meta.status == Status::Failed;
                            (i, (!failed).then(|| self.measured(i, p.metric)).flatten())
                        })
                        .collect()
                },
            })
            .collect()
    }

    /// Step `i`'s value of `metric`, in the unit the published figures use.
    pub fn measured(&self, i: usize, metric: Metric) -> Option<f64> {
        let step = self.steps.get(i)?;
        match metric {
            Metric::ScalingEfficiency => self.scaling_efficiency(i),
            m => step.value(m),
        }
    }

    /// `total(n) / (n × total(1))` for step `i` of a scale-out run: the throughput of n server instances over
    /// n times that of one instance under the same step (same name, operation, clients and workers); 1.0 is
    /// perfect scale-out. None when it is not a scale-out step or the one-server baseline is missing.
    fn scaling_efficiency(&self, i: usize) -> Option<f64> {
        let entry = &self.steps.get(i)?.meta;
        let n = entry.servers?;
        let total = |s: &Step| s.doc.as_ref().ok().map(|d| d.throughput.total_per_s);
        let baseline = self.steps.iter().find(|s| {
            let b = &s.meta;
            b.servers == Some(1)
                && b.name == entry.name
                && b.operation == entry.operation
                && b.clients == entry.clients
                && b.workers == entry.workers
        })?;
        let (one, many) = (total(baseline)?, total(&self.steps[i])?);
        (one > 0.0).then(|| many / (f64::from(n) * one))
    }

    /// The run's name for people: `<scenario> <timestamp dir>`.
    pub fn title(&self) -> String {
        let stamp = self
            .dir
            .file_name()
            .map(|s| s.to_string_lossy())
            .unwrap_or_default();
        format!("{} {stamp}", self.manifest.scenario)
    }

    /// The first of clients, rate, workers that takes more than one value across steps.
    pub fn axis(&self) -> Axis {
        // Swept within one server: servers side by side (`--sut`) each report their own worker count, which
        // is no sweep.
        let varies = |axis: Axis| {
            let mut xs: Vec<(Option<&str>, f64)> = self
                .steps
                .iter()
                .enumerate()
                .filter_map(|(i, s)| Some((s.meta.sut.as_deref(), axis.value(i, &s.meta)?)))
                .collect();
            xs.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
            xs.dedup();
            xs.windows(2).any(|w| w[0].0 == w[1].0)
        };
        [Axis::Clients, Axis::Rate, Axis::Workers]
            .into_iter()
            .find(|&a| varies(a))
            .unwrap_or(Axis::Step)
    }

    /// Steps grouped into series (one per operation when operations differ), in step order.
    pub fn series(&self) -> Vec<(String, Vec<usize>)> {
        let mut out: Vec<(String, Vec<usize>)> = Vec::new();
        for (i, s) in self.steps.iter().enumerate() {
            let op = s.operation().unwrap_or_default();
            match out.iter_mut().find(|(name, _)| *name == op) {
                Some((_, idx)) => idx.push(i),
                None => out.push((op, vec![i])),
            }
        }
        if out.len() == 1 {
            out[0].0 = "measured".to_string();
        }
        out
    }

    /// Whether any step is a chat run (its throughput is the chat score).
    pub fn is_chat(&self) -> bool {
        self.steps
            .iter()
            .any(|s| s.doc.as_ref().is_ok_and(|d| d.mode == Mode::Chat))
    }
}

impl Step {
    /// The verdict of the threshold the step stopped on (`--abort-on-fail`), if it stopped on one.
    pub fn stopped(&self) -> Option<Verdict> {
        let a = self.doc.as_ref().ok()?.shape.aborted.as_ref()?;
        Some(Verdict {
            threshold: a.threshold.clone(),
            step: self.meta.id.clone(),
            value: Some(a.measured),
            unit: Threshold::parse(&a.threshold).map_or("", |t| t.unit()),
            pass: false,
            stopped: Some(Stopped {
                at_s: a.at_s,
                window_s: a.window_s,
                calls: a.calls,
            }),
        })
    }

    /// The step's value of `metric` ([`Metric::of`] its results document); None without a document.
    pub fn value(&self, metric: Metric) -> Option<f64> {
        metric.of(self.doc.as_ref().ok()?)
    }

    pub fn operation(&self) -> Option<String> {
        Some(self.meta.operation.clone())
            .filter(|o| !o.is_empty())
            .or_else(|| self.doc.as_ref().ok().map(|d| d.params.operation.clone()))
    }

    /// Total throughput: the chat score in chat mode, successful calls per second otherwise.
    pub fn throughput(&self) -> Option<f64> {
        self.value(Metric::ThroughputPerS)
    }

    pub fn per_client(&self) -> Option<f64> {
        self.value(Metric::PerClientPerS)
    }

    /// Corrected latency summary (µs); `None` when nothing was measured.
    pub fn latency(&self) -> Option<&LatencySummary> {
        Some(&self.doc.as_ref().ok()?.latency_us.corrected).filter(|l| l.count > 0)
    }

    pub fn uncorrected(&self) -> Option<&LatencySummary> {
        self.doc
            .as_ref()
            .ok()?
            .latency_us
            .uncorrected
            .as_ref()
            .filter(|l| l.count > 0)
    }

    /// Decoded histograms `(corrected, uncorrected)`; a document without them yields `None`s.
    pub fn histograms(&self) -> anyhow::Result<HistogramPair> {
        let Ok(d) = &self.doc else {
            return Ok((None, None));
        };
        let dec = |s: Option<&str>| {
            s.filter(|s| !s.trim().is_empty())
                .map(bench_proto::results::decode_histogram)
                .transpose()
                .with_context(|| format!("step {}: histogram", self.meta.id))
        };
        Ok((
            dec(Some(&d.histograms.corrected))?,
            dec(d.histograms.uncorrected.as_deref())?,
        ))
    }

    pub fn samples(&self) -> &[SystemSample] {
        let system = self.doc.as_ref().ok().and_then(|d| d.system.as_ref());
        system.map_or(&[], |s| s.samples.as_slice())
    }

    /// The scored chat runs' rates (VolanoMark drops the first run), for uncertainty.
    pub fn chat_run_scores(&self) -> Vec<f64> {
        let Some(chat) = self.doc.as_ref().ok().and_then(|d| d.chat.as_ref()) else {
            return vec![];
        };
        chat.runs
            .iter()
            .filter(|r| chat.scored_runs.contains(&r.run))
            .map(|r| r.msg_per_s)
            .collect()
    }
}

/// Result directories named by `path`: itself if it holds `run.json`, else its subdirectories that do.
pub fn run_dirs(path: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if path.join("run.json").is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut dirs: Vec<PathBuf> = fs::read_dir(path)
        .with_context(|| format!("reading {}", path.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("run.json").is_file())
        .collect();
    dirs.sort();
    anyhow::ensure!(
        !dirs.is_empty(),
        "{} is not a results directory (no run.json in it or its subdirectories)",
        path.display()
    );
    Ok(dirs)
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// The record beside a step's figures (None: no document, or one without a record).
pub(crate) fn read_record(path: &Path) -> Option<RunRecord> {
    RunRecord::from_json(&fs::read(path).ok()?).ok()
}

/// Reads bench-client's results document for one step, or says why there is none.
pub(crate) fn read_doc(path: &Path) -> StepDoc {
    if !path.exists() {
        return Err(format!("no results document ({} missing)", path.display()));
    }
    let doc: ResultsDoc = read_json(path).map_err(|e| format!("{e:#}"))?;
    if doc.schema != SCHEMA {
        return Err(format!(
            "{}: unknown schema {:?}",
            path.display(),
            doc.schema
        ));
    }
    Ok(doc)
}

/// Flattens JSON into `a.b[0].c = value` rows; arrays of scalars become one row, one item per line.
pub fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    use serde_json::Value;
    let key = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                flatten(&key(k), v, out);
            }
        }
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            out.push((
                prefix.to_string(),
                items.iter().map(scalar).collect::<Vec<_>>().join("\n"),
            ));
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), item, out);
            }
        }
        other => out.push((prefix.to_string(), scalar(other))),
    }
}

/// A JSON scalar as text: strings bare, null as a dash.
pub fn scalar(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "—".into(),
        other => other.to_string(),
    }
}
