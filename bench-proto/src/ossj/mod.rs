//! The OSS/J portal transaction (after seed 004's customer self-service portal): an order posted over
//! HTTP to an application instance, which sends it through a message broker to a back end that looks the
//! customer up and replies. This module is the transaction's vocabulary: the order documents (service
//! activation and trouble ticket, OSS/J-style XML) and their reader, the reply the back end sends and the
//! portal answers, the failures by kind, and where things live on the broker. The broker's protocol is
//! [`crate::stomp`].

mod failure;
mod flat;
mod order;
mod reply;

#[cfg(test)]
mod tests;

pub use failure::{Failure, OrderFault};
pub use flat::OrderError;
pub use order::{parse_order, Action, Activation, Order, Severity, Ticket};
pub use reply::{parse_reply, OrderReply, OrderState};

/// Where the portal takes orders (HTTP POST, `Content-Type: text/xml`).
pub const PATH: &str = "/oss/portal";
/// The namespace of the portal's documents (their root element; the fields are unqualified).
pub const NS: &str = "urn:wsbench:ossj:portal:1";
/// The queue the application instances send orders to and the back ends consume.
pub const ORDERS_QUEUE: &str = "/queue/ossj.orders";
/// An application instance's reply queue is this prefix and the instance's own name.
pub const REPLY_QUEUE_PREFIX: &str = "/queue/ossj.replies.";
/// The STOMP header a back end's reply carries when it could not serve the order (its value the reason).
pub const FAULT_HEADER: &str = "ossj-fault";
/// Seed of the back ends' customer store (`crate::customer::generate`), so a client can predict each reply.
pub const CUSTOMER_SEED: u64 = 0x5753_4245_4e43_4821;
/// Id of the store's first customer; the rest follow consecutively.
pub const FIRST_CUSTOMER: u64 = 1;
/// Customers a back end holds unless told otherwise.
pub const DEFAULT_CUSTOMERS: u64 = 10_000;
/// Customers a load's orders name (ids `FIRST_CUSTOMER ..`); a back end must hold at least these.
pub const ORDERED_CUSTOMERS: u64 = 1_000;
/// The largest order document a portal reads (orders are about 300 bytes).
pub const MAX_ORDER_BYTES: usize = 8 * 1024;
