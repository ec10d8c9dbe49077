//! The `READY` line a wsbench process prints on stdout once it listens (contract: docs/contracts.md):
//! bench-server's `READY http=ADDR chat=ADDR fanout=… io_uring=… workers=N pid=P`, its OSS/J roles'
//! (`READY http=ADDR role=app broker=… instance=… …`, `READY role=backend broker=… customers=N …`), the
//! peers' (the same words), bench-client agent's `READY agent=ADDR pid=P|- token=…`. Written by [`Ready`]'s `Display` and read
//! by [`Ready::parse`], the one place each is done.

use core::net::SocketAddr;
use std::fmt;

/// What a process announced. Words a reader does not know are passed over: later additions to the line are
/// not errors.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ready {
    pub http: Option<SocketAddr>,
    pub chat: Option<SocketAddr>,
    /// The chat server's fan-out (`uring`, `writes`), and whether io_uring was allowed (`ok`, or why not:
    /// `EPERM` under Docker's default seccomp profile, `ENOSYS`, `disabled-by-sysctl`).
    pub fanout: Option<String>,
    pub io_uring: Option<String>,
    /// bench-server's OSS/J role (`app`, `backend`), the broker it reached, an app's instance name and a
    /// back end's customers.
    pub role: Option<String>,
    pub broker: Option<String>,
    pub instance: Option<String>,
    pub customers: Option<u64>,
    /// bench-client agent's address.
    pub agent: Option<SocketAddr>,
    pub workers: Option<u32>,
    /// The process it speaks of (the server's own; the process an agent samples, `-` when none yet).
    pub pid: Option<u32>,
    /// An agent's token, when it made one.
    pub token: Option<String>,
}

/// Why a line is not a READY line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadyError {
    #[error("not a READY line: {0:?}")]
    NotReady(String),
    #[error("bad READY field {field:?} in {line:?}")]
    Field { field: String, line: String },
}

/// The line's first word.
const WORD: &str = "READY";

impl Ready {
    /// Whether `line` is meant as a READY line (the other lines a process prints are passed over).
    pub fn is_ready(line: &str) -> bool {
        line.split_whitespace().next() == Some(WORD)
    }

    pub fn parse(line: &str) -> Result<Ready, ReadyError> {
        let mut words = line.split_whitespace();
        if words.next() != Some(WORD) {
            return Err(ReadyError::NotReady(line.to_owned()));
        }
        let mut ready = Ready::default();
        for word in words {
            let bad = || ReadyError::Field {
                field: word.to_owned(),
                line: line.to_owned(),
            };
            let (k, v) = word.split_once('=').ok_or_else(bad)?;
            let addr = || v.parse::<SocketAddr>().map(Some).map_err(|_| bad());
            match k {
                "http" => ready.http = addr()?,
                "chat" => ready.chat = addr()?,
                "agent" => ready.agent = addr()?,
                "workers" => ready.workers = Some(v.parse().map_err(|_| bad())?),
                "pid" if v == "-" => ready.pid = None,
                "pid" => ready.pid = Some(v.parse().map_err(|_| bad())?),
                "fanout" => ready.fanout = Some(v.to_owned()),
                "role" => ready.role = Some(v.to_owned()),
                "broker" => ready.broker = Some(v.to_owned()),
                "instance" => ready.instance = Some(v.to_owned()),
                "customers" => ready.customers = Some(v.parse().map_err(|_| bad())?),
                "io_uring" => ready.io_uring = Some(v.to_owned()),
                "token" => ready.token = Some(v.to_owned()),
                _ => {}
            }
        }
        Ok(ready)
    }
}

impl fmt::Display for Ready {
    /// The line, without its newline: `READY http=127.0.0.1:8080 workers=2 pid=7`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(WORD)?;
        let addrs = [("http", self.http), ("chat", self.chat)];
        for (k, a) in addrs {
            if let Some(a) = a {
                write!(f, " {k}={a}")?;
            }
        }
        let words = [
            ("fanout", &self.fanout),
            ("io_uring", &self.io_uring),
            ("role", &self.role),
            ("broker", &self.broker),
            ("instance", &self.instance),
        ];
        for (k, v) in words {
            if let Some(v) = v {
                write!(f, " {k}={v}")?;
            }
        }
        if let Some(n) = self.customers {
            write!(f, " customers={n}")?;
        }
        if let Some(a) = self.agent {
            write!(f, " agent={a}")?;
        }
        if let Some(w) = self.workers {
            write!(f, " workers={w}")?;
        }
        match self.pid {
            Some(p) => write!(f, " pid={p}")?,
            // An agent says it samples no process yet; a server always has a pid.
            None if self.agent.is_some() => f.write_str(" pid=-")?,
            None => {}
        }
        if let Some(t) = &self.token {
            write!(f, " token={t}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_back_as_written() {
        for line in [
            "READY http=127.0.0.1:43211 chat=127.0.0.1:40001 workers=2 pid=12345",
            "READY chat=127.0.0.1:4 fanout=writes io_uring=EPERM workers=1 pid=7",
            "READY agent=127.0.0.1:9 pid=- token=abc",
            "READY http=127.0.0.1:8 role=app broker=127.0.0.1:61613 instance=h-1 workers=2 pid=3",
            "READY role=backend broker=b:61613 customers=1000 workers=1 pid=3",
            "READY agent=[::1]:9 pid=4",
        ] {
            assert_eq!(Ready::parse(line).unwrap().to_string(), line);
        }
        let r = Ready::parse("READY http=127.0.0.1:8080 workers=1 pid=7 extra=ignored").unwrap();
        assert_eq!(r.http, Some("127.0.0.1:8080".parse().unwrap()));
        assert_eq!((r.workers, r.pid), (Some(1), Some(7)));
    }

    #[test]
    fn a_bad_line_says_which_field() {
        assert!(matches!(
            Ready::parse("starting up"),
            Err(ReadyError::NotReady(_))
        ));
        let e = Ready::parse("READY http=nonsense pid=1").unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad READY field \"http=nonsense\" in \"READY http=nonsense pid=1\""
        );
        assert!(Ready::parse("READY pid").is_err());
        assert!(Ready::is_ready("READY pid=1") && !Ready::is_ready("READYish"));
    }
}
