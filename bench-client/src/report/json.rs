//! The results document of a run (`--json`), and writing it atomically (temp file + rename), so a reader
//! never sees half a document and an interrupted write leaves the previous file intact.

use std::fs;
use std::io::Write as _;
use std::path::Path;

use anyhow::Context as _;
use bench_proto::results::{ClientStats, Params, ResultsDoc, Tool, SCHEMA};

use super::RunFacts;
use crate::config::{RunConfig, Stop};
use crate::engine::RunStats;

pub fn build(
    cfg: &RunConfig,
    stats: &RunStats,
    facts: &RunFacts,
    warnings: Vec<String>,
) -> ResultsDoc {
    let elapsed_s = facts.elapsed.as_secs_f64();
    let capacity = elapsed_s * cfg.threads as f64;
    let mut doc = ResultsDoc {
        schema: SCHEMA.to_owned(),
        partial: facts.partial,
        tool: tool(),
        label: cfg.label.clone(),
        started_at: facts.started_at.clone(),
        mode: cfg.operation.mode(),
        params: params(cfg),
        elapsed_s,
        counts: stats.counts.clone(),
        throughput: Default::default(),
        latency_us: Default::default(),
        histograms: Default::default(),
        client: ClientStats {
            cpu_user_s: facts.cpu.user_s,
            cpu_sys_s: facts.cpu.sys_s,
            cpu_utilisation: if capacity > 0.0 {
                (facts.cpu.user_s + facts.cpu.sys_s) / capacity
            } else {
                0.0
            },
            max_schedule_lag_us: stats.max_lag_us,
        },
        system: facts.system.clone(),
        chat: None,
        warnings,
    };
    doc.set_latency(&stats.corrected, stats.uncorrected.as_ref());
    doc.recompute_throughput();
    doc
}

pub fn tool() -> Tool {
    Tool {
        name: "bench-client".to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
    }
}

fn params(cfg: &RunConfig) -> Params {
    Params {
        url: cfg.target.url.clone(),
        operation: cfg.operation.name().to_owned(),
        clients: cfg.clients,
        threads: cfg.threads,
        rate: cfg.rate,
        duration_s: cfg.duration().map(|d| d.as_secs_f64()),
        requests: match cfg.stop {
            Stop::Requests(n) => Some(n),
            Stop::Duration(_) => None,
        },
        warmup_s: cfg.warmup.as_secs_f64(),
        think_time_s: cfg.think_time.as_secs_f64(),
        keepalive: cfg.keepalive,
        packet_size: cfg.packet_size,
        message_size: cfg.message_size,
        timeout_s: cfg.timeout.as_secs_f64(),
        connect_timeout_s: cfg.connect_timeout.as_secs_f64(),
        validate_first: cfg.validate_first,
        validate_every: cfg.validate_every,
        chat: None,
    }
}

/// Whether `--json` names standard output (`-`).
pub fn is_stdout(path: Option<&Path>) -> bool {
    path.is_some_and(|p| p.as_os_str() == "-")
}

/// Writes `doc` to `path` atomically, or to standard output if `path` is `-`.
pub fn write(path: &Path, doc: &ResultsDoc) -> anyhow::Result<()> {
    if is_stdout(Some(path)) {
        let mut text =
            serde_json::to_vec_pretty(doc).context("serialising the results document")?;
        text.push(b'\n');
        let mut out = std::io::stdout().lock();
        return out
            .write_all(&text)
            .and_then(|()| out.flush())
            .context("writing the results document to standard output");
    }
    write_atomic(path, doc)
}

/// Writes `doc` to `path` via a temporary file in the same directory and a rename.
pub fn write_atomic(path: &Path, doc: &ResultsDoc) -> anyhow::Result<()> {
    let mut text = serde_json::to_vec_pretty(doc).context("serialising the results document")?;
    text.push(b'\n');
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .with_context(|| format!("{} is not a file name", path.display()))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let write = || -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(&text)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        anyhow::Error::new(e).context(format!("writing {}", path.display()))
    })
}

/// Reads a results document (for `merge`).
pub fn read(path: &Path) -> anyhow::Result<ResultsDoc> {
    let text = fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_slice(&text)
        .with_context(|| format!("{} is not a results document", path.display()))
}
