//! The OSS/J tiers behind the portal (seed 004's architecture): the application instance's side of the
//! broker ([`Portal`]: an order sent to the orders queue, its reply awaited on the instance's own reply
//! queue, correlated by id, within a deadline) and the back end ([`Backend`]: consumes orders, looks the
//! customer up in its generated store, replies). Both speak STOMP 1.2 to the broker (`bench_proto::stomp`;
//! Apache ActiveMQ in the scenarios) over one TCP connection each, reconnecting when it breaks. The HTTP
//! side of the application instance is `crate::http` with a portal.

mod backend;
mod config;
mod link;
mod portal;

pub use backend::Backend;
pub use config::{BackendConfig, PortalConfig};
pub use portal::Portal;
