//! `bench-client run`: flags → [`RunConfig`] → [`measure`] (SIGINT/SIGTERM stop it early) → summary on
//! stdout, `--json` → exit status.

use std::process::ExitCode;

use anyhow::Context as _;

use crate::config::RunConfig;
use crate::flags::{Format, RunArgs};
use crate::measure::measure;
use crate::report;
use crate::signals;

pub fn main(args: RunArgs) -> anyhow::Result<ExitCode> {
    let cfg = RunConfig::from_args(args)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let out = rt.block_on(async {
        let stop = signals::stop_on_signals()?;
        measure(cfg.clone(), stop).await
    })?;
    print!("{}", report::human::render(&out.doc, &out.first_errors));
    if cfg.format == Format::Cxf {
        println!();
        print!("{}", report::cxf::render(&out.doc));
    }
    if let Some(path) = &cfg.json {
        report::json::write_atomic(path, &out.doc)?;
    }
    let failed = out.doc.counts.errors_total > 0 && !cfg.allow_errors;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
