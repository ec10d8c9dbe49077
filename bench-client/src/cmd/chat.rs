//! `bench-client chat`: flags → [`ChatLoad`] → [`chat::run`] (SIGINT/SIGTERM stop it early) → summary on
//! stdout, `--json` → exit status.

use std::process::ExitCode;

use anyhow::Context as _;

use crate::chat::{self, ChatLoad};
use crate::flags::ChatArgs;
use crate::report;
use crate::signals;

pub fn main(args: ChatArgs) -> anyhow::Result<ExitCode> {
    let load = ChatLoad::from_args(&args)?;
    let threads = args.threads();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads as usize)
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let report = rt.block_on(async {
        let stop = signals::stop_on_signals()?;
        anyhow::Ok(
            chat::run_monitored(&load, threads, args.label.clone(), args.monitor_pid, stop).await,
        )
    })?;
    let doc = report.doc();
    print!("{}", report.human(&doc));
    if let Some(path) = &args.json {
        report::json::write_atomic(path, &report::json::serialise(&doc, None)?)?;
    }
    // A run with no scored run measured nothing: it fails even with --allow-errors, as `run` does.
    if report.scored().is_empty() {
        eprintln!(
            "bench-client chat: nothing measured: no run completed ({} errors)",
            report.errors_total()
        );
        return Ok(ExitCode::from(1));
    }
    Ok(if report.errors_total() > 0 && !args.allow_errors {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
