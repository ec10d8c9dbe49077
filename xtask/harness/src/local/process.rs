//! bench-server as a child process: start it, wait for its `READY` line, stop it with SIGTERM.

use std::{fs::File, process::ExitStatus, time::Duration};

use crate::ready::{self, NotReady, Ready};
use anyhow::{bail, Context as _, Result};
use wsbench_tools::process::Process;

/// A running bench-server; killed if dropped without [`ServerProcess::stop`].
#[derive(Debug)]
pub struct ServerProcess {
    child: Process,
    pub ready: Ready,
    /// Its pid, as its READY line gives it.
    pub pid: u32,
}

impl ServerProcess {
    /// Spawns `argv` with stdout piped and stderr to `log`, and waits up to `timeout` for `READY`.
    pub fn start(argv: &[String], log: File, timeout: Duration) -> Result<ServerProcess> {
        let (child, stdout) = Process::piped(argv, Some(log))?;
        let lines = ready::lines(stdout);
        let ready = match ready::wait(&lines, timeout) {
            Ok(ready) => ready,
            Err(NotReady::Ended) => {
                let status = child.wait()?;
                bail!("bench-server exited ({status}) before printing READY (see server.log)");
            }
            Err(why) => {
                drop(child);
                bail!("bench-server {why} (see server.log)");
            }
        };
        let pid = ready.pid.context("a READY line without pid")?;
        Ok(ServerProcess { child, ready, pid })
    }

    /// The process's exit status if it has already exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.exited().ok().flatten()
    }

    /// SIGKILL, as a fault: the server dies with its connections.
    pub fn kill_now(self) -> Result<ExitStatus> {
        Ok(self.child.kill_now()?)
    }

    /// SIGTERM, then waits up to `grace` for a clean exit; SIGKILL (and an error) after that.
    pub fn stop(self, grace: Duration) -> Result<ExitStatus> {
        self.child
            .stop(grace)
            .map_err(|e| anyhow::anyhow!("bench-server: {e:#}"))
            .context("stopping bench-server")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in server (a shell that prints READY then waits for SIGTERM) exercises start and stop.
    #[test]
    fn starts_on_ready_and_stops_on_sigterm() {
        let cmd: Vec<String> = [
            "sh",
            "-c",
            "trap 'exit 0' TERM; echo \"READY http=127.0.0.1:1 pid=$$\"; while :; do sleep 1; done",
        ]
        .map(String::from)
        .to_vec();
        let log = tempfile_in_target("ready.log");
        let server = ServerProcess::start(&cmd, log, Duration::from_secs(10)).unwrap();
        assert_eq!(server.ready.http, Some("127.0.0.1:1".parse().unwrap()));
        let status = server.stop(Duration::from_secs(10)).unwrap();
        assert!(status.success(), "{status}");
    }

    #[test]
    fn reports_a_server_that_dies_before_ready() {
        let cmd: Vec<String> = ["sh", "-c", "echo bad config >&2; exit 3"]
            .map(String::from)
            .to_vec();
        let err = ServerProcess::start(
            &cmd,
            tempfile_in_target("dead.log"),
            Duration::from_secs(10),
        )
        .unwrap_err();
        assert!(err.to_string().contains("before printing READY"), "{err}");
    }

    fn tempfile_in_target(name: &str) -> File {
        let dir = std::env::temp_dir().join(format!("wsbench-xtask-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        File::create(dir.join(name)).unwrap()
    }
}
