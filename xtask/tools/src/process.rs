//! Programs wsbench builds itself (bench-server, bench-client, benchmark executables) and any command line
//! given as an argv: run to completion, or spawned with their stdout piped (a READY line) and stopped with
//! SIGTERM, then SIGKILL after a grace period.

use std::fs::File;
use std::path::Path;
use std::process::{Child, ChildStdout, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{bail, Context as _};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use xshell::{cmd, Shell};

fn command(argv: &[String]) -> anyhow::Result<Command> {
    let (program, args) = argv.split_first().context("empty command line")?;
    let mut cmd = Command::new(program);
    cmd.args(args);
    Ok(cmd)
}

/// Runs `argv` with this terminal's output; its exit status.
pub fn status(argv: &[String]) -> anyhow::Result<ExitStatus> {
    command(argv)?
        .status()
        .with_context(|| format!("running {}", argv.join(" ")))
}

/// Runs `argv` with its output discarded; its exit status.
pub fn status_quiet(argv: &[String]) -> anyhow::Result<ExitStatus> {
    command(argv)?
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .with_context(|| format!("running {}", argv.join(" ")))
}

/// Runs `argv` with its output captured.
pub fn output(argv: &[String]) -> anyhow::Result<Output> {
    command(argv)?
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {}", argv.join(" ")))
}

/// Runs `argv` quietly; Err when it fails.
pub fn run(sh: &Shell, argv: &[String]) -> anyhow::Result<()> {
    let (program, args) = argv.split_first().context("empty command line")?;
    cmd!(sh, "{program} {args...}").quiet().run()?;
    Ok(())
}

/// Runs `argv` quietly and returns its stdout; Err when it fails.
pub fn read(sh: &Shell, argv: &[String]) -> anyhow::Result<String> {
    let (program, args) = argv.split_first().context("empty command line")?;
    Ok(cmd!(sh, "{program} {args...}").quiet().read()?)
}

/// Runs `argv` quietly with `env` added, in the shell's directory, whatever its exit status; its output.
pub fn output_env(sh: &Shell, argv: &[String], env: &[(&str, &Path)]) -> anyhow::Result<Output> {
    let (program, args) = argv.split_first().context("empty command line")?;
    let mut c = cmd!(sh, "{program} {args...}").quiet().ignore_status();
    for (k, v) in env {
        c = c.env(k, v);
    }
    c.output()
        .with_context(|| format!("running {}", argv.join(" ")))
}

/// A child process with its stdout piped to the caller; killed if dropped without [`Spawned::stop`].
#[derive(Debug)]
pub struct Spawned {
    child: Option<Child>,
}

impl Spawned {
    /// Spawns `argv` with stdin closed, stdout piped and stderr to `log` (or discarded); the stdout stream.
    pub fn start(argv: &[String], log: Option<File>) -> anyhow::Result<(Spawned, ChildStdout)> {
        let mut cmd = command(argv)?;
        cmd.stdin(Stdio::null()).stdout(Stdio::piped());
        match log {
            Some(f) => cmd.stderr(f),
            None => cmd.stderr(Stdio::null()),
        };
        let mut child = cmd
            .spawn()
            .with_context(|| format!("starting {}", argv.join(" ")))?;
        let stdout = child.stdout.take().context("no stdout pipe")?;
        Ok((Spawned { child: Some(child) }, stdout))
    }

    /// Its process id.
    pub fn id(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The process's exit status if it has already exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }

    /// Waits for it to exit.
    pub fn wait(mut self) -> anyhow::Result<ExitStatus> {
        let mut child = self.child.take().context("already stopped")?;
        Ok(child.wait()?)
    }

    /// SIGKILL, at once (a crash, as a fault): its exit status.
    pub fn kill_now(mut self) -> anyhow::Result<ExitStatus> {
        let mut child = self.child.take().context("already stopped")?;
        let _ = child.kill();
        Ok(child.wait()?)
    }

    /// SIGTERM, then waits up to `grace` for it to exit; SIGKILL (and an error) after that.
    pub fn stop(mut self, grace: Duration) -> anyhow::Result<ExitStatus> {
        let mut child = self.child.take().context("already stopped")?;
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        let pid = Pid::from_raw(i32::try_from(child.id())?);
        kill(pid, Signal::SIGTERM).context("sending SIGTERM")?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        match rx.recv_timeout(grace) {
            Ok(status) => Ok(status?),
            Err(_) => {
                let _ = kill(pid, Signal::SIGKILL);
                let status = rx.recv().context("waiting for the process")??;
                bail!("it ignored SIGTERM for {grace:?} and was killed ({status})")
            }
        }
    }
}

/// A child with this terminal's output that the caller polls while doing other things (a step's faults);
/// killed if dropped before it exited.
#[derive(Debug)]
pub struct Running {
    child: Child,
    done: bool,
}

/// Starts `argv` with this terminal's output.
pub fn spawn(argv: &[String]) -> anyhow::Result<Running> {
    let child = command(argv)?
        .spawn()
        .with_context(|| format!("starting {}", argv.join(" ")))?;
    Ok(Running { child, done: false })
}

impl Running {
    /// Its exit status if it has exited.
    pub fn exited(&mut self) -> anyhow::Result<Option<ExitStatus>> {
        let status = self.child.try_wait()?;
        self.done |= status.is_some();
        Ok(status)
    }

    /// Waits for it to exit.
    pub fn wait(mut self) -> anyhow::Result<ExitStatus> {
        let status = self.child.wait()?;
        self.done = true;
        Ok(status)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// What a fault does to a process by signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// SIGSTOP: it stops where it is, its sockets open, answering nothing.
    Pause,
    /// SIGCONT.
    Resume,
}

/// Pauses or resumes process `pid`.
pub fn hold(pid: u32, what: Hold) -> anyhow::Result<()> {
    let sig = match what {
        Hold::Pause => Signal::SIGSTOP,
        Hold::Resume => Signal::SIGCONT,
    };
    kill(Pid::from_raw(i32::try_from(pid)?), sig).with_context(|| format!("{sig} to {pid}"))
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Whether `pid` is a live process (not gone, not a zombie).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X'))
    })
}

/// SIGTERM to `pid`, then SIGKILL after `grace`; Ok once the process is gone.
pub fn terminate(pid: u32, grace: Duration) -> anyhow::Result<()> {
    if !alive(pid) {
        return Ok(());
    }
    let p = Pid::from_raw(i32::try_from(pid)?);
    kill(p, Signal::SIGTERM).with_context(|| format!("SIGTERM to {pid}"))?;
    let deadline = std::time::Instant::now() + grace;
    while alive(pid) {
        if std::time::Instant::now() > deadline {
            kill(p, Signal::SIGKILL).with_context(|| format!("SIGKILL to {pid}"))?;
            std::thread::sleep(Duration::from_millis(500));
            anyhow::ensure!(!alive(pid), "still running after SIGKILL");
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// The path as an argv word.
pub fn arg(path: &Path) -> String {
    path.display().to_string()
}

/// The process whose command line holds `word` as one of its arguments (the first found; not this one):
/// a child found by a path only it was given, such as bench-client's `--json` file.
pub fn find_by_arg(word: &str) -> Option<u32> {
    let me = std::process::id();
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let holds = cmdline.split(|b| *b == 0).any(|a| a == word.as_bytes());
        (holds && pid != me && alive(pid)).then_some(pid)
    })
}

/// SIGKILL to `pid` (kill -9: it cannot clean up, which is what a durability test wants).
pub fn kill9(pid: u32) -> anyhow::Result<()> {
    kill(Pid::from_raw(i32::try_from(pid)?), Signal::SIGKILL)
        .with_context(|| format!("SIGKILL to {pid}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    #[test]
    fn a_child_is_stopped_with_sigterm_and_killed_when_it_ignores_it() {
        let (child, _out) =
            Spawned::start(&sh("trap 'exit 0' TERM; while :; do sleep 1; done"), None).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        assert!(child.stop(Duration::from_secs(10)).unwrap().success());
        let (child, _out) =
            Spawned::start(&sh("trap '' TERM; while :; do sleep 1; done"), None).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let err = child.stop(Duration::from_millis(300)).unwrap_err();
        assert!(err.to_string().contains("ignored SIGTERM"), "{err}");
        assert_eq!(status(&sh("exit 3")).unwrap().code(), Some(3));
        assert!(!alive(u32::MAX >> 2));
    }
}
