//! Reading one results directory (`run.json`, `provenance.json`, `steps/*.json`) for reports and comparisons.
//!
//! Readers are tolerant (no `deny_unknown_fields`, defaults for absent fields): a report must
//! still render, with the gaps stated, for an interrupted run or one written by an older wsbench.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use hdrhistogram::Histogram;
use serde::Deserialize;

/// `run.json`, as written by `cargo xtask run`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Manifest {
    pub(crate) scenario: String,
    pub(crate) description: String,
    pub(crate) seed: Option<serde_json::Value>,
    pub(crate) scenario_sha256: Option<String>,
    pub(crate) quick: bool,
    pub(crate) steps: Vec<StepMeta>,
    pub(crate) published: Vec<Published>,
}

/// One step of `run.json`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct StepMeta {
    pub(crate) id: String,
    pub(crate) label: String,
    pub(crate) clients: Option<u64>,
    pub(crate) rate: Option<f64>,
    pub(crate) workers: Option<u64>,
    pub(crate) operation: Option<String>,
    pub(crate) result: String,
}

/// A published figure from a seed document, to draw as a reference.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Published {
    pub(crate) metric: String,
    pub(crate) value: f64,
    pub(crate) unit: String,
    pub(crate) clients: Option<u64>,
    pub(crate) rate: Option<f64>,
    pub(crate) workers: Option<u64>,
    pub(crate) label: String,
    pub(crate) source: String,
}

/// The parts of a `wsbench.results/v1` document that reports use.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ResultsView {
    pub(crate) schema: String,
    pub(crate) partial: bool,
    pub(crate) label: String,
    pub(crate) started_at: String,
    pub(crate) mode: String,
    pub(crate) params: Params,
    pub(crate) elapsed_s: f64,
    pub(crate) counts: Counts,
    pub(crate) throughput: Throughput,
    pub(crate) latency_us: LatencyPair,
    pub(crate) histograms: HistogramPair,
    pub(crate) client: Option<ClientUsage>,
    pub(crate) system: Option<System>,
    pub(crate) chat: Option<Chat>,
    pub(crate) warnings: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Params {
    pub(crate) operation: Option<String>,
    pub(crate) clients: Option<u64>,
    pub(crate) rate: Option<f64>,
    pub(crate) duration_s: Option<f64>,
    pub(crate) warmup_s: Option<f64>,
    pub(crate) message_size: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Counts {
    pub(crate) ok: u64,
    pub(crate) errors_total: u64,
    pub(crate) errors: BTreeMap<String, u64>,
    pub(crate) validated: u64,
    pub(crate) bytes_sent: u64,
    pub(crate) bytes_received: u64,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Throughput {
    pub(crate) total_per_s: f64,
    pub(crate) per_client_per_s: f64,
    pub(crate) sent_mb_per_s: f64,
    pub(crate) received_mb_per_s: f64,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct LatencyPair {
    pub(crate) corrected: Option<LatencySummary>,
    pub(crate) uncorrected: Option<LatencySummary>,
}

/// Latency summary in microseconds.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct LatencySummary {
    pub(crate) count: u64,
    pub(crate) min: f64,
    pub(crate) mean: f64,
    pub(crate) stdev: f64,
    pub(crate) max: f64,
    pub(crate) p50: f64,
    pub(crate) p75: f64,
    pub(crate) p90: f64,
    pub(crate) p99: f64,
    pub(crate) p99_9: f64,
    pub(crate) p99_99: f64,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct HistogramPair {
    pub(crate) corrected: Option<String>,
    pub(crate) uncorrected: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ClientUsage {
    pub(crate) cpu_user_s: Option<f64>,
    pub(crate) cpu_sys_s: Option<f64>,
    pub(crate) cpu_utilisation: Option<f64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct System {
    pub(crate) samples: Vec<Sample>,
}

/// One `/proc` sample taken by bench-client's `--monitor-pid`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Sample {
    pub(crate) t_s: f64,
    pub(crate) user_pct: f64,
    pub(crate) sys_pct: f64,
    pub(crate) idle_pct: f64,
    pub(crate) server_rss_kb: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Chat {
    pub(crate) score_msg_per_s: f64,
    pub(crate) runs: Vec<serde_json::Value>,
    pub(crate) scored_runs: Vec<usize>,
}

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
    pub(crate) doc: Result<ResultsView, String>,
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
        Ok(Run { dir: dir.to_path_buf(), manifest, provenance, steps })
    }

    /// The run's name for people: `<scenario> <timestamp dir>`.
    pub(crate) fn title(&self) -> String {
        let stamp = self.dir.file_name().map(|s| s.to_string_lossy()).unwrap_or_default();
        format!("{} {stamp}", self.manifest.scenario)
    }

    /// The first of clients, rate, workers that takes more than one value across steps.
    pub(crate) fn axis(&self) -> Axis {
        let varies = |axis: Axis| {
            let mut xs: Vec<f64> =
                self.steps.iter().enumerate().filter_map(|(i, s)| axis.value(i, &s.meta)).collect();
            xs.sort_by(f64::total_cmp);
            xs.dedup();
            xs.len() > 1
        };
        [Axis::Clients, Axis::Rate, Axis::Workers].into_iter().find(|&a| varies(a)).unwrap_or(Axis::Step)
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
        self.steps.iter().any(|s| s.doc.as_ref().is_ok_and(|d| d.mode == "chat"))
    }
}

impl Step {
    pub(crate) fn operation(&self) -> Option<String> {
        self.meta
            .operation
            .clone()
            .or_else(|| self.doc.as_ref().ok().and_then(|d| d.params.operation.clone()))
    }

    /// Total throughput: the chat score in chat mode, successful calls per second otherwise.
    pub(crate) fn throughput(&self) -> Option<f64> {
        let d = self.doc.as_ref().ok()?;
        match &d.chat {
            Some(chat) if d.mode == "chat" => Some(chat.score_msg_per_s),
            _ => Some(d.throughput.total_per_s),
        }
    }

    pub(crate) fn per_client(&self) -> Option<f64> {
        self.doc.as_ref().ok().map(|d| d.throughput.per_client_per_s)
    }

    /// XML megabytes per second, sent plus received.
    pub(crate) fn xml_mb_per_s(&self) -> Option<f64> {
        self.doc.as_ref().ok().map(|d| d.throughput.sent_mb_per_s + d.throughput.received_mb_per_s)
    }

    /// Corrected latency summary (µs).
    pub(crate) fn latency(&self) -> Option<&LatencySummary> {
        self.doc.as_ref().ok()?.latency_us.corrected.as_ref()
    }

    pub(crate) fn uncorrected(&self) -> Option<&LatencySummary> {
        self.doc.as_ref().ok()?.latency_us.uncorrected.as_ref()
    }

    /// Decoded histograms `(corrected, uncorrected)`; a document without them yields `None`s.
    pub(crate) fn histograms(&self) -> anyhow::Result<(Option<Histogram<u64>>, Option<Histogram<u64>>)> {
        let Ok(d) = &self.doc else { return Ok((None, None)) };
        let dec = |s: &Option<String>| s.as_deref().map(decode_histogram).transpose();
        let what = || format!("step {}: histogram", self.meta.id);
        Ok((
            dec(&d.histograms.corrected).with_context(what)?,
            dec(&d.histograms.uncorrected).with_context(what)?,
        ))
    }

    pub(crate) fn samples(&self) -> &[Sample] {
        match &self.doc {
            Ok(ResultsView { system: Some(s), .. }) => &s.samples,
            _ => &[],
        }
    }

    /// Per-run chat scores, when the chat document lists several runs (for uncertainty).
    pub(crate) fn chat_run_scores(&self) -> Vec<f64> {
        let Some(chat) = self.doc.as_ref().ok().and_then(|d| d.chat.as_ref()) else { return vec![] };
        let score = |v: &serde_json::Value| {
            v.as_f64().or_else(|| {
                ["score_msg_per_s", "msg_per_s", "throughput_msg_per_s"]
                    .iter()
                    .find_map(|k| v.get(k).and_then(serde_json::Value::as_f64))
            })
        };
        let all: Vec<Option<f64>> = chat.runs.iter().map(score).collect();
        let scored: Vec<f64> = if chat.scored_runs.is_empty() {
            all.iter().flatten().copied().collect()
        } else {
            chat.scored_runs.iter().filter_map(|&i| all.get(i).copied().flatten()).collect()
        };
        scored
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

fn load_doc(path: &Path) -> Result<ResultsView, String> {
    if !path.exists() {
        return Err(format!("no results document ({} missing)", path.display()));
    }
    let doc: ResultsView = read_json(path).map_err(|e| format!("{e:#}"))?;
    if !doc.schema.starts_with("wsbench.results/v1") {
        return Err(format!("{}: unknown schema {:?}", path.display(), doc.schema));
    }
    Ok(doc)
}

/// Decodes a V2-compressed, base64 HdrHistogram.
pub(crate) fn decode_histogram(s: &str) -> anyhow::Result<Histogram<u64>> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD.decode(s.trim()).context("base64")?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| anyhow::anyhow!("HdrHistogram V2: {e:?}"))
}
