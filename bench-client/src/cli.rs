//! The command line (docs/contracts.md): `run` (the default subcommand), `chat` and `merge`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::operation::Operation;
use bench_proto::units::{parse_duration, parse_rate, parse_size};

#[derive(Debug, Parser)]
#[command(
    name = "bench-client",
    version,
    about = "wsbench load generator: closed- and open-loop SOAP/HTTP load with HDR latency histograms",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// `bench-client --url … --operation …` is `bench-client run --url … --operation …`.
    #[command(flatten)]
    pub run: Option<RunArgs>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate SOAP/HTTP load and report throughput and latency (the default subcommand).
    Run(RunArgs),
    /// Merge results documents of several client processes or hosts exactly (histograms added).
    Merge(MergeArgs),
    /// VolanoMark's chat workload against a VOLANO-protocol chat server: score, fan-out latency, validation.
    Chat(crate::chat::ChatArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// wsbench's summary.
    Human,
    /// The summary plus the CXF harness's "Overall Test Result" block.
    Cxf,
}

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

#[derive(Debug, Clone, Args)]
pub struct MergeArgs {
    /// Results documents to merge.
    #[arg(required = true, value_name = "FILE")]
    pub inputs: Vec<PathBuf>,
    /// Where to write the merged document.
    #[arg(long, value_name = "FILE")]
    pub json: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// A command line that parses but asks for something impossible: exit status 2, like clap's own errors.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Parses the command line, runs the subcommand, and maps the outcome to the exit status of the contract:
/// 0 ok, 1 errors during the run (without --allow-errors) or failure to start, 2 usage.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing();
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) if e.downcast_ref::<UsageError>().is_some() => {
            eprintln!("bench-client: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("bench-client: error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match (cli.command, cli.run) {
        (Some(Command::Run(args)), _) | (None, Some(args)) => crate::run_cmd::run(args),
        (Some(Command::Merge(args)), _) => crate::merge_cmd::run(args),
        (Some(Command::Chat(args)), _) => crate::chat::run_cli(args),
        (None, None) => {
            Err(UsageError("nothing to do: give --url and --operation (see --help)".into()).into())
        }
    }
}

fn init_tracing() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    // Ignored if a subscriber is already set (tests calling in-process).
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("bench-client").chain(args.iter().copied()))
    }

    #[test]
    fn run_is_the_default_subcommand() {
        let a = parse(&["--operation", "echo", "--clients", "4"]).unwrap();
        assert_eq!(a.run.as_ref().unwrap().url, "http://127.0.0.1:8080");
        assert!(a.command.is_none());
        let r = a.run.unwrap();
        assert_eq!(r.operation, Operation::Echo);
        assert_eq!(r.clients, 4);
        let b = parse(&[
            "run",
            "--url",
            "http://x",
            "--operation",
            "get",
            "--duration",
            "8h",
        ])
        .unwrap();
        let Some(Command::Run(r)) = b.command else {
            panic!("expected run")
        };
        assert_eq!(r.duration, Some(Duration::from_secs(28_800)));
    }

    #[test]
    fn merge_needs_no_run_flags() {
        let a = parse(&["merge", "a.json", "b.json", "--json", "out.json"]).unwrap();
        let Some(Command::Merge(m)) = a.command else {
            panic!("expected merge")
        };
        assert_eq!(m.inputs.len(), 2);
    }

    #[test]
    fn usage_errors() {
        assert!(
            parse(&["--url", "http://x"]).is_err(),
            "--operation is required"
        );
        assert!(parse(&["--url", "http://x", "--operation", "nope"]).is_err());
        let both = [
            "--url",
            "http://x",
            "--operation",
            "echo",
            "--duration",
            "1s",
            "--requests",
            "5",
        ];
        assert!(parse(&both).is_err());
        assert!(parse(&["--url", "http://x", "--operation", "echo", "--clients", "0"]).is_err());
        assert!(parse(&[
            "--url",
            "http://x",
            "--operation",
            "echo",
            "--message-size",
            "big"
        ])
        .is_err());
        assert!(parse(&["merge", "--json", "out.json"]).is_err());
    }
}
