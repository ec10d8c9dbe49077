//! Reading one results directory (`run.json`, `provenance.json`, `steps/*.json`) for reports and comparisons.
//!
//! Readers are tolerant (no `deny_unknown_fields`, defaults for absent fields): a report must
//! still render, with the gaps stated, for an interrupted run or one written by an older wsbench.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use bench_proto::results::{LatencySummary, Mode, ResultsDoc, SystemSample, SCHEMA};
use hdrhistogram::Histogram;
use serde::Deserialize;

/// `run.json`, as written by `cargo xtask run`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Manifest {
    pub(crate) scenario: String,
    pub(crate) description: String,
    pub(crate) reproduces: String,
    pub(crate) seed: Option<serde_json::Value>,
    pub(crate) scenario_sha256: Option<String>,
    pub(crate) quick: bool,
    pub(crate) sets: Vec<String>,
    pub(crate) notes: Vec<String>,
    pub(crate) status: Option<String>,
    pub(crate) problems: Vec<String>,
    pub(crate) steps: Vec<StepMeta>,
    pub(crate) published: Vec<Published>,
    /// The client ran under an emulator (`--client-arch`): never compared with native runs.
    pub(crate) emulated: bool,
}

/// One step of `run.json`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct StepMeta {
    pub(crate) id: String,
    pub(crate) label: String,
    pub(crate) name: Option<String>,
    pub(crate) clients: Option<u64>,
    pub(crate) rate: Option<f64>,
    pub(crate) workers: Option<u64>,
    pub(crate) operation: Option<String>,
    pub(crate) result: String,
    /// `ok`, `errors`, `failed`, `not_run` (absent in older run.json).
    pub(crate) status: Option<String>,
}

/// A published figure from a seed document, to draw as a reference.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Published {
    pub(crate) metric: String,
    pub(crate) value: f64,
    pub(crate) unit: String,
    pub(crate) approx: bool,
    pub(crate) clients: Option<u64>,
    pub(crate) rate: Option<f64>,
    pub(crate) workers: Option<u64>,
    pub(crate) operation: Option<String>,
    /// Step name selector.
    pub(crate) step: Option<String>,
    pub(crate) label: String,
    pub(crate) conditions: String,
    pub(crate) source: String,
}

impl Published {
    /// Whether the figure is compared with this step: every selector it gives must match.
    pub(crate) fn matches(&self, step: &StepMeta) -> bool {
        self.clients.map_or(true, |c| step.clients == Some(c))
            && self.workers.map_or(true, |w| step.workers == Some(w))
            && self
                .operation
                .as_ref()
                .map_or(true, |o| step.operation.as_ref() == Some(o))
            && self
                .step
                .as_ref()
                .map_or(true, |n| step.name.as_ref() == Some(n))
    }
}

/// A step's `(corrected, uncorrected)` latency histograms.
pub(crate) type HistogramPair = (Option<Histogram<u64>>, Option<Histogram<u64>>);

/// A results directory, loaded.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) dir: PathBuf,
    pub(crate) manifest: Manifest,
    pub(crate) provenance: Option<serde_json::Value>,
    pub(crate) steps: Vec<Step>,
}

/// One step: what `run.json` asked for and what bench-client measured (if it wrote a document).
#[derive(Debug)]
pub(crate) struct Step {
    pub(crate) meta: StepMeta,
    pub(crate) doc: Result<ResultsDoc, String>,
}

/// What the sweep varies, in order of preference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Axis {
    Clients,
    Rate,
    Workers,
    /// Nothing numeric varies: steps are plotted by position.
    Step,
}

impl Axis {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Axis::Clients => "clients",
            Axis::Rate => "req/s offered",
            Axis::Workers => "server workers",
            Axis::Step => "step",
        }
    }

    /// The step's x, or `None` when the step lacks it.
    pub(crate) fn value(self, index: usize, meta: &StepMeta) -> Option<f64> {
        match self {
            Axis::Clients => meta.clients.map(|c| c as f64),
            Axis::Rate => meta.rate,
            Axis::Workers => meta.workers.map(|w| w as f64),
            Axis::Step => Some(index as f64 + 1.0),
        }
    }

    /// The published figure's x on this axis, if it has one.
    pub(crate) fn published_value(self, p: &Published) -> Option<f64> {
        match self {
            Axis::Clients => p.clients.map(|c| c as f64),
            Axis::Rate => p.rate,
            Axis::Workers => p.workers.map(|w| w as f64),
            Axis::Step => None,
        }
    }
}

impl Run {
    /// Loads `dir`; a missing or unreadable step document is recorded on the step, not an error.
    pub(crate) fn load(dir: &Path) -> anyhow::Result<Run> {
        let manifest_path = dir.join("run.json");
        let manifest: Manifest = read_json(&manifest_path)?;
        let provenance = match dir.join("provenance.json") {
            p if p.exists() => Some(read_json::<serde_json::Value>(&p)?),
            _ => None,
        };
        let steps = manifest
            .steps
            .iter()
            .map(|meta| Step {
                meta: meta.clone(),
                doc: load_doc(&dir.join(&meta.result)),
            })
            .collect();
        Ok(Run {
            dir: dir.to_path_buf(),
            manifest,
            provenance,
            steps,
        })
    }

    /// The run's name for people: `<scenario> <timestamp dir>`.
    pub(crate) fn title(&self) -> String {
        let stamp = self
            .dir
            .file_name()
            .map(|s| s.to_string_lossy())
            .unwrap_or_default();
        format!("{} {stamp}", self.manifest.scenario)
    }

    /// The first of clients, rate, workers that takes more than one value across steps.
    pub(crate) fn axis(&self) -> Axis {
        let varies = |axis: Axis| {
            let mut xs: Vec<f64> = self
                .steps
                .iter()
                .enumerate()
                .filter_map(|(i, s)| axis.value(i, &s.meta))
                .collect();
            xs.sort_by(f64::total_cmp);
            xs.dedup();
            xs.len() > 1
        };
        [Axis::Clients, Axis::Rate, Axis::Workers]
            .into_iter()
            .find(|&a| varies(a))
            .unwrap_or(Axis::Step)
    }

    /// Steps grouped into series (one per operation when operations differ), in step order.
    pub(crate) fn series(&self) -> Vec<(String, Vec<usize>)> {
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
    pub(crate) fn is_chat(&self) -> bool {
        self.steps
            .iter()
            .any(|s| s.doc.as_ref().is_ok_and(|d| d.mode == Mode::Chat))
    }
}

impl Step {
    pub(crate) fn operation(&self) -> Option<String> {
        self.meta
            .operation
            .clone()
            .or_else(|| self.doc.as_ref().ok().map(|d| d.params.operation.clone()))
    }

    /// Total throughput: the chat score in chat mode, successful calls per second otherwise.
    pub(crate) fn throughput(&self) -> Option<f64> {
        let d = self.doc.as_ref().ok()?;
        match &d.chat {
            Some(chat) if d.mode == Mode::Chat => Some(chat.score_msg_per_s),
            _ => Some(d.throughput.total_per_s),
        }
    }

    pub(crate) fn per_client(&self) -> Option<f64> {
        self.doc
            .as_ref()
            .ok()
            .map(|d| d.throughput.per_client_per_s)
    }

    /// XML megabytes per second, sent plus received.
    pub(crate) fn xml_mb_per_s(&self) -> Option<f64> {
        self.doc
            .as_ref()
            .ok()
            .map(|d| d.throughput.sent_mb_per_s + d.throughput.received_mb_per_s)
    }

    /// Corrected latency summary (µs); `None` when nothing was measured.
    pub(crate) fn latency(&self) -> Option<&LatencySummary> {
        Some(&self.doc.as_ref().ok()?.latency_us.corrected).filter(|l| l.count > 0)
    }

    pub(crate) fn uncorrected(&self) -> Option<&LatencySummary> {
        self.doc
            .as_ref()
            .ok()?
            .latency_us
            .uncorrected
            .as_ref()
            .filter(|l| l.count > 0)
    }

    /// Decoded histograms `(corrected, uncorrected)`; a document without them yields `None`s.
    pub(crate) fn histograms(&self) -> anyhow::Result<HistogramPair> {
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

    pub(crate) fn samples(&self) -> &[SystemSample] {
        let system = self.doc.as_ref().ok().and_then(|d| d.system.as_ref());
        system.map_or(&[], |s| s.samples.as_slice())
    }

    /// Mean of a system CPU field over the step's samples.
    pub(crate) fn mean_sample(&self, f: fn(&SystemSample) -> f64) -> Option<f64> {
        let s = self.samples();
        (!s.is_empty()).then(|| s.iter().map(f).sum::<f64>() / s.len() as f64)
    }

    /// The scored chat runs' rates (VolanoMark drops the first run), for uncertainty.
    pub(crate) fn chat_run_scores(&self) -> Vec<f64> {
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
pub(crate) fn run_dirs(path: &Path) -> anyhow::Result<Vec<PathBuf>> {
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

fn load_doc(path: &Path) -> Result<ResultsDoc, String> {
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
pub(crate) fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
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
pub(crate) fn scalar(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "—".into(),
        other => other.to_string(),
    }
}
