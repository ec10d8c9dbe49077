//! `cargo xtask test`'s kill -9 step (issue 28, item 1): bench-client killed mid-step in a short run leaves a
//! results document covering at least the time it measured minus one interval, the step is marked cut short,
//! and `run --resume` completes the run (the cut-short document set aside, the step measured again).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{ensure, Context as _, Result};
use bench_proto::results::{ResultsDoc, RunRecord};
use xshell::Shell;

use wsbench_harness::pipeline::RunOptions;
use wsbench_harness::rundoc::Status;
use wsbench_tools::process::{find_by_arg, kill9};

/// The kill lands this far into the measured interval: mid-interval (the quick interval is 1 s), so the
/// last checkpoint is up to an interval old, the case the guarantee is about.
const KILL_AT: Duration = Duration::from_millis(3_500);
/// The quick interval.
const INTERVAL_S: f64 = 1.0;

fn options(out: &Path, resume: Option<PathBuf>) -> RunOptions {
    RunOptions {
        quick: true,
        // Short: the whole step (connections, 1 s of warm-up, 6 s measured) twice, killed once.
        sets: vec!["duration=6s".to_owned(), "warmup=1s".to_owned()],
        resume,
        ..RunOptions::new("cxf-echo-complex", out)
    }
}

/// The step's document as it stands, with its record (None until it exists and parses whole).
fn read(path: &Path) -> Option<(ResultsDoc, RunRecord)> {
    let text = std::fs::read(path).ok()?;
    Some((
        serde_json::from_slice(&text).ok()?,
        RunRecord::from_json(&text).ok()?,
    ))
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// Waits for the first checkpoint of the run's only step, then kills its bench-client `KILL_AT` into the
/// measured interval; the seconds it had measured when killed.
fn kill_mid_step(out: &Path, deadline: Instant) -> Result<f64> {
    loop {
        ensure!(
            Instant::now() < deadline,
            "no checkpoint of the step appeared"
        );
        let doc = walk_json(out).and_then(|p| Some((read(&p)?, p)));
        if let Some(((_, record), path)) = doc {
            let t0 = record
                .timeline
                .context("a checkpoint without a timeline")?
                .start_unix_us;
            let pid = find_by_arg(&path.display().to_string())
                .context("the step's bench-client was not found")?;
            while now_us() < t0 + KILL_AT.as_micros() as u64 {
                std::thread::sleep(Duration::from_millis(5));
            }
            kill9(pid)?;
            return Ok((now_us() - t0) as f64 / 1e6);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `<out>/cxf-echo-complex/<time>/steps/*.json` once there is one.
fn walk_json(out: &Path) -> Option<PathBuf> {
    let scenario = out.join("cxf-echo-complex");
    let run = std::fs::read_dir(scenario).ok()?.flatten().next()?.path();
    let steps = std::fs::read_dir(run.join("steps")).ok()?;
    steps
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
}

/// The step: a run whose client is killed mid-step, judged, then resumed to completion.
pub(crate) fn kill_client(sh: &Shell) -> Result<()> {
    let started = Instant::now();
    let tmp = sh.create_temp_dir()?;
    let out = tmp.path().to_path_buf();
    // The run on a thread of its own (its own Shell, at the same root); the kill from this one.
    let root = sh.current_dir();
    let run_out = out.clone();
    let run = std::thread::spawn(move || {
        let sh = Shell::new()?;
        sh.change_dir(root);
        crate::execute::execute(&sh, &options(&run_out, None))
    });
    // The release build comes first and may take minutes on a fresh checkout.
    let killed_at = kill_mid_step(&out, Instant::now() + Duration::from_secs(900));
    let outcome = run
        .join()
        .map_err(|_| anyhow::anyhow!("the run's thread panicked"))??;
    let measured = killed_at?;
    let step = &outcome.run.steps[0];
    ensure!(
        step.status == Status::CutShort,
        "a client killed mid-step: the step is {:?}, not cut short",
        step.status
    );
    let (doc, _) = read(&outcome.dir.join(&step.result)).context("no document was left")?;
    ensure!(
        doc.partial && doc.elapsed_s >= measured - INTERVAL_S && doc.counts.ok > 0,
        "killed at {measured:.2} s measured, the document covers {:.2} s (partial: {})",
        doc.elapsed_s,
        doc.partial
    );
    println!(
        "kill -9 of bench-client at {measured:.2} s measured: {:.2} s kept ({} calls); step cut short",
        doc.elapsed_s, doc.counts.ok
    );
    let resumed = crate::execute::execute(sh, &options(&out, Some(outcome.dir.clone())))?;
    let step = &resumed.run.steps[0];
    ensure!(
        step.status == Status::Ok && resumed.dir == outcome.dir,
        "--resume: the step is {:?} in {}",
        step.status,
        resumed.dir.display()
    );
    let set_aside = outcome
        .dir
        .join(step.result.replace(".json", ".cut-short.json"));
    ensure!(
        set_aside.is_file(),
        "--resume did not keep the cut-short document as {}",
        set_aside.display()
    );
    println!(
        "--resume completed the run: step {} measured again; kill test in {:.1} s",
        step.id,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
