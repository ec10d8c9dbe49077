//! `bench-client run`'s flags (the default subcommand).

use std::path::PathBuf;
use std::time::Duration;

use bench_proto::units::{parse_duration, parse_rate, parse_size};
use clap::{Args, ValueEnum};

use super::output::Format;
use crate::operation::Operation;

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Server base URL (bench-server's default address unless given); SOAP operations post to their
    /// service's path unless the URL has its own path.
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// echoComplexTypeDoc, echoStringDoc, echoBase64Doc, add, addAsync, get, echo, http-get.
    #[arg(long, value_name = "OP", value_parser = crate::operation::parse_request_operation)]
    pub operation: Operation,
    /// Virtual users, each on its own HTTP/1.1 connection.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub clients: u64,
    /// Worker threads, each a single-threaded runtime (default: available cores, at most --clients).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub threads: Option<u64>,
    /// Open loop: total requests per second, spread evenly over the connections (e.g. 5000 or 5000/s).
    #[arg(long, value_name = "R/s", value_parser = parse_rate)]
    pub rate: Option<f64>,
    /// Measure for this long (default 10s unless --requests).
    #[arg(long, value_name = "DUR", value_parser = parse_duration, conflicts_with = "requests")]
    pub duration: Option<Duration>,
    /// Measure this many calls in total (split evenly over the clients).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub requests: Option<u64>,
    /// Run for this long before measuring; nothing from the warm-up is recorded.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "0s")]
    pub warmup: Duration,
    /// Pause after each response before the next request (closed loop).
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "0s", conflicts_with = "rate")]
    pub think_time: Duration,
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "5s")]
    pub connect_timeout: Duration,
    /// A call without a complete response after this long is a timeout error.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "30s")]
    pub timeout: Duration,
    /// A new TCP connection for every request (connection churn).
    #[arg(long)]
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
    /// …and every Nth response after them (0: only the first ones).
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub validate_every: u64,
    /// Exit 0 even when calls failed.
    #[arg(long)]
    pub allow_errors: bool,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Write the results document (schema wsbench.results/v1) here, atomically.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write per-second latency histograms here, in the HdrHistogram interval log format.
    #[arg(long, value_name = "FILE")]
    pub hlog: Option<PathBuf>,
    /// Sample system CPU and this process's RSS once a second into the results.
    #[arg(long, value_name = "PID")]
    pub monitor_pid: Option<u32>,
    /// A label for this run in the results (e.g. clients=100).
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
}

/// Which HTTP/1.1 client sends the requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HttpEngine {
    /// The lean path (plain HTTP/1.1 keep-alive or close, one request in flight per connection).
    Lean,
    /// hyper's client.
    Hyper,
}
