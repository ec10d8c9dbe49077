//! `bench-client merge A.json B.json … --json OUT.json`: exact merge of results documents (see
//! `bench_proto::results::merge`), written atomically (or to stdout with `--json -`), with the same summary a run prints.

use std::process::ExitCode;

use crate::flags::{Format, MergeArgs};
use crate::report;

pub fn main(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let docs = args
        .inputs
        .iter()
        .map(|p| report::json::read(p))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let merged = bench_proto::results::merge(&docs)?;
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
    report::json::write(&args.json, &merged, None)?;
    Ok(ExitCode::SUCCESS)
}
