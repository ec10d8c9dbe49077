//! `bench-client run`: flags → [`RunConfig`] → [`measure`] (SIGINT/SIGTERM stop it early; `--json` is
//! checkpointed as it goes) → summary on stdout (stderr with `--json -`), `--json` → exit status (a run that
//! measured nothing fails; one whose results could not be written fails with [`WriteError`]; one that failed a
//! `--threshold`, or stopped on one, exits 4).

use std::process::ExitCode;

use anyhow::Context as _;

use bench_proto::results::ResultsDoc;
use bench_proto::thresholds::Figures;

use crate::config::RunConfig;
use crate::engine::verify;
use crate::flags::{Format, RunArgs};
use crate::measure::measure;
use crate::report;
use crate::report::json::WriteError;
use crate::signals;
use crate::workload::Workload;

pub fn main(args: RunArgs) -> anyhow::Result<ExitCode> {
    let cfg = RunConfig::from_args(args)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    if cfg.verify_only {
        return verify_only(&cfg, &rt);
    }
    let out = rt.block_on(async {
        let stop = signals::stop_on_signals()?;
        measure(cfg.clone(), stop).await
    })?;
    let mut summary = report::human::render(&out.doc, &out.first_errors);
    let thresholds_failed = judge_thresholds(&cfg, &out.doc, &mut summary);
    if cfg.format == Format::Cxf {
        summary.push('\n');
        summary.push_str(&report::cxf::render(&out.doc));
    }
    // `--json -`: the document is standard output, so the summary moves to standard error.
    if report::json::is_stdout(cfg.json.as_deref()) {
        eprint!("{summary}");
    } else {
        print!("{summary}");
    }
    if let Some(e) = out.write_error {
        return Err(e.into());
    }
    if let Some(path) = &cfg.json {
        report::json::write(path, &out.doc, Some(&out.record)).map_err(WriteError)?;
    }
    // A run that measured nothing fails even with --allow-errors: there is no figure to report.
    if let Some(why) = report::warnings::nothing_measured(&out.doc) {
        eprintln!("bench-client: {why}");
        return Ok(ExitCode::from(1));
    }
    if thresholds_failed || out.doc.shape.aborted.is_some() {
        return Ok(ExitCode::from(4));
    }
    let failed = out.doc.counts.errors_total > 0 && !cfg.allow_errors;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `--threshold`: each judged on the whole run, a line each in the summary; whether any failed.
fn judge_thresholds(cfg: &RunConfig, doc: &ResultsDoc, summary: &mut String) -> bool {
    let l = &doc.latency_us.corrected;
    let ms = |us: u64| us as f64 / 1000.0;
    let figures = Figures {
        percentiles_ms: vec![
            (50.0, ms(l.p50)),
            (90.0, ms(l.p90)),
            (99.0, ms(l.p99)),
            (99.9, ms(l.p99_9)),
            (100.0, ms(l.max)),
        ],
        mean_ms: (l.count > 0).then_some(l.mean / 1000.0),
        ok: doc.counts.ok,
        errors: doc.counts.errors_total,
        throughput: Some(doc.throughput.total_per_s),
    };
    let mut failed = false;
    for t in &cfg.shape.thresholds {
        let verdict = match t.value(&figures) {
            Some(v) if t.holds(v) => format!("{t}: ok ({v:.3} {})", t.unit()),
            Some(v) => {
                failed = true;
                format!("{t}: FAILED ({v:.3} {})", t.unit())
            }
            None => {
                failed = true;
                format!("{t}: FAILED (not measured)")
            }
        };
        summary.push_str(&format!("  Threshold      {verdict}\n"));
    }
    failed
}

/// `--verify-only`: every request variant once, each answer checked in full; 1 when one is wrong.
fn verify_only(cfg: &RunConfig, rt: &tokio::runtime::Runtime) -> anyhow::Result<ExitCode> {
    let workload = Workload::build(cfg)?;
    let verdicts = rt.block_on(verify::verify(cfg, &workload))?;
    let mut wrong = 0;
    for v in &verdicts {
        match &v.outcome {
            Ok(what) => println!("verified {} at {}: {what}", v.call, cfg.target.url),
            Err(why) => {
                wrong += 1;
                eprintln!(
                    "bench-client: verification failed at {}: operation {}: {why}",
                    cfg.target.url, v.call
                );
            }
        }
    }
    Ok(if wrong == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
