//! The sampling agent (`bench-client agent`) and the run's side of it (`--agent HOST:PORT`).
//!
//! The agent runs where the server runs (its host, its container, or a node of a swarm) and answers, each
//! time the run asks, with a [`Reading`](crate::readings::Reading) of that host's /proc: its CPU (steal
//! included), context switches and softirqs, the server process's CPU, RSS, open fds and threads, and the
//! bytes and TCP retransmits of the server's network namespace. The run asks once a second and at the
//! ends of the measured interval, and keeps the figures beside its intervals.
//!
//! Nobody else on the network can read or drive it: the connection is TLS (the agent's certificate is
//! made when it starts, and is not what is trusted), and each side proves it holds the run's token by an
//! HMAC of the TLS session's exported keying material (RFC 5705), so a proof is worth nothing on any
//! other connection, a relaying man in the middle included. The agent says nothing before the run's
//! proof is checked; the run believes nothing before the agent's is.

pub mod serve;
pub mod session;
pub mod wire;

pub use serve::{serve, AgentConfig, Target};
pub use session::Session;
pub use wire::{Token, Welcome};
