//! `bench-client chat`: flags → [`ChatLoad`] → [`chat::verify`] (two users, a message each way: a server
//! that fails is not measured) → [`chat::run`] (SIGINT/SIGTERM stop it early) → summary on stdout, `--json`
//! → exit status.

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
    // Verified before measured: a server that fails the check is not loaded.
    match rt.block_on(chat::verify(&load)) {
        Ok(v) if args.verify_only => {
            println!(
                "verified chat at {}: two users entered Room{}, exchanged a message each way and left ({:.1} ms)",
                load.addr,
                load.start,
                v.took.as_secs_f64() * 1e3
            );
            return Ok(ExitCode::SUCCESS);
        }
        Ok(_) => {}
        Err(e) => {
            eprintln!(
                "bench-client: verification failed at {}: chat: {e}",
                load.addr
            );
            return Ok(ExitCode::from(1));
        }
    }
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
    // A run that measured nothing fails even with --allow-errors, as `run` does.
    if report.measured().is_empty() {
        eprintln!(
            "bench-client chat: nothing measured: no run got as far as its first message ({} errors)",
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
