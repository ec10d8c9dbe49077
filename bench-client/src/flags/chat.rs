//! `bench-client chat`'s flags (VolanoMark's, by their VolanoMark names where it has them).

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

use bench_proto::units::parse_duration;
use clap::Args;

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
    /// Each run ends by this: one still going is cut short (what it measured kept, counted as a timeout).
    #[arg(long, default_value = "30m", value_name = "DUR", value_parser = parse_duration)]
    pub deadline: Duration,
    /// Also check that every member sees the room's messages in one order (paced runs), as a server
    /// relaying under a room lock keeps it (bench-server does). The protocol promises only each sender's
    /// order (the default check): the VOLANO server relays without a room lock.
    #[arg(long)]
    pub check_room_order: bool,
    /// Only verify the server: two users enter the first room, exchange a message each way and leave,
    /// every packet checked (every run does this before its load); exit 1 saying what went wrong.
    #[arg(long)]
    pub verify_only: bool,
    /// Exit 0 even when the run had errors.
    #[arg(long)]
    pub allow_errors: bool,
    /// Write the results document (schema wsbench.results/v1) here, atomically.
    #[arg(long, value_name = "FILE", value_parser = super::values::output_path)]
    pub json: Option<PathBuf>,
    /// Sample system CPU and this process's RSS once a second into the results.
    #[arg(long, value_name = "PID")]
    pub monitor_pid: Option<u32>,
    /// A label for this run in the results.
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
}

impl ChatArgs {
    /// `--threads`, or the available cores.
    pub fn threads(&self) -> u64 {
        self.threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, NonZeroUsize::get) as u64
        })
    }
}
