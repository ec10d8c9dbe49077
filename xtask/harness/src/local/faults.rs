//! A step's faults done to the local bench-server while its client runs: kill-server (SIGKILL, then the same
//! command line restarted on the same address `for` later) and pause-server (SIGSTOP, SIGCONT `for` later).
//! When they are done is [`crate::backend::schedule`]'s.

use std::path::Path;

use anyhow::{bail, Context as _, Result};
use wsbench_tools::process::{hold, Hold, Running};

use super::process::ServerProcess;
use super::READY_TIMEOUT;
use crate::backend::schedule::{self, Doer};
use crate::rundoc::FaultRecord;
use crate::scenario::{FaultKind, FaultSpec};

/// The server as a fault sees it: the process, and how to start it again where it was.
pub(super) struct Target<'a> {
    pub(super) server: &'a mut Option<ServerProcess>,
    /// Its command line with the addresses it bound (port 0 replaced by the port it got).
    pub(super) restart: Vec<String>,
    pub(super) log: &'a std::fs::File,
}

struct Local<'a, 'b> {
    target: &'a mut Target<'b>,
    client: Running,
}

/// Does `faults` while `client` runs, then waits for it; the faults as they happened.
pub(super) fn run(
    faults: &[FaultSpec],
    json: &Path,
    client: Running,
    target: &mut Target<'_>,
) -> Result<(std::process::ExitStatus, Vec<FaultRecord>)> {
    let mut local = Local { target, client };
    let done = schedule::run(faults, json, &mut local)?;
    Ok((local.client.wait()?, done))
}

impl Doer for Local<'_, '_> {
    fn begin(&mut self, fault: &FaultSpec) -> Result<()> {
        let t = &mut *self.target;
        let server = t.server.as_ref().context("no bench-server is running")?;
        match fault.kind {
            FaultKind::PauseServer => hold(server.ready.pid, Hold::Pause),
            FaultKind::KillServer => {
                let server = t.server.take().context("no bench-server is running")?;
                server.kill_now().map(drop)
            }
            k => bail!("{} is done to a server container (--containers)", k.name()),
        }
    }

    fn end(&mut self, fault: &FaultSpec) -> Result<()> {
        let t = &mut *self.target;
        match fault.kind {
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
            k => bail!("{} is done to a server container (--containers)", k.name()),
        }
    }

    fn clients_exited(&mut self) -> Result<bool> {
        Ok(self.client.exited()?.is_some())
    }
}
