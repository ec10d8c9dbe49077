//! bench-server as a child process: start it, wait for its `READY` line, stop it with SIGTERM.

use std::{
    fs::File,
    process::{Child, Command, ExitStatus, Stdio},
    sync::mpsc,
    thread,
    time::Duration,
};

use crate::ready::{self, NotReady, Ready};
use anyhow::{bail, Context as _, Result};
use nix::{
    sys::signal::{kill, Signal},
    unistd::Pid,
};

/// A running bench-server; killed if dropped without [`ServerProcess::stop`].
#[derive(Debug)]
pub struct ServerProcess {
    child: Option<Child>,
    pub ready: Ready,
}

impl ServerProcess {
    /// Spawns `cmd` with stdout piped and stderr to `log`, and waits up to `timeout` for `READY`.
    pub fn start(mut cmd: Command, log: File, timeout: Duration) -> Result<ServerProcess> {
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(log);
        let mut child = cmd.spawn().with_context(|| format!("starting {cmd:?}"))?;
        let stdout = child.stdout.take().context("no stdout pipe")?;
        let lines = ready::lines(stdout);
        let ready = match ready::wait(&lines, timeout) {
            Ok(ready) => ready,
            Err(NotReady::Ended) => {
                let status = child.wait()?;
                bail!("bench-server exited ({status}) before printing READY (see server.log)");
            }
            Err(why) => {
                let _ = child.kill();
                let _ = child.wait();
                bail!("bench-server {why} (see server.log)");
            }
        };
        Ok(ServerProcess {
            child: Some(child),
            ready,
        })
    }

    /// The process's exit status if it has already exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }

    /// SIGTERM, then waits up to `grace` for a clean exit; SIGKILL (and an error) after that.
    pub fn stop(mut self, grace: Duration) -> Result<ExitStatus> {
        let mut child = self.child.take().context("server already stopped")?;
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        let pid = Pid::from_raw(i32::try_from(child.id())?);
        kill(pid, Signal::SIGTERM).context("sending SIGTERM to bench-server")?;
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        match rx.recv_timeout(grace) {
            Ok(status) => Ok(status?),
            Err(_) => {
                let _ = kill(pid, Signal::SIGKILL);
                let status = rx.recv().context("waiting for bench-server")??;
                bail!("bench-server ignored SIGTERM for {grace:?} and was killed ({status})")
            }
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in server (a shell that prints READY then waits for SIGTERM) exercises start and stop.
    #[test]
    fn starts_on_ready_and_stops_on_sigterm() {
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            "trap 'exit 0' TERM; echo \"READY http=127.0.0.1:1 pid=$$\"; while :; do sleep 1; done",
        ]);
        let log = tempfile_in_target("ready.log");
        let server = ServerProcess::start(cmd, log, Duration::from_secs(10)).unwrap();
        assert_eq!(server.ready.http, Some("127.0.0.1:1".parse().unwrap()));
        let status = server.stop(Duration::from_secs(10)).unwrap();
        assert!(status.success(), "{status}");
    }

    #[test]
    fn reports_a_server_that_dies_before_ready() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo bad config >&2; exit 3"]);
        let err =
            ServerProcess::start(cmd, tempfile_in_target("dead.log"), Duration::from_secs(10))
                .unwrap_err();
        assert!(err.to_string().contains("before printing READY"), "{err}");
    }

    fn tempfile_in_target(name: &str) -> File {
        let dir = std::env::temp_dir().join(format!("wsbench-xtask-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        File::create(dir.join(name)).unwrap()
    }
}
