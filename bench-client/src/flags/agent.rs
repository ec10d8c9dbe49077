//! `bench-client agent`'s flags.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;

/// `bench-client agent`: samples this host and the server process on it for runs elsewhere.
#[derive(Debug, Clone, Args)]
pub struct AgentArgs {
    /// Where runs reach the agent.
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:7171")]
    pub listen: SocketAddr,
    /// The server process to sample (a run may name another with --agent-pid).
    #[arg(long, value_name = "PID", conflicts_with = "port")]
    pub pid: Option<u32>,
    /// Sample the process listening on this TCP port (looked up at each run: a restarted server is found).
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,
    /// The /proc to read: the host's, mounted into a container (e.g. /host/proc).
    #[arg(long, value_name = "DIR", default_value = "/proc")]
    pub proc: PathBuf,
    /// The file holding the token (its first line), instead of WSBENCH_AGENT_TOKEN; without either, a
    /// new token is made and printed in the READY line.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
}
