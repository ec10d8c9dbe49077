//! The VOLANO-compatible chat server: the subset of the VOLANO chat protocol VolanoMark uses
//! (`bench_proto::chat`), with rooms created on demand, per-room membership and fan-out of every chat
//! message to every other member. [`run`] serves a bound listener until `shutdown` completes.
//!
//! Fan-out encodes each message once and writes it to each member's socket at once when nothing is
//! queued for that member (one `write` per delivery, no task woken); only what a socket refuses waits in
//! the member's bounded outbox, which its writer flushes once the socket is writable. A member whose
//! outbox is full is disconnected (counted), so a slow or dead reader never stalls its room. With `--fanout
//! uring` the writes of one message go to the kernel as one io_uring submission (`uring`), same outboxes.

#[doc(hidden)]
pub mod bench_api;
mod config;
mod conn;
mod peer;
mod room;
mod server;
mod stats;
mod uring;

pub use config::{ChatConfig, Fanout, Resolved};
pub use server::{run, serve};
pub use stats::{ChatStats, ChatStatsSnapshot};
