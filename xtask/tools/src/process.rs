//! Programs wsbench builds itself (bench-server, bench-client, benchmark executables) and any command line
//! given as an argv: run to completion, or spawned with their stdout piped (a READY line) and stopped with
//! SIGTERM, then SIGKILL after a grace period.

use std::fs::File;
use std::io;
use std::path::Path;
use std::process::{Child, ChildStdout, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use xshell::{cmd, Shell};

/// Why running a program did not give what was asked of it.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("empty command line")]
    Empty,
    /// It could not be started (not found, not executable…).
    #[error("starting `{command}`: {source}")]
    Start {
        command: String,
        #[source]
        source: io::Error,
    },
    /// Waiting for it, or asking whether it exited, failed.
    #[error("waiting for `{command}`: {source}")]
    Wait {
        command: String,
        #[source]
        source: io::Error,
    },
    /// It ran and exited unsuccessfully; what it wrote is kept.
    #[error("`{command}` failed ({}){}", output.status, tail(&output.stderr))]
    Failed { command: String, output: Output },
    /// It did not exit on SIGTERM within its grace and was killed.
    #[error("it ignored SIGTERM for {grace:?} and was killed ({status})")]
    Ignored { grace: Duration, status: ExitStatus },
    /// A signal could not be sent.
    #[error("{signal} to {pid}: {source}")]
    Signal {
        pid: u32,
        signal: Signal,
        #[source]
        source: nix::Error,
    },
    /// It was already stopped (or waited for).
    #[error("`{command}` was already stopped")]
    Gone { command: String },
}

/// The last lines of a failed program's stderr, for its error: `:\n…`, or nothing when it wrote none.
fn tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    match lines.len() {
        0 => String::new(),
        n => format!(":\n{}", lines[n.saturating_sub(15)..].join("\n")),
    }
}

fn command(argv: &[String]) -> Result<Command, ProcessError> {
    let (program, args) = argv.split_first().ok_or(ProcessError::Empty)?;
    let mut cmd = Command::new(program);
    cmd.args(args);
    Ok(cmd)
}

fn start_error(argv: &[String]) -> impl FnOnce(io::Error) -> ProcessError + '_ {
    |source| ProcessError::Start {
        command: argv.join(" "),
        source,
    }
}

/// Runs `argv` with this terminal's output; its exit status, whatever it is (the caller reads it: bench-client
/// says with its status how the run went).
pub fn status(argv: &[String]) -> Result<ExitStatus, ProcessError> {
    command(argv)?.status().map_err(start_error(argv))
}

/// Runs `argv` with its output discarded; its exit status, whatever it is.
pub fn status_quiet(argv: &[String]) -> Result<ExitStatus, ProcessError> {
    command(argv)?
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(start_error(argv))
}

/// Runs `argv` with its output captured; [`ProcessError::Failed`] (holding the output) when it fails.
pub fn output(argv: &[String]) -> Result<Output, ProcessError> {
    let output = command(argv)?
        .stdin(Stdio::null())
        .output()
        .map_err(start_error(argv))?;
    succeeded(argv, output)
}

/// `output`, or [`ProcessError::Failed`] with it when the program failed.
pub fn succeeded(argv: &[String], output: Output) -> Result<Output, ProcessError> {
    if output.status.success() {
        return Ok(output);
    }
    Err(ProcessError::Failed {
        command: argv.join(" "),
        output,
    })
}

/// Runs `argv` quietly; Err when it fails.
pub fn run(sh: &Shell, argv: &[String]) -> anyhow::Result<()> {
    let (program, args) = argv.split_first().ok_or(ProcessError::Empty)?;
    cmd!(sh, "{program} {args...}").quiet().run()?;
    Ok(())
}

/// Runs `argv` quietly and returns its stdout; Err when it fails.
pub fn read(sh: &Shell, argv: &[String]) -> anyhow::Result<String> {
    let (program, args) = argv.split_first().ok_or(ProcessError::Empty)?;
    Ok(cmd!(sh, "{program} {args...}").quiet().read()?)
}

/// Runs `argv` quietly with `env` added, in the shell's directory; its output, or [`ProcessError::Failed`]
/// with it when the program failed.
pub fn output_env(
    sh: &Shell,
    argv: &[String],
    env: &[(&str, &Path)],
) -> Result<Output, ProcessError> {
    let (program, args) = argv.split_first().ok_or(ProcessError::Empty)?;
    let mut c = cmd!(sh, "{program} {args...}").quiet().ignore_status();
    for (k, v) in env {
        c = c.env(k, v);
    }
    let output = c.output().map_err(|e| ProcessError::Start {
        command: argv.join(" "),
        source: io::Error::other(e),
    })?;
    succeeded(argv, output)
}

/// A child process, killed if dropped before it exited: its output piped to the caller
/// ([`Process::piped`]: a READY line to read) or this terminal's ([`Process::inherit`]).
#[derive(Debug)]
pub struct Process {
    child: Option<Child>,
    command: String,
    /// Its exit status, once seen.
    status: Option<ExitStatus>,
}

impl Process {
    /// Spawns `argv` with stdin closed, stdout piped and stderr to `log` (or discarded); the stdout stream.
    pub fn piped(
        argv: &[String],
        log: Option<File>,
    ) -> Result<(Process, ChildStdout), ProcessError> {
        let mut cmd = command(argv)?;
        cmd.stdin(Stdio::null()).stdout(Stdio::piped());
        match log {
            Some(f) => cmd.stderr(f),
            None => cmd.stderr(Stdio::null()),
        };
        let mut child = cmd.spawn().map_err(start_error(argv))?;
        let stdout = child.stdout.take().ok_or_else(|| ProcessError::Wait {
            command: argv.join(" "),
            source: io::Error::other("no stdout pipe"),
        })?;
        Ok((Process::of(child, argv), stdout))
    }

    /// Spawns `argv` with this terminal's output.
    pub fn inherit(argv: &[String]) -> Result<Process, ProcessError> {
        let child = command(argv)?.spawn().map_err(start_error(argv))?;
        Ok(Process::of(child, argv))
    }

    fn of(child: Child, argv: &[String]) -> Process {
        Process {
            child: Some(child),
            command: argv.join(" "),
            status: None,
        }
    }

    fn child(&mut self) -> Result<&mut Child, ProcessError> {
        self.child.as_mut().ok_or_else(|| ProcessError::Gone {
            command: self.command.clone(),
        })
    }

    fn wait_error(&self) -> impl FnOnce(io::Error) -> ProcessError + '_ {
        |source| ProcessError::Wait {
            command: self.command.clone(),
            source,
        }
    }

    /// Its process id.
    pub fn id(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Its exit status if it has exited.
    pub fn exited(&mut self) -> Result<Option<ExitStatus>, ProcessError> {
        if self.status.is_none() {
            let status = self.child()?.try_wait();
            self.status = status.map_err(self.wait_error())?;
        }
        Ok(self.status)
    }

    /// Waits for it to exit.
    pub fn wait(mut self) -> Result<ExitStatus, ProcessError> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let status = self.child()?.wait();
        self.child = None;
        status.map_err(self.wait_error())
    }

    /// SIGKILL, at once (a crash, as a fault): its exit status.
    pub fn kill_now(mut self) -> Result<ExitStatus, ProcessError> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let child = self.child()?;
        let _ = child.kill();
        let status = child.wait();
        self.child = None;
        status.map_err(self.wait_error())
    }

    /// SIGTERM, then waits up to `grace` for it to exit; SIGKILL and [`ProcessError::Ignored`] after that.
    pub fn stop(mut self, grace: Duration) -> Result<ExitStatus, ProcessError> {
        if let Some(status) = self.exited()? {
            return Ok(status);
        }
        let mut child = self.child.take().ok_or_else(|| ProcessError::Gone {
            command: self.command.clone(),
        })?;
        let pid = child.id();
        signal(pid, Signal::SIGTERM)?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        let waited = match rx.recv_timeout(grace) {
            Ok(status) => return status.map_err(self.wait_error()),
            Err(_) => {
                let _ = signal(pid, Signal::SIGKILL);
                rx.recv().map_err(io::Error::other)
            }
        };
        let status = waited.and_then(|s| s).map_err(self.wait_error())?;
        Err(ProcessError::Ignored { grace, status })
    }
}

impl Process {
    /// Waits for it to exit by `deadline`; past it, stops it (SIGTERM, SIGKILL `grace` later) and says so.
    pub fn wait_until(
        mut self,
        deadline: Instant,
        grace: Duration,
    ) -> Result<Waited, ProcessError> {
        loop {
            if let Some(status) = self.exited()? {
                return Ok(Waited::Exited(status));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(POLL.min(left));
        }
        match self.stop(grace) {
            Ok(status) | Err(ProcessError::Ignored { status, .. }) => Ok(Waited::Stopped(status)),
            Err(e) => Err(e),
        }
    }
}

/// How often a child waited for with a deadline is looked at.
const POLL: Duration = Duration::from_millis(50);

/// Waits for `child` (one this crate did not start: a `docker run` client) to exit by `deadline`: its
/// status, or None when it is still running then.
pub fn wait_until(child: &mut Child, deadline: Instant) -> io::Result<Option<ExitStatus>> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        std::thread::sleep(POLL.min(left));
    }
}

/// How a child waited for with a deadline ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    /// By itself, in time.
    Exited(ExitStatus),
    /// Stopped at the deadline.
    Stopped(ExitStatus),
}

impl Waited {
    pub fn status(self) -> ExitStatus {
        match self {
            Waited::Exited(s) | Waited::Stopped(s) => s,
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let (Some(mut child), None) = (self.child.take(), self.status) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Sends `sig` to `pid`.
fn signal(pid: u32, sig: Signal) -> Result<(), ProcessError> {
    let raw = i32::try_from(pid).unwrap_or(i32::MAX);
    kill(Pid::from_raw(raw), sig).map_err(|source| ProcessError::Signal {
        pid,
        signal: sig,
        source,
    })
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
pub fn hold(pid: u32, what: Hold) -> Result<(), ProcessError> {
    let sig = match what {
        Hold::Pause => Signal::SIGSTOP,
        Hold::Resume => Signal::SIGCONT,
    };
    signal(pid, sig)
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
    signal(pid, Signal::SIGTERM)?;
    let deadline = Instant::now() + grace;
    while alive(pid) {
        if Instant::now() > deadline {
            signal(pid, Signal::SIGKILL)?;
            // A killed process cannot refuse, but a big one (valgrind's) takes a while to be torn down on a
            // loaded machine: half a second was seen too short.
            let killed = Instant::now() + Duration::from_secs(30);
            while alive(pid) && Instant::now() < killed {
                std::thread::sleep(Duration::from_millis(100));
            }
            anyhow::ensure!(!alive(pid), "still running 30 s after SIGKILL");
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
pub fn kill9(pid: u32) -> Result<(), ProcessError> {
    signal(pid, Signal::SIGKILL)
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
            Process::piped(&sh("trap 'exit 0' TERM; while :; do sleep 1; done"), None).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        assert!(child.stop(Duration::from_secs(10)).unwrap().success());
        let (child, _out) =
            Process::piped(&sh("trap '' TERM; while :; do sleep 1; done"), None).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let err = child.stop(Duration::from_millis(300)).unwrap_err();
        assert!(matches!(err, ProcessError::Ignored { .. }), "{err}");
        assert!(err.to_string().contains("ignored SIGTERM"), "{err}");
        assert_eq!(status(&sh("exit 3")).unwrap().code(), Some(3));
        assert!(!alive(u32::MAX >> 2));
    }

    /// A failed program is an error holding what it wrote, never an Ok output.
    #[test]
    fn output_of_a_failed_program_is_an_error_with_its_output() {
        assert_eq!(output(&sh("echo hi")).unwrap().stdout, b"hi\n");
        let err = output(&sh("echo out; echo one >&2; echo two >&2; exit 3")).unwrap_err();
        let ProcessError::Failed { output: out, .. } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(err.to_string(), "`sh -c echo out; echo one >&2; echo two >&2; exit 3` failed (exit status: 3):\none\ntwo");
        assert!(matches!(
            output(&["/nonexistent/x".to_owned()]),
            Err(ProcessError::Start { .. })
        ));
        assert!(matches!(output(&[]), Err(ProcessError::Empty)));
    }

    #[test]
    fn a_process_seen_to_exit_keeps_its_status() {
        let mut p = Process::inherit(&sh("exit 4")).unwrap();
        let status = loop {
            if let Some(s) = p.exited().unwrap() {
                break s;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        assert_eq!(status.code(), Some(4));
        assert_eq!(p.exited().unwrap(), Some(status), "asked again");
        assert_eq!(
            p.wait().unwrap(),
            status,
            "waited for after it was seen to exit"
        );
    }
}
