//! The system under test: which server a run measures — bench-server (the default), a peer server built here
//! from the project's WSDLs (`jaxws`, `gsoap`: peers/README.md), or an external target that wsbench did not
//! start (`--target URL`, `--target HOST:PORT` for chat). The backends start (or do not start) each kind; the
//! plan runs every step against each SUT in turn (`scenario::Plan::for_suts`).

pub mod probe;

use std::fmt;

use anyhow::{bail, ensure, Result};

/// What one run measures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sut {
    BenchServer,
    Peer(Peer),
    External(Target),
}

/// A peer server, built here from `peers/<name>/` (peers/README.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Peer {
    /// The JAX-WS RI (Metro) on the machine's JDK.
    Jaxws,
    /// gSOAP 2.8, native.
    Gsoap,
}

impl Peer {
    pub const ALL: [Peer; 2] = [Peer::Jaxws, Peer::Gsoap];

    pub fn name(self) -> &'static str {
        match self {
            Peer::Jaxws => "jaxws",
            Peer::Gsoap => "gsoap",
        }
    }

    /// What the peer needs before it may be measured, stated in every summary that has it.
    pub fn warm_up_note(self) -> Option<&'static str> {
        match self {
            Peer::Jaxws => Some(
                "jaxws runs on the JVM, which compiles as it runs: its figures include the warm-up each step \
                 gave it (the step's `warmup`, unmeasured, after a fresh JVM per instance); the peers' README \
                 measured about 90 s of load before a 100 KB echo settles, so a quick run's jaxws figures are \
                 of a JVM still warming up.",
            ),
            Peer::Gsoap => None,
        }
    }
}

/// A server wsbench did not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `http://host:port[/path]` (HTTP and SOAP steps).
    pub http: Option<String>,
    /// `host:port` (chat steps).
    pub chat: Option<String>,
    /// `--target-pid`: a local process to sample for CPU and RSS.
    pub pid: Option<u32>,
}

impl Target {
    /// `--target`: a URL (`http://…`, `https://…`) or, for chat, `HOST:PORT`.
    pub fn parse(text: &str, pid: Option<u32>) -> Result<Target> {
        if text.starts_with("http://") || text.starts_with("https://") {
            let rest = text.split_once("://").map_or("", |(_, r)| r);
            ensure!(
                !rest.is_empty() && !rest.starts_with('/'),
                "--target {text:?}: the URL has no host"
            );
            return Ok(Target {
                http: Some(text.to_owned()),
                chat: None,
                pid,
            });
        }
        ensure!(
            !text.contains("://"),
            "--target {text:?}: only http:// and https:// URLs (or HOST:PORT for chat) are served"
        );
        match text.rsplit_once(':') {
            Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0) => {
                Ok(Target {
                    http: None,
                    chat: Some(text.to_owned()),
                    pid,
                })
            }
            _ => {
                bail!("--target {text:?} is neither a URL (http://HOST:PORT) nor a chat HOST:PORT")
            }
        }
    }
}

impl Sut {
    /// Its name in step ids, labels, run.json and the summary's columns.
    pub fn name(&self) -> &'static str {
        match self {
            Sut::BenchServer => "bench-server",
            Sut::Peer(p) => p.name(),
            Sut::External(_) => "external",
        }
    }

    /// Whether wsbench starts it (and so can stop it, pin it and sample it).
    pub fn started_here(&self) -> bool {
        !matches!(self, Sut::External(_))
    }

    /// `--sut a,b,…`: bench-server, jaxws, gsoap, each once.
    pub fn parse_list(text: &str) -> Result<Vec<Sut>> {
        let mut out: Vec<Sut> = Vec::new();
        for name in text.split(',').map(str::trim) {
            let sut = match name {
                "bench-server" => Sut::BenchServer,
                "jaxws" => Sut::Peer(Peer::Jaxws),
                "gsoap" => Sut::Peer(Peer::Gsoap),
                other => bail!(
                    "--sut: unknown server {other:?}: bench-server, jaxws or gsoap (a server of your own: \
                     --target URL)"
                ),
            };
            ensure!(!out.contains(&sut), "--sut names {name} twice");
            out.push(sut);
        }
        Ok(out)
    }
}

impl fmt::Display for Sut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sut::External(t) => write!(
                f,
                "external {}",
                t.http.as_deref().or(t.chat.as_deref()).unwrap_or("?")
            ),
            other => f.write_str(other.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_and_lists_parse() {
        let t = Target::parse("http://10.0.0.2:8080", Some(4)).unwrap();
        assert_eq!(t.http.as_deref(), Some("http://10.0.0.2:8080"));
        assert_eq!(t.pid, Some(4));
        let c = Target::parse("chat.example:5000", None).unwrap();
        assert_eq!(c.chat.as_deref(), Some("chat.example:5000"));
        for bad in ["ftp://x:1", "nohost", "x:0", "http://", ":80"] {
            assert!(Target::parse(bad, None).is_err(), "{bad}");
        }
        let l = Sut::parse_list("bench-server,jaxws,gsoap").unwrap();
        assert_eq!(
            l.iter().map(Sut::name).collect::<Vec<_>>(),
            ["bench-server", "jaxws", "gsoap"]
        );
        assert!(Sut::parse_list("gsoap,gsoap").is_err());
        let e = Sut::parse_list("cxf").unwrap_err().to_string();
        assert!(e.contains("--target"), "{e}");
    }
}
