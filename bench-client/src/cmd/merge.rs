//! `bench-client merge A.json B.json … --json OUT.json`: exact merge of results documents (see
//! `bench_proto::results::merge`), written atomically, with the same summary a run prints.

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
    report::json::write_atomic(&args.json, &merged)?;
    println!(
        "merged {} results documents into {}",
        docs.len(),
        args.json.display()
    );
    print!("{}", report::human::render(&merged, &[]));
    if args.format == Format::Cxf {
        println!();
        print!("{}", report::cxf::render(&merged));
    }
    Ok(ExitCode::SUCCESS)
}
