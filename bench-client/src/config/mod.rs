//! The validated configuration of a `run`: raw flags → [`RunConfig`] (the one place flags are checked
//! against each other), resolved target address, request path and stop condition.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use bytes::Bytes;
use http::header::HeaderName;
use http::uri::{PathAndQuery, Uri};
use http::{HeaderValue, Method};

use crate::flags::{usage_error, Format, HttpEngine, HttpVersion, RunArgs};
use crate::token::{Token, TOKEN_ENV};

mod shape;

use crate::host;
use crate::operation::{Operation, Service};
pub use shape::{AbortRule, Shape};

/// When the measured interval ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// After this long (CXF's time-based runs).
    Duration(Duration),
    /// After this many calls in total, ok or failed (CXF's count-based runs).
    Requests(u64),
}

/// The server's address when no URL is given: bench-server's default.
pub(crate) const DEFAULT_URL: &str = "http://127.0.0.1:8080";

/// What is driven: where and with which request line.
#[derive(Debug, Clone)]
pub struct Target {
    /// The URL as given.
    pub url: String,
    /// `https://`: the TLS settings (the server name is the URL's host).
    pub tls: Option<Tls>,
    /// The address resolved before the run (connections follow the name if it moves: `engine/resolve.rs`).
    pub addr: SocketAddr,
    /// The URL's host when it is a name, not an address: looked up again after a connect fails.
    pub name: Option<String>,
    /// The address family `--ipv4`/`--ipv6` asked for, also when the name is looked up again.
    pub family: Option<Family>,
    /// `Host` header value.
    pub host: HeaderValue,
    /// Origin-form request target, e.g. `/services/CustomerService`.
    pub path: PathAndQuery,
    /// The URL has a path of its own (every operation posts there, not to its service's path).
    pub own_path: bool,
}

impl Target {
    /// The full URL requests go to (for the summary).
    pub fn request_url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!(
            "{scheme}://{}{}",
            self.host.to_str().unwrap_or("?"),
            self.path
        )
    }
}

/// How an `https://` server is verified.
#[derive(Debug, Clone)]
pub struct Tls {
    /// The name the certificate must carry (the URL's host).
    pub server_name: String,
    /// PEM certificates trusted besides the built-in web roots (`--cacert`), read at validation.
    pub extra_roots_pem: Option<Vec<u8>>,
    /// `--insecure`: no verification at all.
    pub insecure: bool,
}

/// What a plain-HTTP (`http-get`) load sends besides the URL: `-m`, `-H`, `--body`.
#[derive(Debug, Clone, Default)]
pub struct Custom {
    /// `None`: GET, or POST with a body.
    pub method: Option<Method>,
    /// Extra headers, for every operation.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub body: Option<Bytes>,
    /// `--expect-body`: the body every response must have.
    pub expect_body: Option<Bytes>,
}

#[derive(Debug, Clone)]
pub struct RunConfig {
    pub target: Target,
    pub operation: Operation,
    pub custom: Custom,
    /// HTTP/2 (h2c on http://, ALPN h2 on https://) instead of HTTP/1.1.
    pub http2: bool,
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
    /// `--verify-only`: one checked call per request variant instead of a load.
    pub verify_only: bool,
    pub format: Format,
    pub json: Option<PathBuf>,
    pub hlog: Option<PathBuf>,
    /// The time series' interval, and how often `json` is checkpointed.
    pub interval: Duration,
    /// The local addresses connections are spread over (empty: the system chooses).
    pub source_ips: Vec<IpAddr>,
    pub monitor_pid: Option<u32>,
    /// `--agent`: the server sampled on its own host.
    pub agent: Option<AgentTarget>,
    pub label: Option<String>,
    /// A mix, its seed, the arrival process, stages, thresholds (issue 43).
    pub shape: Shape,
}

/// `--agent HOST:PORT`, its token and the process it is to sample.
#[derive(Debug, Clone)]
pub struct AgentTarget {
    pub addr: String,
    pub token: Token,
    pub pid: Option<u32>,
}

/// `--agent`, its token from `--agent-token-file` or WSBENCH_AGENT_TOKEN.
fn agent_of(a: &RunArgs) -> anyhow::Result<Option<AgentTarget>> {
    let Some(addr) = &a.agent else {
        return Ok(None);
    };
    let token = Token::from_env_or_file(a.agent_token_file.as_deref())
        .map_err(|e| usage_error(format!("--agent: {e:#}")))?
        .ok_or_else(|| {
            usage_error(format!(
                "--agent needs the agent's token: {TOKEN_ENV}=… (as `bench-client agent` printed it) or \
                 --agent-token-file FILE"
            ))
        })?;
    Ok(Some(AgentTarget {
        addr: addr.clone(),
        token,
        pid: a.agent_pid,
    }))
}

/// The shortest `--interval`: shorter ones would make the timeline and the checkpoints the work.
pub(crate) const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// Without --duration or --requests a run measures this long.
pub(crate) const DEFAULT_DURATION: Duration = Duration::from_secs(10);

/// The one URL of the run: the argument or `--url`, or the default server's for a bare `--operation`.
fn url_of(a: &RunArgs) -> anyhow::Result<&str> {
    let op = a
        .operation
        .or_else(|| a.mix.as_ref().and_then(|m| m.operations().next()));
    match (a.url_arg.as_deref(), a.url.as_deref(), op) {
        (Some(_), Some(_), _) => Err(usage_error(
            "give the URL once: as an argument or with --url",
        )),
        (None, None, None) => Err(usage_error(
            "nothing to do: give a URL (and --operation for a SOAP load; see --help)",
        )),
        (Some(u), None, _) | (None, Some(u), _) => Ok(u),
        (None, None, Some(_)) => Ok(DEFAULT_URL),
    }
}

/// `--insecure` and `--cacert` onto an https:// target; refused for any other.
fn tls_options(a: &RunArgs, target: &mut Target) -> anyhow::Result<()> {
    if let Some(tls) = target.tls.as_mut() {
        tls.insecure = a.insecure;
        if let Some(path) = &a.cacert {
            tls.extra_roots_pem = Some(
                std::fs::read(path)
                    .map_err(|e| usage_error(format!("--cacert {}: {e}", path.display())))?,
            );
        }
        Ok(())
    } else if a.insecure || a.cacert.is_some() {
        Err(usage_error("--insecure and --cacert are for https:// URLs"))
    } else {
        Ok(())
    }
}

/// HTTP/2 from `--http2` or oha's `--http-version`, which must not contradict each other.
fn http2_of(a: &RunArgs) -> anyhow::Result<bool> {
    match a.compat.http_version {
        Some(HttpVersion::Http11) if a.http2 => Err(usage_error(
            "--http-version 1.1 and --http2 ask for two versions",
        )),
        Some(v) => Ok(v == HttpVersion::Http2),
        None => Ok(a.http2),
    }
}

/// When the measured interval ends: `--duration`, `--requests`, or the default duration.
fn stop_of(a: &RunArgs) -> anyhow::Result<Stop> {
    match (a.duration, a.requests) {
        (Some(d), None) if d.is_zero() => Err(usage_error("--duration must be more than 0")),
        (Some(d), None) => Ok(Stop::Duration(d)),
        (None, Some(n)) if n < a.clients => Err(usage_error(format!(
            "--requests {n} is fewer than --clients {}: every client must make at least one call",
            a.clients
        ))),
        (None, Some(n)) => Ok(Stop::Requests(n)),
        (None, None) => Ok(Stop::Duration(DEFAULT_DURATION)),
        (Some(_), Some(_)) => Err(usage_error("give --duration or --requests, not both")),
    }
}

/// The local addresses to connect from: `--source-ips`, or as many loopback addresses as the ports need.
fn source_ips_of(a: &RunArgs, target: &Target, clients: u64) -> anyhow::Result<Vec<IpAddr>> {
    let source_ips = match &a.source_ips {
        Some(text) => host::parse_source_ips(text).map_err(usage_error)?,
        None => host::auto_sources(target.addr, clients, host::local_port_range()),
    };
    if source_ips
        .iter()
        .any(|ip| ip.is_ipv4() != target.addr.is_ipv4())
    {
        return Err(usage_error(format!(
            "--source-ips: the server's address {} is of the other IP version",
            target.addr.ip()
        )));
    }
    Ok(source_ips)
}

impl RunConfig {
    /// Checks the flags and resolves the URL's host (once, before any load).
    pub fn from_args(a: RunArgs) -> anyhow::Result<RunConfig> {
        let url = url_of(&a)?;
        let operation = a
            .operation
            .or_else(|| a.mix.as_ref().and_then(|m| m.operations().next()))
            .unwrap_or(Operation::HttpGet);
        let family = match (a.compat.ipv4, a.compat.ipv6) {
            (true, _) => Some(Family::V4),
            (_, true) => Some(Family::V6),
            _ => None,
        };
        let mut target = parse_target(url, operation, family)?;
        tls_options(&a, &mut target)?;
        let custom = custom(&a, operation)?;
        let http2 = http2_of(&a)?;
        let shape = shape::of(&a, target.own_path)?;
        let stop = match &shape.stages {
            Some(s) => Stop::Duration(s.duration()),
            None => stop_of(&a)?,
        };
        // A clients ramp has a connection for each client at its peak.
        let clients = match &shape.stages {
            Some(s) if shape.ramps_clients() => s.peak() as u64,
            _ => a.clients,
        };
        if a.timeout.is_zero() || a.connect_timeout.is_zero() {
            return Err(usage_error(
                "--timeout and --connect-timeout must be more than 0",
            ));
        }
        if a.message_size.is_some() && a.mix.is_none() && operation == Operation::EchoComplexTypeDoc
        {
            return Err(usage_error(
                "echoComplexTypeDoc's size is set with --packet-size, not --message-size",
            ));
        }
        if a.interval < MIN_INTERVAL {
            return Err(usage_error("--interval must be at least 10ms"));
        }
        let source_ips = source_ips_of(&a, &target, clients)?;
        let agent = agent_of(&a)?;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
        let threads = a.threads.unwrap_or(cores).min(clients);
        Ok(RunConfig {
            target,
            operation,
            custom,
            http2,
            clients,
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
            validate_first: if a.validate_all { 0 } else { a.validate_first },
            validate_every: if a.validate_all { 1 } else { a.validate_every },
            allow_errors: a.allow_errors,
            verify_only: a.verify_only,
            format: a.format,
            json: a.json,
            hlog: a.hlog,
            interval: a.interval,
            source_ips,
            monitor_pid: a.monitor_pid,
            agent,
            label: a.label,
            shape,
        })
    }

    /// An open loop: a fixed rate, or stages ramping one.
    pub fn open_loop(&self) -> bool {
        self.rate.is_some() || self.shape.ramps_rate()
    }

    /// Every operation the run calls (one, or the mix's).
    pub fn operations(&self) -> Vec<Operation> {
        self.shape.operations(self.operation)
    }

    /// The path `op`'s requests go to: the URL's own, or its service's.
    pub(crate) fn path_of(&self, op: Operation) -> PathAndQuery {
        if self.target.own_path {
            return self.target.path.clone();
        }
        service_path(op)
    }

    /// The deadline of the measured interval, if time-based.
    pub fn duration(&self) -> Option<Duration> {
        match self.stop {
            Stop::Duration(d) => Some(d),
            Stop::Requests(_) => None,
        }
    }

    /// How many measured calls connection `conn` makes in a count-based run (the total split evenly).
    pub(crate) fn requests_for(&self, conn: u64) -> Option<u64> {
        match self.stop {
            Stop::Requests(n) => Some(n / self.clients + u64::from(conn < n % self.clients)),
            Stop::Duration(_) => None,
        }
    }
}

fn custom(a: &RunArgs, op: Operation) -> anyhow::Result<Custom> {
    let body = match (&a.body, &a.body_file) {
        (Some(text), _) => Some(Bytes::from(text.clone())),
        (None, Some(path)) => {
            Some(Bytes::from(std::fs::read(path).map_err(|e| {
                usage_error(format!("--body-file {}: {e}", path.display()))
            })?))
        }
        (None, None) => None,
    };
    let method = match &a.method {
        Some(m) => Some(
            Method::from_bytes(m.to_ascii_uppercase().as_bytes())
                .map_err(|_| usage_error(format!("-m/--method {m:?} is not an HTTP method")))?,
        ),
        None => None,
    };
    if op != Operation::HttpGet && (body.is_some() || method.is_some()) {
        return Err(usage_error(format!(
            "-m/--method and --body are for plain HTTP (--operation http-get); {op} sends its own SOAP request"
        )));
    }
    if op != Operation::HttpGet && a.expect_body.is_some() {
        return Err(usage_error(format!(
            "--expect-body is for plain HTTP (--operation http-get); {op}'s responses are checked against what it sent"
        )));
    }
    let mut headers = Vec::new();
    for h in a.compat.headers().iter().chain(&a.headers) {
        let (name, value) = h
            .split_once(':')
            .ok_or_else(|| usage_error(format!("-H {h:?}: expected `Name: value`")))?;
        let name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
            usage_error(format!("-H {h:?}: {:?} is not a header name", name.trim()))
        })?;
        let value = HeaderValue::from_str(value.trim())
            .map_err(|_| usage_error(format!("-H {h:?}: the value is not a header value")))?;
        headers.push((name, value));
    }
    Ok(Custom {
        method,
        headers,
        body,
        expect_body: a.expect_body.clone().map(Bytes::from),
    })
}

/// An address family the host must be reached by (oha's --ipv4, --ipv6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    V4,
    V6,
}

impl Family {
    /// Whether `addr` is of this family (any address is, without one).
    pub(crate) fn admits(family: Option<Family>, addr: &SocketAddr) -> bool {
        match family {
            None => true,
            Some(Family::V4) => addr.is_ipv4(),
            Some(Family::V6) => addr.is_ipv6(),
        }
    }
}

fn parse_target(url: &str, op: Operation, family: Option<Family>) -> anyhow::Result<Target> {
    let uri: Uri = url
        .parse()
        .map_err(|e| usage_error(format!("URL {url:?} is not a URL: {e}")))?;
    let (tls, default_port) = match uri.scheme_str() {
        Some("http") => (false, 80),
        Some("https") => (true, 443),
        Some(other) => {
            return Err(usage_error(format!(
                "URL scheme {other:?} is not supported; use http:// or https://"
            )))
        }
        None => {
            return Err(usage_error(format!(
                "URL {url:?} needs a scheme: http://host:port"
            )))
        }
    };
    let authority = uri
        .authority()
        .ok_or_else(|| usage_error(format!("URL {url:?} has no host")))?;
    let port = port_of(authority.as_str())
        .map_err(|p| usage_error(format!("URL {url:?}: port {p} is not a port (1 to 65535)")))?
        .unwrap_or(default_port);
    let host_name = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']');
    if host_name.is_empty() {
        return Err(usage_error(format!("URL {url:?} has no host")));
    }
    let addr = (host_name, port)
        .to_socket_addrs()
        .with_context(|| format!("resolving {host_name}:{port}"))?
        .find(|a| Family::admits(family, a))
        .with_context(|| match family {
            None => format!("{host_name} has no address"),
            Some(Family::V4) => format!("{host_name} has no IPv4 address (--ipv4)"),
            Some(Family::V6) => format!("{host_name} has no IPv6 address (--ipv6)"),
        })?;
    let host = HeaderValue::from_str(authority.as_str())
        .map_err(|e| usage_error(format!("URL host: {e}")))?;
    let given = uri.path_and_query().filter(|p| p.as_str() != "/");
    let path = match given {
        Some(p) => p.clone(),
        None => service_path(op),
    };
    Ok(Target {
        url: url.to_owned(),
        tls: tls.then(|| Tls {
            server_name: host_name.to_owned(),
            extra_roots_pem: None,
            insecure: false,
        }),
        addr,
        name: host_name
            .parse::<IpAddr>()
            .is_err()
            .then(|| host_name.to_owned()),
        family,
        host,
        path,
        own_path: given.is_some(),
    })
}

/// Where an operation posts when the URL has no path of its own.
fn service_path(op: Operation) -> PathAndQuery {
    match op.service() {
        Service::Cxf => PathAndQuery::from_static(bench_proto::cxf::PATH),
        Service::Customer => PathAndQuery::from_static(bench_proto::customer::PATH),
        Service::Ossj => PathAndQuery::from_static(bench_proto::ossj::PATH),
        Service::Plain | Service::Chat => PathAndQuery::from_static("/"),
    }
}

/// The port an authority (`host`, `host:port`, `[v6]:port`) names: `Ok(None)` without one, `Err(text)`
/// for one outside 1..=65535 (the `http` crate reads `:99999` as no port at all).
fn port_of(authority: &str) -> Result<Option<u16>, String> {
    let after_host = match authority.rfind(']') {
        Some(i) => &authority[i + 1..],
        None => authority.rsplit_once('@').map_or(authority, |(_, h)| h),
    };
    match after_host.rsplit_once(':') {
        None => Ok(None),
        Some((_, "")) => Err("(empty)".to_owned()),
        Some((_, p)) => match p.parse::<u16>() {
            Ok(0) | Err(_) => Err(p.to_owned()),
            Ok(n) => Ok(Some(n)),
        },
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;
    use crate::flags::{Cli, UsageError};

    fn config(args: &[&str]) -> anyhow::Result<RunConfig> {
        let cli = Cli::try_parse_from(std::iter::once("bench-client").chain(args.iter().copied()))?;
        RunConfig::from_args(cli.run)
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
    fn wrk_style_command_lines() {
        let c = config(&[
            "-c",
            "8",
            "-d",
            "2s",
            "-t",
            "2",
            "-R",
            "100",
            "-m",
            "put",
            "-H",
            "X-A: 1",
            "--body",
            "hi",
            "https://localhost:8443/x",
            "-k",
        ])
        .unwrap();
        assert_eq!((c.clients, c.threads, c.rate), (8, 2, Some(100.0)));
        assert_eq!(c.stop, Stop::Duration(Duration::from_secs(2)));
        assert_eq!(c.operation, Operation::HttpGet);
        assert_eq!(c.custom.method, Some(Method::PUT));
        assert_eq!(c.custom.headers[0].0.as_str(), "x-a");
        assert_eq!(c.custom.body.as_deref(), Some(&b"hi"[..]));
        let tls = c.target.tls.as_ref().unwrap();
        assert!(tls.insecure);
        assert_eq!(tls.server_name, "localhost");
        assert_eq!(c.target.addr.port(), 8443);
        assert_eq!(c.target.request_url(), "https://localhost:8443/x");
        let c = config(&["-n", "5", "https://127.0.0.1/"]).unwrap();
        assert_eq!((c.stop, c.target.addr.port()), (Stop::Requests(5), 443));
        assert_eq!(port_of("[::1]"), Ok(None));
        assert_eq!(port_of("[::1]:8080"), Ok(Some(8080)));
        assert_eq!(port_of("u:p@h:1"), Ok(Some(1)));
    }

    #[test]
    fn oha_flags_shape_the_request_and_the_connection() {
        let c = config(&[
            "--http-version",
            "2",
            "-a",
            "u:p",
            "-H",
            "Host: a",
            "--host",
            "b",
            "http://127.0.0.1:9/",
        ])
        .unwrap();
        assert!(c.http2);
        let h = |name: &str| {
            let found = c.custom.headers.iter().filter(|(n, _)| n.as_str() == name);
            found.map(|(_, v)| v.to_str().unwrap()).collect::<Vec<_>>()
        };
        assert_eq!(h("authorization"), ["Basic dTpw"]);
        // -H comes after --host, so a later insert of the same header wins in the request.
        assert_eq!(h("host"), ["b", "a"]);
        let e = config(&["--http-version", "1.1", "--http2", "http://127.0.0.1:9/"]).unwrap_err();
        assert!(e.downcast_ref::<UsageError>().is_some(), "{e:#}");
        let e = config(&["--ipv6", "http://127.0.0.1:9/"]).unwrap_err();
        assert!(format!("{e:#}").contains("no IPv6 address"), "{e:#}");
        assert!(config(&["--ipv4", "http://127.0.0.1:9/"])
            .unwrap()
            .target
            .addr
            .is_ipv4());
    }

    #[test]
    fn interval_and_source_addresses() {
        let c = config(&["http://127.0.0.1:9"]).unwrap();
        assert_eq!(c.interval, Duration::from_secs(10));
        assert!(c.source_ips.is_empty(), "one connection needs no spreading");
        let c = config(&[
            "http://127.0.0.1:9",
            "--interval",
            "1s",
            "--source-ips",
            "127.0.0.1-3",
        ])
        .unwrap();
        assert_eq!(c.interval, Duration::from_secs(1));
        assert_eq!(c.source_ips.len(), 3);
        let c = config(&["http://127.0.0.1:9", "-c", "100000", "-R", "100000"]).unwrap();
        assert!(c.source_ips.len() > 1, "{:?}", c.source_ips);
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
            &["--url", "ftp://127.0.0.1:9", "--operation", "get"][..],
            &["--url", "127.0.0.1:9", "--operation", "get"],
            &["http://127.0.0.1:99999"],
            &["http://127.0.0.1:0/"],
            &["http://127.0.0.1:/"],
            &["http://[::1]:70000/"],
            &["http://127.0.0.1:9", "--url", "http://127.0.0.1:9"],
            &["--clients", "2"],
            &["http://127.0.0.1:9", "-H", "no colon"],
            &["http://127.0.0.1:9", "-m", "GE T"],
            &["http://127.0.0.1:9", "--operation", "echo", "--body", "x"],
            &[
                "http://127.0.0.1:9",
                "--operation",
                "echo",
                "--expect-body",
                "x",
            ],
            &["http://127.0.0.1:9", "--insecure"],
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
            &["http://127.0.0.1:9", "--interval", "5ms"],
            &["http://127.0.0.1:9", "--source-ips", "127.0.0.1-x"],
            &["http://127.0.0.1:9", "--source-ips", "::1"],
        ] {
            let e = config(args).unwrap_err();
            assert!(e.downcast_ref::<UsageError>().is_some(), "{args:?}: {e:#}");
        }
    }
}
