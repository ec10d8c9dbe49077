//! `bench-client merge A.json B.json … --json OUT.json`: exact merge of results documents (see
//! `bench_proto::results::merge`), written atomically (or to stdout with `--json -`), with the same summary a run prints;
//! the server's CPU and where it was sampled, when the parts sampled it, merged by `merge_records`.

use std::process::ExitCode;

use anyhow::Context as _;
use bench_proto::results::{RunRecord, Timeline};

use crate::flags::{Format, MergeArgs};
use crate::report;

pub fn main(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let (docs, records): (Vec<_>, Vec<_>) = args
        .inputs
        .iter()
        .map(|p| report::json::read(p))
        .collect::<anyhow::Result<Vec<_>>>()?
        .into_iter()
        .unzip();
    let merged = bench_proto::results::merge(&docs)?;
    // The timelines, and the server's figures (CPU per call) when the parts sampled it.
    let servers = bench_proto::results::merge_records(&records);
    let record = match merged_timeline(&args.inputs)? {
        Some(mut r) => {
            r.monitored_process = servers.monitored_process;
            r.sampling = servers.sampling;
            Some(r)
        }
        None => servers.monitored_process.is_some().then_some(servers),
    };
    let mut summary = format!(
        "merged {} results documents into {}\n",
        docs.len(),
        args.json.display()
    );
    summary.push_str(&report::human::render(&merged, &[]));
    if args.format == Format::Cxf {
        summary.push('\n');
        summary.push_str(&report::cxf::render(&merged));
    }
    // `--json -`: the document is standard output, so the summary moves to standard error.
    if report::json::is_stdout(Some(&args.json)) {
        eprint!("{summary}");
    } else {
        print!("{summary}");
    }
    report::json::write(&args.json, &merged, record.as_ref())?;
    Ok(ExitCode::SUCCESS)
}

/// The inputs' timelines added second by second (a staged step's charts and breakdown need them), when
/// every input has one; the rest of a run's record (its state, connections, memory) describes one process
/// and is left out.
fn merged_timeline(inputs: &[std::path::PathBuf]) -> anyhow::Result<Option<RunRecord>> {
    let mut timelines = Vec::new();
    for p in inputs {
        let text = std::fs::read(p).with_context(|| format!("reading {}", p.display()))?;
        let record = RunRecord::from_json(&text)
            .with_context(|| format!("{}: its run record", p.display()))?;
        match record.timeline {
            Some(t) => timelines.push(t),
            None => return Ok(None),
        }
    }
    let parts: Vec<&Timeline> = timelines.iter().collect();
    let timeline = Timeline::merge(&parts).context("merging the timelines")?;
    Ok(Some(RunRecord {
        timeline: Some(timeline),
        ..RunRecord::default()
    }))
}
