//! When a step's faults are done, whatever does them: at their times from the client's t = 0, read from its
//! first checkpoint (`timeline.start_unix_us`), so a fault lands where the scenario put it whatever the
//! connection set-up and warm-up took; each undone `for` later, also when the client ended meanwhile.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Result;
use bench_proto::results::RunRecord;

use crate::faults::{FaultSpec, Target};
use crate::rundoc::FaultRecord;

/// How often the client, the clock and the checkpoint are looked at.
const POLL: Duration = Duration::from_millis(10);

/// What a backend's faults are done to, and how it sees its clients.
pub trait Doer {
    /// Its servers as its faults reach them (the fault's kind says what is done: `crate::faults`).
    fn target(&mut self) -> Target<'_>;
    /// Whether every client has exited.
    fn clients_exited(&mut self) -> Result<bool>;
    /// Brings the first client's latest checkpoint to `json` where the client writes it elsewhere (a swarm
    /// task's container on its node); nothing where it writes `json` itself.
    fn fetch_checkpoint(&mut self, _json: &Path) -> Result<()> {
        Ok(())
    }
}

/// Does `faults` while the clients run (their first results document at `json`); the faults as they
/// happened. The caller waits for the clients afterwards.
pub fn run(faults: &[FaultSpec], json: &Path, doer: &mut dyn Doer) -> Result<Vec<FaultRecord>> {
    let mut done = Vec::new();
    let Some(t0) = measuring_start(json, doer)? else {
        return Ok(done);
    };
    for f in faults {
        let mut record = FaultRecord {
            kind: f.kind,
            at_s: f.at.0.as_secs_f64(),
            for_s: f.duration.0.as_secs_f64(),
            began_unix_us: 0,
            ended_unix_us: None,
            problem: None,
        };
        if !wait_until(doer, t0 + f.at.0.as_micros() as u64)? {
            break;
        }
        record.began_unix_us = now_us();
        if let Err(e) = f.kind.begin(f, doer.target()) {
            record.problem = Some(format!("{e:#}"));
            done.push(record);
            break;
        }
        // The fault is undone even if the client ended meanwhile: the next step needs its server.
        wait_until(doer, record.began_unix_us + f.duration.0.as_micros() as u64)?;
        match f.kind.end(f, doer.target()) {
            Ok(()) => record.ended_unix_us = Some(now_us()),
            Err(e) => record.problem = Some(format!("{e:#}")),
        }
        let failed = record.problem.is_some();
        done.push(record);
        if failed {
            break;
        }
    }
    Ok(done)
}

/// The client's t = 0 on the UTC clock (µs), from its first checkpoint; None if it exited before measuring.
fn measuring_start(json: &Path, doer: &mut dyn Doer) -> Result<Option<u64>> {
    loop {
        doer.fetch_checkpoint(json)?;
        if let Ok(text) = std::fs::read(json) {
            if let Some(t) = RunRecord::from_json(&text).ok().and_then(|r| r.timeline) {
                return Ok(Some(t.start_unix_us));
            }
        }
        if doer.clients_exited()? {
            return Ok(None);
        }
        std::thread::sleep(POLL);
    }
}

/// Waits until `deadline` (UTC µs); false when the clients exited first.
fn wait_until(doer: &mut dyn Doer, deadline: u64) -> Result<bool> {
    loop {
        if doer.clients_exited()? {
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
