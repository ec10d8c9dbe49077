//! bench-server's `READY` line (contract: `READY http=… chat=… workers=N pid=P`), and waiting for it on a
//! server's stdout, whichever backend started the server.

use std::io::{BufRead as _, BufReader, Read};
use std::net::SocketAddr;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};

use super::interrupt;

/// What bench-server announced on stdout (contract: `READY http=… chat=… workers=N pid=P`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ready {
    pub http: Option<SocketAddr>,
    pub chat: Option<SocketAddr>,
    pub workers: Option<u32>,
    pub pid: u32,
    /// The chat server's fan-out (`uring`, `writes`), and whether io_uring was allowed (`ok`, or why not:
    /// `EPERM` under Docker's default seccomp profile, `ENOSYS`, `disabled-by-sysctl`).
    pub fanout: Option<String>,
    pub io_uring: Option<String>,
}

pub fn parse_ready(line: &str) -> Result<Ready> {
    let mut words = line.split_whitespace();
    if words.next() != Some("READY") {
        bail!("not a READY line: {line:?}");
    }
    let mut ready = Ready {
        http: None,
        chat: None,
        workers: None,
        pid: 0,
        fanout: None,
        io_uring: None,
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
            "fanout" => ready.fanout = Some(v.to_owned()),
            "io_uring" => ready.io_uring = Some(v.to_owned()),
            _ => {} // later additions to the line are not errors
        }
    }
    ready.pid = pid.with_context(|| format!("READY line without pid: {line:?}"))?;
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
            Ok(line) if line.starts_with("READY") => {
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

impl Ready {
    /// The line as bench-server printed it, for logs and provenance.
    pub fn line(&self) -> String {
        let mut words = vec!["READY".to_owned()];
        if let Some(a) = self.http {
            words.push(format!("http={a}"));
        }
        if let Some(a) = self.chat {
            words.push(format!("chat={a}"));
        }
        if let Some(f) = &self.fanout {
            words.push(format!("fanout={f}"));
        }
        if let Some(u) = &self.io_uring {
            words.push(format!("io_uring={u}"));
        }
        if let Some(w) = self.workers {
            words.push(format!("workers={w}"));
        }
        words.push(format!("pid={}", self.pid));
        words.join(" ")
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
        let line = "READY chat=127.0.0.1:4 fanout=writes io_uring=EPERM workers=1 pid=7";
        assert_eq!(
            parse_ready(line).unwrap().line(),
            line,
            "provenance keeps the fan-out"
        );
        let r = parse_ready("READY http=127.0.0.1:8080 workers=1 pid=7 extra=ignored").unwrap();
        assert_eq!((r.chat, r.pid), (None, 7));
        assert!(parse_ready("READY http=127.0.0.1:8080").is_err());
        assert!(parse_ready("READY http=nonsense pid=1").is_err());
        assert!(parse_ready("listening on 8080").is_err());
    }

    #[test]
    fn waits_past_other_lines_and_tells_why_not() {
        let out = b"starting\nREADY http=127.0.0.1:5 workers=1 pid=9\n".to_vec();
        let ready = wait(&lines(std::io::Cursor::new(out)), Duration::from_secs(5)).unwrap();
        assert_eq!(ready.line(), "READY http=127.0.0.1:5 workers=1 pid=9");
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
