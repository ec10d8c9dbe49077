//! The local bench-server as a step's faults reach it while its client runs ([`crate::faults::Reach::Process`]:
//! its pid, SIGKILL, the same command line started again on the address it had bound). What each kind does
//! is its row of [`crate::faults`]; when, [`crate::backend::schedule`]'s.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context as _, Result};
use wsbench_tools::process::{Process, Waited};

use super::process::ServerProcess as Server;
use super::READY_TIMEOUT;

/// How long a drained back end may take to answer what it was handed and exit.
const DRAIN_GRACE: std::time::Duration = std::time::Duration::from_secs(20);
use crate::backend::schedule::{self, Doer};
use crate::faults::{FaultSpec, ServerProcess, Target};
use crate::rundoc::FaultRecord;

/// The server as a fault sees it: the process, and how to start it again where it was.
pub(super) struct Restartable<'a> {
    pub(super) server: &'a mut Option<Server>,
    /// Its command line with the addresses it bound (port 0 replaced by the port it got).
    pub(super) restart: Vec<String>,
    pub(super) log: &'a std::fs::File,
    /// The OSS/J portal's broker, when one runs.
    pub(super) broker: Option<u32>,
    /// The portal's back ends, and the command lines that start them.
    pub(super) backends: &'a mut Vec<Server>,
    pub(super) backend_commands: &'a [Vec<String>],
}

struct Local<'a, 'b> {
    target: &'a mut Restartable<'b>,
    client: Process,
}

/// Does `faults` while `client` runs, then waits for it until `deadline` (stopping it there); how it
/// ended, and the faults as they happened.
pub(super) fn run(
    faults: &[FaultSpec],
    json: &Path,
    client: Process,
    target: &mut Restartable<'_>,
    deadline: Instant,
) -> Result<(Waited, Vec<FaultRecord>)> {
    let mut local = Local { target, client };
    let done = schedule::run(faults, json, &mut local)?;
    let waited = local
        .client
        .wait_until(deadline, super::CLIENT_STOP_GRACE)?;
    Ok((waited, done))
}

impl Doer for Local<'_, '_> {
    fn target(&mut self) -> Target<'_> {
        Target::Process(self)
    }

    fn clients_exited(&mut self) -> Result<bool> {
        Ok(self.client.exited()?.is_some())
    }
}

impl ServerProcess for Local<'_, '_> {
    fn pid(&self) -> Result<u32> {
        let server = self.target.server.as_ref();
        Ok(server.context("no bench-server is running")?.pid)
    }

    fn kill(&mut self) -> Result<()> {
        let server = self.target.server.take();
        server
            .context("no bench-server is running")?
            .kill_now()
            .map(drop)
    }

    fn restart(&mut self) -> Result<()> {
        let t = &mut *self.target;
        let server = Server::start(&t.restart, t.log.try_clone()?, READY_TIMEOUT)
            .with_context(|| format!("restarting `{}`", t.restart.join(" ")))?;
        *t.server = Some(server);
        Ok(())
    }

    fn broker_pid(&self) -> Result<u32> {
        self.target
            .broker
            .context("no OSS/J portal broker is running")
    }

    fn drain_backends(&mut self) -> Result<()> {
        anyhow::ensure!(
            !self.target.backends.is_empty(),
            "no OSS/J back end is running"
        );
        for b in self.target.backends.drain(..) {
            let status = b.stop(DRAIN_GRACE).context("draining a back end")?;
            anyhow::ensure!(
                status.success(),
                "a back end exited with {status} when drained"
            );
        }
        Ok(())
    }

    fn restart_backends(&mut self) -> Result<()> {
        let t = &mut *self.target;
        for cmd in t.backend_commands {
            let b = Server::start(cmd, t.log.try_clone()?, READY_TIMEOUT)
                .with_context(|| format!("restarting `{}`", cmd.join(" ")))?;
            t.backends.push(b);
        }
        Ok(())
    }
}
