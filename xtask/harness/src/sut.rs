//! The system under test: which server a run measures — bench-server (the default), a peer server built here
//! from `peers/<name>/` in one of its configurations (`peer`: peers as data, peers/README.md), or an external
//! target that wsbench did not start (`--target URL`, `--target HOST:PORT` for chat). The backends start (or do
//! not start) each kind; the plan runs every step against each SUT in turn (`scenario::Plan::for_suts`).

pub mod peer;
pub mod probe;

use std::fmt;

use anyhow::{bail, ensure, Result};

pub use peer::{Catalog, PeerSut};

/// What one run measures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sut {
    BenchServer,
    Peer(PeerSut),
    External(Target),
}

/// Where bench-client reads the server's figures (CPU, RSS, fds, threads, its host's CPU and network).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Sampler {
    /// Not sampled.
    #[default]
    None,
    /// `--monitor-pid`: a process on the client's machine (or in its PID namespace).
    Pid(u32),
    /// `--agent HOST:PORT` (the token in the client's environment, or in a file it is given: never on its
    /// command line), the process it is to sample if not the agent's own choice (`--agent-pid`), and the
    /// file holding the token (`--agent-token-file`: a swarm secret mounted into the client task).
    Agent {
        addr: String,
        pid: Option<u32>,
        token_file: Option<String>,
    },
}

impl Sampler {
    pub(crate) fn flags(&self, flag: &mut impl FnMut(&str, String)) {
        match self {
            Sampler::None => {}
            Sampler::Pid(pid) => flag("monitor-pid", pid.to_string()),
            Sampler::Agent {
                addr,
                pid,
                token_file,
            } => {
                flag("agent", addr.clone());
                if let Some(pid) = pid {
                    flag("agent-pid", pid.to_string());
                }
                if let Some(file) = token_file {
                    flag("agent-token-file", file.clone());
                }
            }
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
    /// `--agent HOST:PORT`: `bench-client agent` on the target's host, sampling it there.
    pub agent: Option<String>,
}

impl Target {
    /// Where the clients read the target's figures: its agent, else its local process, else nowhere.
    pub fn sampler(&self) -> Sampler {
        match (&self.agent, self.pid) {
            (Some(addr), _) => Sampler::Agent {
                addr: addr.clone(),
                pid: None,
                token_file: None,
            },
            (None, Some(pid)) => Sampler::Pid(pid),
            (None, None) => Sampler::None,
        }
    }

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
                agent: None,
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
                    agent: None,
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
    pub fn name(&self) -> &str {
        match self {
            Sut::BenchServer => "bench-server",
            Sut::Peer(p) => &p.name,
            Sut::External(_) => "external",
        }
    }

    /// Whether wsbench starts it (and so can stop it, pin it and sample it).
    pub(crate) fn started_here(&self) -> bool {
        !matches!(self, Sut::External(_))
    }

    /// `--sut a,b,…`: bench-server and the project's peers (`peer`, `peer-config`, `peer:config`), each once.
    pub fn parse_list(text: &str) -> Result<Vec<Sut>> {
        Sut::parse_list_in(&Catalog::project()?, text)
    }

    /// `--sut a,b,…` against the peers of `catalog`.
    pub fn parse_list_in(catalog: &Catalog, text: &str) -> Result<Vec<Sut>> {
        let mut out: Vec<Sut> = Vec::new();
        for name in text.split(',').map(str::trim) {
            let sut = match name {
                "bench-server" => Sut::BenchServer,
                other => match catalog.resolve(other) {
                    Some(p) => Sut::Peer(p),
                    None => bail!(
                        "--sut: unknown server {other:?}: bench-server, {} (`cargo xtask peers` lists them; a \
                         server of your own: --target URL)",
                        catalog.names().join(", ")
                    ),
                },
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
        let e = Sut::parse_list("nginx").unwrap_err().to_string();
        assert!(e.contains("--target"), "{e}");
    }
}
