//! Waiting for a server's `READY` line on its stdout, whichever backend started the server (the line
//! itself is bench-proto's [`Ready`]).

use std::io::{BufRead as _, BufReader, Read};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{ensure, Result};

use super::interrupt;

pub use bench_proto::ready::Ready;

/// A server's READY line (bench-server's or a peer's): [`Ready::parse`], and it names the server's pid; or a
/// sampling agent's (`bench-client agent`), which names its address and may watch no process yet.
pub(crate) fn parse_ready(line: &str) -> Result<Ready> {
    let ready = Ready::parse(line)?;
    ensure!(
        ready.pid.is_some() || ready.agent.is_some(),
        "READY line without pid: {line:?}"
    );
    Ok(ready)
}

/// Why no READY line came.
#[derive(Debug, thiserror::Error)]
pub enum NotReady {
    #[error("printed no READY line within {0:?}")]
    Timeout(Duration),
    /// Its stdout ended: the server exited.
    #[error("exited before printing READY")]
    Ended,
    #[error("was interrupted (Ctrl-C) before READY")]
    Interrupted,
    #[error("printed a malformed READY line: {0:#}")]
    Malformed(anyhow::Error),
}

/// The lines of a server's stdout, read on a thread of their own that keeps draining the pipe after READY,
/// so the server never blocks on a full pipe.
pub fn lines(out: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut listening = true;
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if listening {
                listening = tx.send(line).is_ok();
            }
        }
    });
    rx
}

/// Waits up to `timeout` for the READY line among `lines` (other lines are skipped).
pub fn wait(lines: &Receiver<String>, timeout: Duration) -> Result<Ready, NotReady> {
    let deadline = Instant::now() + timeout;
    loop {
        if interrupt::interrupted() {
            return Err(NotReady::Interrupted);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left.min(Duration::from_millis(100))) {
            Ok(line) if Ready::is_ready(&line) => {
                return parse_ready(&line).map_err(NotReady::Malformed)
            }
            Ok(_) => {}
            Err(RecvTimeoutError::Timeout) if left.is_zero() => {
                return Err(NotReady::Timeout(timeout))
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return Err(NotReady::Ended),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_s_ready_line_names_its_pid() {
        let r = parse_ready("READY http=127.0.0.1:8080 workers=1 pid=7").unwrap();
        assert_eq!(r.pid, Some(7));
        assert!(parse_ready("READY http=127.0.0.1:8080").is_err());
        assert!(parse_ready("listening on 8080").is_err());
    }

    #[test]
    fn waits_past_other_lines_and_tells_why_not() {
        let out = b"starting\nREADY http=127.0.0.1:5 workers=1 pid=9\n".to_vec();
        let ready = wait(&lines(std::io::Cursor::new(out)), Duration::from_secs(5)).unwrap();
        assert_eq!(ready.to_string(), "READY http=127.0.0.1:5 workers=1 pid=9");
        let ended = wait(
            &lines(std::io::Cursor::new(b"oops\n".to_vec())),
            Duration::from_secs(5),
        );
        assert!(matches!(ended, Err(NotReady::Ended)), "{ended:?}");
        let (_tx, rx) = mpsc::channel::<String>();
        let slow = wait(&rx, Duration::from_millis(50));
        assert!(matches!(slow, Err(NotReady::Timeout(_))), "{slow:?}");
    }
}
