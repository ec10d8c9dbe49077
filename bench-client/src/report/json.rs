//! The results document of a run (`--json`), and writing it atomically (temp file, fsync, rename), so a
//! reader never sees half a document and an interrupted write leaves the previous file intact.

use std::fs;
use std::io::Write as _;
use std::path::Path;

use anyhow::Context as _;
use bench_proto::results::{
    AbortRule, Aborted, ClientStats, ErrorCounts, MixWeight, OperationResults, Params, Part, Phase,
    Phases, ResultsDoc, RunRecord, RunState, ShapeParams, ShapeResults, StageParam, StageResults,
    Tool, WithRecord, SCHEMA,
};
use bench_proto::shape::Arrivals;

use super::RunFacts;
use crate::config::{RunConfig, Stop};
use crate::engine::RunStats;
use crate::latency::latency_histogram;

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
        partial: facts.state != RunState::Complete,
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
        shape: shape_results(cfg, stats, facts.aborted.clone()),
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
        operation: match &cfg.shape.mix {
            Some(m) => m.to_string(),
            None => cfg.operation.name().to_owned(),
        },
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
        shape: shape_params(cfg),
    }
}

/// What the run's shape asked: the mix, its seed, the arrivals of an open loop, the stages, the abort rule.
fn shape_params(cfg: &RunConfig) -> ShapeParams {
    let sh = &cfg.shape;
    let drawn = sh.mix.is_some() || (cfg.open_loop() && sh.arrivals == Arrivals::Poisson);
    ShapeParams {
        mix: sh
            .mix
            .iter()
            .flat_map(|m| &m.entries)
            .map(|(op, w)| MixWeight {
                operation: op.name().to_owned(),
                weight: *w,
            })
            .collect(),
        seed: drawn.then_some(sh.seed),
        arrivals: cfg.open_loop().then_some(sh.arrivals),
        stages: sh
            .stages
            .iter()
            .flat_map(|s| s.list())
            .map(|s| StageParam {
                for_s: s.duration.as_secs_f64(),
                ramped: s.ramped,
                target: s.target,
            })
            .collect(),
        abort: sh.abort.as_ref().map(|a| AbortRule {
            thresholds: sh.thresholds.iter().map(|t| t.text.clone()).collect(),
            grace_s: a.grace.as_secs_f64(),
            window_s: a.window.as_secs_f64(),
        }),
    }
}

/// What the run's shape measured: per operation of a mix, per stage, the phases, an early stop.
fn shape_results(cfg: &RunConfig, stats: &RunStats, aborted: Option<Aborted>) -> ShapeResults {
    let operations = match &cfg.shape.mix {
        Some(m) => m
            .shares()
            .into_iter()
            .zip(&stats.ops)
            .map(|((op, share), t)| OperationResults {
                operation: op.name().to_owned(),
                share,
                calls: Part::new(t.ok, ErrorCounts::from_array(&t.errors), &t.corrected),
                bytes_sent: t.bytes_sent,
                bytes_received: t.bytes_received,
            })
            .collect(),
        None => Vec::new(),
    };
    let stages = match &cfg.shape.stages {
        Some(s) => s
            .spans()
            .into_iter()
            .zip(&stats.stages)
            .enumerate()
            .map(|(i, (span, t))| StageResults {
                stage: i as u32 + 1,
                ramped: s.ramped(),
                from_s: span.from_s,
                to_s: span.to_s,
                start: span.start,
                end: span.end,
                calls: Part::new(t.ok, ErrorCounts::from_array(&t.errors), &t.corrected),
            })
            .collect(),
        None => Vec::new(),
    };
    let connect = stats
        .connects
        .setup
        .clone()
        .unwrap_or_else(latency_histogram);
    ShapeResults {
        operations,
        stages,
        phases: Some(Phases {
            connect: Phase::of(&connect),
            ttfb: Phase::of(&stats.ttfb),
            transfer: Phase::of(&stats.transfer),
        }),
        aborted,
    }
}

/// Whether `--json` names standard output (`-`).
pub(crate) fn is_stdout(path: Option<&Path>) -> bool {
    path.is_some_and(|p| p.as_os_str() == "-")
}

/// A results document that could not be written (disk full, its folder gone): the run stops on it, and
/// `bench-client` exits with status 3.
#[derive(Debug, thiserror::Error)]
#[error("the results could not be written: {0:#}")]
pub struct WriteError(pub anyhow::Error);

/// Writes `doc` (and its record, if any) to `path` atomically, or to standard output if `path` is `-`.
pub fn write(path: &Path, doc: &ResultsDoc, record: Option<&RunRecord>) -> anyhow::Result<()> {
    let text = serialise(doc, record)?;
    if is_stdout(Some(path)) {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(&text)
            .and_then(|()| out.flush())
            .context("writing the results document to standard output");
    }
    write_atomic(path, &text)
}

/// The document's text: its fields, then its record's, as one JSON object.
pub fn serialise(doc: &ResultsDoc, record: Option<&RunRecord>) -> anyhow::Result<Vec<u8>> {
    let none = RunRecord::default();
    let both = WithRecord {
        doc,
        record: record.unwrap_or(&none),
    };
    let mut text = match record {
        Some(_) => serde_json::to_vec_pretty(&both),
        None => serde_json::to_vec_pretty(doc),
    }
    .context("serialising the results document")?;
    text.push(b'\n');
    Ok(text)
}

/// Writes `text` to `path` via a temporary file in the same directory, synced, and a rename (the folder
/// synced after it): a reader, a kill or a crash at any moment finds the old document or the new one,
/// whole. On failure the temporary file is removed and the old document stays.
pub(crate) fn write_atomic(path: &Path, text: &[u8]) -> anyhow::Result<()> {
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
        f.write_all(text)?;
        f.sync_all()?;
        fs::rename(&tmp, path)?;
        fs::File::open(dir)?.sync_all()
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        anyhow::Error::new(e).context(format!("writing {}", path.display()))
    })
}

/// Reads a results document and its record (for `merge`).
pub fn read(path: &Path) -> anyhow::Result<(ResultsDoc, RunRecord)> {
    let text = fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let doc = serde_json::from_slice(&text)
        .with_context(|| format!("{} is not a results document", path.display()))?;
    let record = RunRecord::from_json(&text)
        .with_context(|| format!("{}: its run's record", path.display()))?;
    Ok((doc, record))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_keeps_the_previous_document_and_leaves_no_temporary_file() {
        let dir = std::env::temp_dir().join(format!("bench-client-atomic-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.json");
        write_atomic(&path, b"{\"first\":1}\n").unwrap();
        // The temporary file's name taken by a directory: the write fails before the rename.
        let tmp = dir.join(format!(".r.json.{}.tmp", std::process::id()));
        fs::create_dir(&tmp).unwrap();
        let e = write_atomic(&path, b"{\"second\":2}\n").unwrap_err();
        assert!(format!("{e:#}").contains("r.json"), "{e:#}");
        assert_eq!(fs::read(&path).unwrap(), b"{\"first\":1}\n");
        fs::remove_dir(&tmp).unwrap();
        write_atomic(&path, b"{\"second\":2}\n").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"{\"second\":2}\n");
        let names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["r.json"]);
        // A folder that is gone: an error, nothing written.
        fs::remove_dir_all(&dir).unwrap();
        assert!(write_atomic(&path, b"{}").is_err());
        assert!(!dir.exists());
    }
}
