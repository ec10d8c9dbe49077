//! The validated configuration of a `run`: raw flags → [`RunConfig`] (the one place flags are checked
//! against each other), resolved target address, request path and stop condition.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use http::uri::{PathAndQuery, Uri};
use http::HeaderValue;

use crate::flags::{usage_error, Format, HttpEngine, RunArgs};
use crate::operation::{Operation, Service};

/// When the measured interval ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// After this long (CXF's time-based runs).
    Duration(Duration),
    /// After this many calls in total, ok or failed (CXF's count-based runs).
    Requests(u64),
}

/// What is driven: where and with which request line.
#[derive(Debug, Clone)]
pub struct Target {
    /// The URL as given.
    pub url: String,
    pub addr: SocketAddr,
    /// `Host` header value.
    pub host: HeaderValue,
    /// Origin-form request target, e.g. `/services/CustomerService`.
    pub path: PathAndQuery,
}

impl Target {
    /// The full URL requests go to (for the summary).
    pub fn request_url(&self) -> String {
        format!("http://{}{}", self.host.to_str().unwrap_or("?"), self.path)
    }
}

#[derive(Debug, Clone)]
pub struct RunConfig {
    pub target: Target,
    pub operation: Operation,
    pub clients: u64,
    pub threads: u64,
    pub rate: Option<f64>,
    pub stop: Stop,
    pub warmup: Duration,
    pub think_time: Duration,
    pub connect_timeout: Duration,
    pub timeout: Duration,
    pub keepalive: bool,
    pub http_engine: HttpEngine,
    pub packet_size: u64,
    pub message_size: Option<u64>,
    pub validate_first: u64,
    pub validate_every: u64,
    pub allow_errors: bool,
    pub format: Format,
    pub json: Option<PathBuf>,
    pub hlog: Option<PathBuf>,
    pub monitor_pid: Option<u32>,
    pub label: Option<String>,
}

/// Without --duration or --requests a run measures this long.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);

impl RunConfig {
    /// Checks the flags and resolves the URL's host (once, before any load).
    pub fn from_args(a: RunArgs) -> anyhow::Result<RunConfig> {
        let target = parse_target(&a.url, a.operation)?;
        let stop = match (a.duration, a.requests) {
            (Some(d), None) if d.is_zero() => return Err(usage_error("--duration must be more than 0")),
            (Some(d), None) => Stop::Duration(d),
            (None, Some(n)) if n < a.clients => {
                return Err(usage_error(format!(
                    "--requests {n} is fewer than --clients {}: every client must make at least one call",
                    a.clients
                )))
            }
            (None, Some(n)) => Stop::Requests(n),
            (None, None) => Stop::Duration(DEFAULT_DURATION),
            (Some(_), Some(_)) => return Err(usage_error("give --duration or --requests, not both")),
        };
        if a.timeout.is_zero() || a.connect_timeout.is_zero() {
            return Err(usage_error(
                "--timeout and --connect-timeout must be more than 0",
            ));
        }
        if a.message_size.is_some() && a.operation == Operation::EchoComplexTypeDoc {
            return Err(usage_error(
                "echoComplexTypeDoc's size is set with --packet-size, not --message-size",
            ));
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
        let threads = a.threads.unwrap_or(cores).min(a.clients);
        Ok(RunConfig {
            target,
            operation: a.operation,
            clients: a.clients,
            threads,
            rate: a.rate,
            stop,
            warmup: a.warmup,
            think_time: a.think_time,
            connect_timeout: a.connect_timeout,
            timeout: a.timeout,
            keepalive: !a.no_keepalive,
            http_engine: a.http_engine,
            packet_size: a.packet_size,
            message_size: a.message_size,
            validate_first: a.validate_first,
            validate_every: a.validate_every,
            allow_errors: a.allow_errors,
            format: a.format,
            json: a.json,
            hlog: a.hlog,
            monitor_pid: a.monitor_pid,
            label: a.label,
        })
    }

    /// The deadline of the measured interval, if time-based.
    pub fn duration(&self) -> Option<Duration> {
        match self.stop {
            Stop::Duration(d) => Some(d),
            Stop::Requests(_) => None,
        }
    }

    /// How many measured calls connection `conn` makes in a count-based run (the total split evenly).
    pub fn requests_for(&self, conn: u64) -> Option<u64> {
        match self.stop {
            Stop::Requests(n) => Some(n / self.clients + u64::from(conn < n % self.clients)),
            Stop::Duration(_) => None,
        }
    }
}

fn parse_target(url: &str, op: Operation) -> anyhow::Result<Target> {
    let uri: Uri = url
        .parse()
        .map_err(|e| usage_error(format!("--url {url:?} is not a URL: {e}")))?;
    match uri.scheme_str() {
        Some("http") => {}
        Some(other) => {
            return Err(usage_error(format!(
                "--url scheme {other:?} is not supported; use http://"
            )))
        }
        None => {
            return Err(usage_error(format!(
                "--url {url:?} needs a scheme: http://host:port"
            )))
        }
    }
    let authority = uri
        .authority()
        .ok_or_else(|| usage_error(format!("--url {url:?} has no host")))?;
    let port = authority.port_u16().unwrap_or(80);
    let host_name = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']');
    let addr = (host_name, port)
        .to_socket_addrs()
        .with_context(|| format!("resolving {host_name}:{port}"))?
        .next()
        .with_context(|| format!("{host_name} has no address"))?;
    let host = HeaderValue::from_str(authority.as_str())
        .map_err(|e| usage_error(format!("--url host: {e}")))?;
    let given = uri.path_and_query().filter(|p| p.as_str() != "/");
    let path = match (given, op.service()) {
        (Some(p), _) => p.clone(),
        (None, Service::Cxf) => PathAndQuery::from_static(bench_proto::cxf::PATH),
        (None, Service::Customer) => PathAndQuery::from_static(bench_proto::customer::PATH),
        (None, Service::Plain | Service::Chat) => PathAndQuery::from_static("/"),
    };
    Ok(Target {
        url: url.to_owned(),
        addr,
        host,
        path,
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;
    use crate::flags::{Cli, UsageError};

    fn config(args: &[&str]) -> anyhow::Result<RunConfig> {
        let cli = Cli::try_parse_from(std::iter::once("bench-client").chain(args.iter().copied()))?;
        RunConfig::from_args(cli.run.expect("run flags"))
    }

    #[test]
    fn soap_operations_post_to_their_service_unless_the_url_has_a_path() {
        let c = config(&[
            "--url",
            "http://127.0.0.1:8080",
            "--operation",
            "echoComplexTypeDoc",
        ])
        .unwrap();
        assert_eq!(c.target.path.as_str(), bench_proto::cxf::PATH);
        assert_eq!(c.target.addr, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(c.target.host, "127.0.0.1:8080");
        let c = config(&["--url", "http://127.0.0.1:9/", "--operation", "echo"]).unwrap();
        assert_eq!(c.target.path.as_str(), bench_proto::customer::PATH);
        let c = config(&[
            "--url",
            "http://127.0.0.1:9/cxf/x?y=1",
            "--operation",
            "echo",
        ])
        .unwrap();
        assert_eq!(c.target.path.as_str(), "/cxf/x?y=1");
        let c = config(&["--url", "http://127.0.0.1:9", "--operation", "http-get"]).unwrap();
        assert_eq!(c.target.path.as_str(), "/");
        assert_eq!(c.stop, Stop::Duration(DEFAULT_DURATION));
    }

    #[test]
    fn requests_are_split_over_clients_exactly() {
        let args = [
            "--url",
            "http://127.0.0.1:9",
            "--operation",
            "get",
            "--clients",
            "3",
            "--requests",
            "10",
        ];
        let c = config(&args).unwrap();
        let per: Vec<_> = (0..3).map(|i| c.requests_for(i).unwrap()).collect();
        assert_eq!(per, [4, 3, 3]);
        assert_eq!(c.threads, c.threads.min(3));
    }

    #[test]
    fn impossible_combinations_are_usage_errors() {
        for args in [
            &["--url", "https://127.0.0.1:9", "--operation", "get"][..],
            &["--url", "127.0.0.1:9", "--operation", "get"],
            &[
                "--url",
                "http://127.0.0.1:9",
                "--operation",
                "get",
                "--clients",
                "5",
                "--requests",
                "4",
            ],
            &[
                "--url",
                "http://127.0.0.1:9",
                "--operation",
                "get",
                "--duration",
                "0s",
            ],
            &[
                "--url",
                "http://127.0.0.1:9",
                "--operation",
                "echoComplexTypeDoc",
                "--message-size",
                "1K",
            ],
        ] {
            let e = config(args).unwrap_err();
            assert!(e.downcast_ref::<UsageError>().is_some(), "{args:?}: {e:#}");
        }
    }
}
