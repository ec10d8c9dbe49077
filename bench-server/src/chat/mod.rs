//! The VOLANO-compatible chat server: the subset of the VOLANO chat protocol VolanoMark uses
//! (`bench_proto::chat`), with rooms created on demand, per-room membership and fan-out of every chat
//! message to every other member. [`run`] serves a bound listener until `shutdown` completes.
//!
//! Fan-out encodes each message once, shares the bytes with every member's bounded queue, and each
//! member's writer sends whatever has queued up in one vectored write. A member whose queue is full is
//! disconnected (counted), so a slow or dead reader never stalls its room.

#[doc(hidden)]
pub mod bench_api;
mod config;
mod conn;
mod peer;
mod room;
mod server;
mod stats;

pub use config::ChatConfig;
pub use server::{run, serve};
pub use stats::{ChatStats, ChatStatsSnapshot};
