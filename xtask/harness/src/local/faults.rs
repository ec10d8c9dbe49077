//! A step's faults done to the local bench-server while its client runs: kill-server (SIGKILL, then the same
//! command line restarted on the same address `for` later) and pause-server (SIGSTOP, SIGCONT `for` later).
//! Times are from the client's t = 0, read from its first checkpoint (`timeline.start_unix_us`), so a fault
//! lands where the scenario put it whatever the connection set-up and warm-up took.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, Result};
use bench_proto::results::RunRecord;
use wsbench_tools::process::{hold, Hold, Running};

use super::process::ServerProcess;
use super::READY_TIMEOUT;
use crate::rundoc::FaultRecord;
use crate::scenario::{FaultKind, FaultSpec};

/// How often the client, the clock and the checkpoint are looked at.
const POLL: Duration = Duration::from_millis(10);

/// The server as a fault sees it: the process, and how to start it again where it was.
pub(super) struct Target<'a> {
    pub(super) server: &'a mut Option<ServerProcess>,
    /// Its command line with the addresses it bound (port 0 replaced by the port it got).
    pub(super) restart: Vec<String>,
    pub(super) log: &'a std::fs::File,
}

/// Does `faults` while `client` runs, then waits for it; the faults as they happened.
pub(super) fn run(
    faults: &[FaultSpec],
    json: &Path,
    client: Running,
    target: &mut Target<'_>,
) -> Result<(std::process::ExitStatus, Vec<FaultRecord>)> {
    let mut client = client;
    let mut done = Vec::new();
    let Some(t0) = measuring_start(json, &mut client)? else {
        return Ok((client.wait()?, done));
    };
    for f in faults {
        let mut record = FaultRecord {
            kind: f.kind.name().to_owned(),
            at_s: f.at.0.as_secs_f64(),
            for_s: f.duration.0.as_secs_f64(),
            ..FaultRecord::default()
        };
        if !wait_until(&mut client, t0 + f.at.0.as_micros() as u64)? {
            break;
        }
        record.began_unix_us = now_us();
        if let Err(e) = begin(f.kind, target) {
            record.problem = Some(format!("{e:#}"));
            done.push(record);
            break;
        }
        // The fault is undone even if the client ended meanwhile: the next step needs its server.
        wait_until(
            &mut client,
            record.began_unix_us + f.duration.0.as_micros() as u64,
        )?;
        match end(f.kind, target) {
            Ok(()) => record.ended_unix_us = Some(now_us()),
            Err(e) => record.problem = Some(format!("{e:#}")),
        }
        let failed = record.problem.is_some();
        done.push(record);
        if failed {
            break;
        }
    }
    Ok((client.wait()?, done))
}

fn begin(kind: FaultKind, t: &mut Target<'_>) -> Result<()> {
    let server = t.server.as_ref().context("no bench-server is running")?;
    match kind {
        FaultKind::PauseServer => hold(server.ready.pid, Hold::Pause),
        FaultKind::KillServer => {
            let server = t.server.take().context("no bench-server is running")?;
            server.kill_now().map(drop)
        }
    }
}

fn end(kind: FaultKind, t: &mut Target<'_>) -> Result<()> {
    match kind {
        FaultKind::PauseServer => {
            let server = t.server.as_ref().context("no bench-server is running")?;
            hold(server.ready.pid, Hold::Resume)
        }
        FaultKind::KillServer => {
            let server = ServerProcess::start(&t.restart, t.log.try_clone()?, READY_TIMEOUT)
                .with_context(|| format!("restarting `{}`", t.restart.join(" ")))?;
            *t.server = Some(server);
            Ok(())
        }
    }
}

/// The client's t = 0 on the UTC clock (µs), from its first checkpoint; None if it exited before measuring.
fn measuring_start(json: &Path, client: &mut Running) -> Result<Option<u64>> {
    loop {
        if let Ok(text) = std::fs::read(json) {
            if let Some(t) = RunRecord::from_json(&text).ok().and_then(|r| r.timeline) {
                return Ok(Some(t.start_unix_us));
            }
        }
        if client.exited()?.is_some() {
            return Ok(None);
        }
        std::thread::sleep(POLL);
    }
}

/// Waits until `deadline` (UTC µs); false when the client exited first.
fn wait_until(client: &mut Running, deadline: u64) -> Result<bool> {
    loop {
        if client.exited()?.is_some() {
            return Ok(false);
        }
        let now = now_us();
        if now >= deadline {
            return Ok(true);
        }
        std::thread::sleep(POLL.min(Duration::from_micros(deadline - now)));
    }
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}
