//! `bench-client run`'s flags (the default subcommand).

use std::path::PathBuf;
use std::time::Duration;

use bench_proto::shape::{Arrivals, Mix};
use bench_proto::units::parse_size;
use clap::{Args, ValueEnum};

use super::compat::Compat;
use super::output::Format;
use super::values::{count, duration, output_path, rate, run_length, timeout};
use crate::operation::Operation;

// Each flag's help names the wrk or oha flag it stands for; where the two tools use one letter for two
// things (oha's -d is a body, its -t a timeout, its -T a Content-Type), wrk's meaning wins.

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The URL to load, as --url. [wrk: the URL argument; oha: the same]
    #[arg(value_name = "URL")]
    pub url_arg: Option<String>,
    /// Server base URL, http:// or https:// (bench-server's default address, http://127.0.0.1:8080, unless
    /// given); SOAP operations post to their service's path unless the URL has its own path.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// echoComplexTypeDoc, echoStringDoc, echoBase64Doc, add, addAsync, get, echo, http-get (the default:
    /// plain HTTP, any 2xx is a success; with -m, -H and --body any endpoint).
    #[arg(long, value_name = "OP", value_parser = crate::operation::parse_request_operation)]
    pub operation: Option<Operation>,
    /// Virtual users, each on its own connection (1k = 1000). [wrk: -c/--connections; oha: -c]
    #[arg(short = 'c', long, visible_alias = "connections", default_value = "1", value_name = "N", value_parser = count)]
    pub clients: u64,
    /// Worker threads, each a single-threaded runtime (default: available cores, at most --clients).
    /// [wrk: -t/--threads]
    #[arg(short = 't', long, value_name = "N", value_parser = count)]
    pub threads: Option<u64>,
    /// Open loop: total requests per second (5000, 5000/s, 5k), each connection sending its even share
    /// on a schedule; latency is timed from each call's intended send time, the uncorrected figures
    /// beside. [wrk2: -R/--rate; oha: -q, whose free connections take whichever call is due next and
    /// whose latency is timed from the actual send unless --latency-correction]
    #[arg(short = 'R', long, visible_short_alias = 'q', value_name = "R/s", value_parser = rate)]
    pub rate: Option<f64>,
    /// Measure for this long: 30s, 2m, or bare seconds (default 10s unless --requests).
    /// [wrk: -d/--duration; oha: -z]
    #[arg(short = 'd', long, visible_short_alias = 'z', value_name = "DUR", value_parser = run_length, conflicts_with = "requests")]
    pub duration: Option<Duration>,
    /// Measure this many calls in total, ok or failed, split evenly over the clients (10k = 10000).
    /// [oha: -n]
    #[arg(short = 'n', long, value_name = "N", value_parser = count)]
    pub requests: Option<u64>,
    /// http-get: the request method (default GET; POST with --body). [oha: -m/--method]
    #[arg(short = 'm', long, value_name = "METHOD")]
    pub method: Option<String>,
    /// An extra request header, `Name: value` (repeatable). [wrk: -H/--header; oha: -H]
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,
    /// http-get: the request body. [oha: -d, which is wrk's duration here]
    #[arg(long, value_name = "TEXT", conflicts_with = "body_file")]
    pub body: Option<String>,
    /// http-get: the request body, read from FILE. [oha: -D]
    #[arg(short = 'D', long, value_name = "FILE")]
    pub body_file: Option<PathBuf>,
    /// http-get: every response body must be exactly TEXT (besides a 2xx status); any other body is a
    /// validation error, never a success.
    #[arg(long, value_name = "TEXT")]
    pub expect_body: Option<String>,
    /// Speak HTTP/2 (h2c, prior knowledge, on http://; negotiated by ALPN on https://). [oha: --http2]
    #[arg(long)]
    pub http2: bool,
    /// https://: trust the certificates in this PEM file (besides the built-in web roots).
    /// [oha: --cacert]
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// https://: do not verify the server's certificate (as curl -k). [oha: --insecure]
    #[arg(short = 'k', long)]
    pub insecure: bool,
    /// Run for this long before measuring; nothing from the warm-up is recorded.
    #[arg(long, value_name = "DUR", value_parser = duration, default_value = "0s")]
    pub warmup: Duration,
    /// Pause after each response before the next request (closed loop).
    #[arg(long, value_name = "DUR", value_parser = duration, default_value = "0s", conflicts_with = "rate")]
    pub think_time: Duration,
    /// A connection not established after this long is a connect error. [oha: --connect-timeout]
    #[arg(long, value_name = "DUR", value_parser = duration, default_value = "5s")]
    pub connect_timeout: Duration,
    /// A call without a complete response after this long is a timeout error (30s, or bare seconds).
    /// [wrk: --timeout/-T; oha: -t, which is wrk's threads here]
    #[arg(short = 'T', long, value_name = "DUR", value_parser = timeout, default_value = "30s")]
    pub timeout: Duration,
    /// A new TCP connection for every request (connection churn). [oha: --disable-keepalive]
    #[arg(long, visible_alias = "disable-keepalive")]
    pub no_keepalive: bool,
    /// The HTTP/1.1 client of the load loop: `lean` (a fast path; hyper wherever it cannot serve) or `hyper`.
    #[arg(long, value_enum, default_value_t = HttpEngine::Lean, value_name = "CLIENT")]
    pub http_engine: HttpEngine,
    /// echoComplexTypeDoc: items per message (CXF's PacketSize).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub packet_size: u64,
    /// Customer operations and echoStringDoc/echoBase64Doc: message size (1K, 100K, 1M or bytes).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub message_size: Option<u64>,
    /// Fully parse and compare the first N responses on each connection.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub validate_first: u64,
    /// …and every Nth response after them (0: only the first ones). Every response, sampled or not, is
    /// checked for its status, envelope, response element and item count before it counts as ok.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub validate_every: u64,
    /// Fully parse and compare every response (--validate-first 0 --validate-every 1).
    #[arg(long, conflicts_with_all = ["validate_first", "validate_every"])]
    pub validate_all: bool,
    /// Exit 0 even when calls failed.
    #[arg(long)]
    pub allow_errors: bool,
    /// Call the operation once per request variant and check each answer in full (status, fault, every
    /// field against what was sent), then exit: 0 when every answer is right, 1 naming the operation, the
    /// field path, the expected and received values. No load, no results document.
    #[arg(long, conflicts_with_all = ["json", "hlog"])]
    pub verify_only: bool,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Write the results document (schema wsbench.results/v1) here, atomically; `-`: to standard output
    /// (the summary then goes to standard error). [oha before 1.9: -j/--json, now `--json -`]
    #[arg(long, value_name = "FILE|-", value_parser = output_path)]
    pub json: Option<PathBuf>,
    /// Write each interval's latency histogram here as it ends, in the HdrHistogram interval log format.
    #[arg(long, value_name = "FILE")]
    pub hlog: Option<PathBuf>,
    /// Record the time series (calls, errors by kind, latencies) at this interval, and, with --json FILE,
    /// rewrite the results document (atomically, marked partial) at the end of each: a client killed
    /// mid-run leaves everything up to its last interval.
    #[arg(long, value_name = "DUR", value_parser = duration, default_value = "10s")]
    pub interval: Duration,
    /// Local addresses to spread the connections over, in turn, e.g. 127.0.0.1-127.0.0.16 or
    /// 10.0.0.5,10.0.0.6 (default: as many 127.0.0.x as the local port range needs for a loopback
    /// server, else the system's choice).
    #[arg(long, value_name = "IPS")]
    pub source_ips: Option<String>,
    /// Sample system CPU and this process's CPU, RSS, fds and threads once a second into the results.
    #[arg(long, value_name = "PID", conflicts_with = "agent")]
    pub monitor_pid: Option<u32>,
    /// Sample the server on its own host through `bench-client agent` listening there (token:
    /// WSBENCH_AGENT_TOKEN or --agent-token-file).
    #[arg(long, value_name = "HOST:PORT")]
    pub agent: Option<String>,
    /// The file holding the agent's token (its first line), instead of WSBENCH_AGENT_TOKEN.
    #[arg(long, value_name = "FILE", requires = "agent")]
    pub agent_token_file: Option<PathBuf>,
    /// The process the agent samples (its pid on the agent's host), instead of the agent's own choice.
    #[arg(long, value_name = "PID", requires = "agent")]
    pub agent_pid: Option<u32>,
    /// A label for this run in the results (e.g. clients=100).
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    /// A weighted mix of SOAP operations instead of one --operation: `get=80,add=15,echo=5`. Each call
    /// draws its operation (reproducibly, from --seed); the results keep every operation's calls, errors
    /// and latency beside the totals.
    #[arg(long, value_name = "OP=W,…", conflicts_with = "operation")]
    pub mix: Option<Mix>,
    /// The seed of the mix's draws and of Poisson arrivals: the same seed, the same sequence.
    #[arg(long, default_value_t = bench_proto::shape::DEFAULT_SEED, value_name = "N")]
    pub seed: u64,
    /// Open loop: how sends are spaced, `even` (the rate's schedule) or `poisson` (exponential gaps, seeded:
    /// independent users arriving). Latency is timed from each intended send time either way.
    #[arg(long, value_name = "even|poisson")]
    pub arrivals: Option<Arrivals>,
    /// A stage, instead of a fixed level: `FOR:clients=N` (a closed loop of N clients) or `FOR:rate=R` (an
    /// open loop at R calls/s on --clients connections), ramped linearly over FOR from the stage before
    /// (from 0 for the first); repeat the flag or separate stages by commas. The run lasts the stages.
    /// [k6: stages]
    #[arg(long = "stage", value_name = "FOR:clients=N|FOR:rate=R", conflicts_with_all = ["duration", "requests", "rate"])]
    pub stages: Vec<String>,
    /// A condition on the run's figures, k6-style: `p99<5ms`, `errors<1%`, `throughput>1000/s` (repeatable).
    /// Judged on the whole run at its end (exit 4 when one fails), and with --abort-on-fail while it runs.
    /// [k6: thresholds]
    #[arg(long = "threshold", value_name = "COND")]
    pub thresholds: Vec<String>,
    /// Stop the run as soon as a --threshold has clearly failed on the last --abort-window of calls, once
    /// --abort-grace has passed. [k6: abortOnFail; fortio: -abort-on]
    #[arg(long, requires = "thresholds")]
    pub abort_on_fail: bool,
    /// Nothing is judged during the first DUR of the measured interval.
    #[arg(long, value_name = "DUR", value_parser = duration, default_value = "10s", requires = "abort_on_fail")]
    pub abort_grace: Duration,
    /// Each judgement is on the calls of the last DUR.
    #[arg(long, value_name = "DUR", value_parser = duration, default_value = "10s", requires = "abort_on_fail")]
    pub abort_window: Duration,
    #[command(flatten)]
    pub compat: Compat,
}

/// Which HTTP/1.1 client sends the requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HttpEngine {
    /// The lean path (plain HTTP/1.1 keep-alive or close, one request in flight per connection).
    Lean,
    /// hyper's client.
    Hyper,
}
