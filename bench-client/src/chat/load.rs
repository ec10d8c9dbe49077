//! `bench-client chat`'s flags and the validated workload they describe.

use std::net::{SocketAddr, ToSocketAddrs};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::cli::UsageError;
use bench_proto::units::parse_duration;

/// `bench-client chat`: VolanoMark's workload (one TCP connection per user, rooms of users, every message
/// relayed to the rest of the room) against a VOLANO-protocol chat server.
#[derive(Debug, Clone, Args)]
pub struct ChatArgs {
    /// The chat server, HOST:PORT (VolanoMark's -host and -port).
    #[arg(long, value_name = "HOST:PORT")]
    pub addr: String,
    /// Rooms (VolanoMark's -rooms).
    #[arg(long, default_value_t = 50, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub rooms: u32,
    /// Users per room, at least 2 (VolanoMark's -users).
    #[arg(long, default_value_t = 20, value_name = "N", value_parser = clap::value_parser!(u32).range(2..))]
    pub users: u32,
    /// Messages each user sends (VolanoMark's -count; 0, "no limit", is not offered: a run must end).
    #[arg(long, default_value_t = 100, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub count: u32,
    /// 0: paced, one message in flight per room, users taking turns (VolanoMark's default). Otherwise each
    /// user sends a message every DUR.
    #[arg(long, default_value = "0s", value_name = "DUR", value_parser = parse_duration)]
    pub pause: Duration,
    /// Repeat the test this many times, each with fresh connections; with more than one, the score is the
    /// mean of all but the first (VolanoMark's methodology: 4 runs, mean of the last 3).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// Number of the first room (VolanoMark's -start): rooms are named `Room<start>`, `Room<start+1>`, …
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub start: u32,
    /// Worker threads of the client (default: available cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub threads: Option<u64>,
    /// A user that waits longer than this for a packet it expects (connecting, entering, the next
    /// message) fails the run.
    #[arg(long, default_value = "30s", value_name = "DUR", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Exit 0 even when the run had errors.
    #[arg(long)]
    pub allow_errors: bool,
    /// Write the results document (schema wsbench.results/v1) here, atomically.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Sample system CPU and this process's RSS once a second into the results.
    #[arg(long, value_name = "PID")]
    pub monitor_pid: Option<u32>,
    /// A label for this run in the results.
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
}

/// What one chat benchmark does, validated.
#[derive(Debug, Clone)]
pub struct ChatLoad {
    pub addr: SocketAddr,
    pub rooms: u32,
    pub users: u32,
    pub count: u32,
    /// Zero: paced (token ring).
    pub pause: Duration,
    pub runs: u32,
    pub start: u32,
    pub timeout: Duration,
}

impl ChatLoad {
    /// A paced VolanoMark run of one pass, for tests and benches.
    pub fn new(addr: SocketAddr, rooms: u32, users: u32, count: u32) -> ChatLoad {
        ChatLoad {
            addr,
            rooms,
            users,
            count,
            pause: Duration::ZERO,
            runs: 1,
            start: 1,
            timeout: Duration::from_secs(30),
        }
    }

    pub fn from_args(args: &ChatArgs) -> anyhow::Result<ChatLoad> {
        let addr = args
            .addr
            .to_socket_addrs()
            .map_err(|e| UsageError(format!("--addr {}: {e} (expected HOST:PORT)", args.addr)))?
            .next()
            .ok_or_else(|| UsageError(format!("--addr {}: resolves to no address", args.addr)))?;
        let load = ChatLoad {
            addr,
            rooms: args.rooms,
            users: args.users,
            count: args.count,
            pause: args.pause,
            runs: args.runs,
            start: args.start,
            timeout: args.timeout,
        };
        load.validate()?;
        Ok(load)
    }

    pub fn validate(&self) -> anyhow::Result<()> {
        let usage = |m: &str| Err(UsageError(m.to_owned()).into());
        if self.rooms == 0 || self.count == 0 || self.runs == 0 {
            return usage("--rooms, --count and --runs must be at least 1");
        }
        if self.users < 2 {
            return usage("--users must be at least 2");
        }
        if self.start.checked_add(self.rooms).is_none() {
            return usage("--start + --rooms is too large");
        }
        if self.timeout.is_zero() {
            return usage("--timeout must be positive");
        }
        Ok(())
    }

    pub fn paced(&self) -> bool {
        self.pause.is_zero()
    }

    /// Connections (users) in one run.
    pub fn connections(&self) -> u64 {
        u64::from(self.rooms) * u64::from(self.users)
    }

    /// Messages one run sends.
    pub fn messages(&self) -> u64 {
        self.connections() * u64::from(self.count)
    }
}

/// `--threads`, or the available cores.
pub fn threads(args: &ChatArgs) -> u64 {
    args.threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, NonZeroUsize::get) as u64)
}
