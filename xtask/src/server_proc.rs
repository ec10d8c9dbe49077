//! bench-server as a child process: start it, wait for its `READY` line, stop it with SIGTERM.

use std::{
    fs::File,
    io::{BufRead as _, BufReader},
    net::SocketAddr,
    process::{Child, Command, ExitStatus, Stdio},
    sync::mpsc,
    thread,
    time::Duration,
};

use anyhow::{bail, Context as _, Result};
use nix::{
    sys::signal::{kill, Signal},
    unistd::Pid,
};

/// What bench-server announced on stdout (contract: `READY http=… chat=… workers=N pid=P`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ready {
    pub(crate) http: Option<SocketAddr>,
    pub(crate) chat: Option<SocketAddr>,
    pub(crate) workers: Option<u32>,
    pub(crate) pid: u32,
}

pub(crate) fn parse_ready(line: &str) -> Result<Ready> {
    let mut words = line.split_whitespace();
    if words.next() != Some("READY") {
        bail!("not a READY line: {line:?}");
    }
    let mut ready = Ready {
        http: None,
        chat: None,
        workers: None,
        pid: 0,
    };
    let mut pid = None;
    for word in words {
        let Some((k, v)) = word.split_once('=') else {
            bail!("bad READY field {word:?} in {line:?}")
        };
        let bad = || format!("bad READY field {word:?}");
        match k {
            "http" => ready.http = Some(v.parse().with_context(bad)?),
            "chat" => ready.chat = Some(v.parse().with_context(bad)?),
            "workers" => ready.workers = Some(v.parse().with_context(bad)?),
            "pid" => pid = Some(v.parse().with_context(bad)?),
            _ => {} // later additions to the line are not errors
        }
    }
    ready.pid = pid.with_context(|| format!("READY line without pid: {line:?}"))?;
    Ok(ready)
}

/// A running bench-server; killed if dropped without [`ServerProcess::stop`].
#[derive(Debug)]
pub(crate) struct ServerProcess {
    child: Option<Child>,
    pub(crate) ready: Ready,
}

impl ServerProcess {
    /// Spawns `cmd` with stdout piped and stderr to `log`, and waits up to `timeout` for `READY`.
    pub(crate) fn start(mut cmd: Command, log: File, timeout: Duration) -> Result<ServerProcess> {
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(log);
        let mut child = cmd.spawn().with_context(|| format!("starting {cmd:?}"))?;
        let stdout = child.stdout.take().context("no stdout pipe")?;
        let (tx, rx) = mpsc::channel();
        // Reads the READY line, then keeps draining stdout so the server never blocks on a full pipe.
        thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if !sent && line.starts_with("READY") {
                    sent = tx.send(line).is_ok();
                }
            }
        });
        let line = match rx.recv_timeout(timeout) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                let _ = child.wait();
                bail!("bench-server printed no READY line within {timeout:?} (see server.log)");
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let status = child.wait()?;
                bail!("bench-server exited ({status}) before printing READY (see server.log)");
            }
        };
        let ready = match parse_ready(&line) {
            Ok(r) => r,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        };
        Ok(ServerProcess {
            child: Some(child),
            ready,
        })
    }

    /// The process's exit status if it has already exited.
    pub(crate) fn exited(&mut self) -> Option<ExitStatus> {
        self.child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }

    /// SIGTERM, then waits up to `grace` for a clean exit; SIGKILL (and an error) after that.
    pub(crate) fn stop(mut self, grace: Duration) -> Result<ExitStatus> {
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

    #[test]
    fn parses_the_contract_ready_line() {
        let r = parse_ready("READY http=127.0.0.1:43211 chat=127.0.0.1:40001 workers=2 pid=12345")
            .unwrap();
        assert_eq!(r.http, Some("127.0.0.1:43211".parse().unwrap()));
        assert_eq!(r.chat, Some("127.0.0.1:40001".parse().unwrap()));
        assert_eq!((r.workers, r.pid), (Some(2), 12345));
        let r = parse_ready("READY http=127.0.0.1:8080 workers=1 pid=7 extra=ignored").unwrap();
        assert_eq!((r.chat, r.pid), (None, 7));
        assert!(parse_ready("READY http=127.0.0.1:8080").is_err());
        assert!(parse_ready("READY http=nonsense pid=1").is_err());
        assert!(parse_ready("listening on 8080").is_err());
    }

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
