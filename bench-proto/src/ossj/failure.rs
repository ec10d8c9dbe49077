//! A portal transaction that failed, by kind: each kind has its HTTP status and is named in the answer's
//! body, so a load generator counts it under its kind, never as throughput.

use super::flat::{self, OrderError};

/// Why the portal could not answer an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Failure {
    /// The order did not validate (the client's fault): 400.
    InvalidOrder,
    /// The broker is unreachable, refused the connection or the message, or dropped the connection: 503.
    BrokerRefused,
    /// No reply on the instance's reply queue within its deadline: 504.
    ReplyTimeout,
    /// A back end replied that it could not serve the order, or replied with something unreadable: 502.
    BackendFault,
    /// The instance already waits for as many replies as it may: 503.
    Busy,
}

impl Failure {
    pub const ALL: [Failure; 5] = [
        Failure::InvalidOrder,
        Failure::BrokerRefused,
        Failure::ReplyTimeout,
        Failure::BackendFault,
        Failure::Busy,
    ];

    /// The kind's name in answers, results documents and summaries.
    pub fn as_str(self) -> &'static str {
        match self {
            Failure::InvalidOrder => "invalid-order",
            Failure::BrokerRefused => "broker-refused",
            Failure::ReplyTimeout => "reply-timeout",
            Failure::BackendFault => "backend-fault",
            Failure::Busy => "busy",
        }
    }

    pub fn parse(s: &str) -> Option<Failure> {
        Failure::ALL.into_iter().find(|f| f.as_str() == s)
    }

    /// The HTTP status the portal answers it with.
    pub fn status(self) -> u16 {
        match self {
            Failure::InvalidOrder => 400,
            Failure::BrokerRefused | Failure::Busy => 503,
            Failure::ReplyTimeout => 504,
            Failure::BackendFault => 502,
        }
    }
}

/// The portal's answer to an order it could not serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderFault {
    pub kind: Failure,
    pub detail: String,
}

const ROOT: &str = "orderFault";

impl OrderFault {
    pub fn write(&self, out: &mut Vec<u8>) {
        flat::open_root(out, ROOT, &[("kind", self.kind.as_str())]);
        flat::leaf(out, "detail", &self.detail);
        flat::close_root(out, ROOT);
    }

    /// Reads a fault answer; `None` if `bytes` is not one (an answer from something else on the path, such
    /// as a front end's own error page).
    pub fn parse(bytes: &[u8]) -> Option<OrderFault> {
        let mut doc = flat::read(bytes).ok()?;
        if doc.root != ROOT {
            return None;
        }
        let kind = Failure::parse(&doc.attr("kind").ok()?)?;
        let detail = doc.field("detail").unwrap_or_default();
        Some(OrderFault { kind, detail })
    }
}

impl From<&OrderError> for OrderFault {
    fn from(e: &OrderError) -> Self {
        OrderFault {
            kind: Failure::InvalidOrder,
            detail: e.to_string(),
        }
    }
}
