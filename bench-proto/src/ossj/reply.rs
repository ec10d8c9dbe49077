//! The reply to an order: what the back end found for the customer and did. The back end sends it
//! through the broker; the portal answers it to the client as it came.

use super::flat::{self, customer_id, identifier, OrderError};
use super::order::Order;
use crate::customer::Customer;
use crate::xsd::Decimal;

/// What became of an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderState {
    /// Taken: the customer's account is active.
    Accepted,
    /// Kept for a person to look at: the customer's account is not active.
    Held,
}

impl OrderState {
    pub fn as_str(self) -> &'static str {
        match self {
            OrderState::Accepted => "accepted",
            OrderState::Held => "held",
        }
    }
}

/// The reply, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderReply {
    pub order_id: String,
    pub state: OrderState,
    pub customer_id: u64,
    /// The customer's name as the store has it (`first last`).
    pub customer_name: String,
    /// The customer's account balance as the store has it.
    pub balance: Decimal,
    /// The activation's or ticket's reference.
    pub reference: String,
}

const ROOT: &str = "orderResponse";

impl OrderReply {
    /// The back end's reply to `order` for the customer it found.
    pub fn serve(order: &Order, customer: &Customer) -> OrderReply {
        let reference = match order {
            Order::Activation(a) => {
                format!("SA.{}.{}.{}", customer.id, a.service, a.action.as_str())
            }
            Order::Ticket(t) => format!("TT.{}.{}", customer.id, t.severity.as_str()),
        };
        OrderReply {
            order_id: order.order_id().to_owned(),
            state: if customer.active {
                OrderState::Accepted
            } else {
                OrderState::Held
            },
            customer_id: customer.id,
            customer_name: format!("{} {}", customer.first_name, customer.last_name),
            balance: customer.balance,
            reference,
        }
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        let attrs = [
            ("orderId", self.order_id.as_str()),
            ("state", self.state.as_str()),
        ];
        flat::open_root(out, ROOT, &attrs);
        flat::leaf(
            out,
            "customerId",
            itoa::Buffer::new().format(self.customer_id),
        );
        flat::leaf(out, "customerName", &self.customer_name);
        let mut balance = Vec::new();
        self.balance.write(&mut balance);
        flat::leaf(
            out,
            "balance",
            std::str::from_utf8(&balance).unwrap_or_default(),
        );
        flat::leaf(out, "reference", &self.reference);
        flat::close_root(out, ROOT);
    }
}

/// Reads and validates a reply document.
pub fn parse_reply(bytes: &[u8]) -> Result<OrderReply, OrderError> {
    let mut doc = flat::read(bytes)?;
    if doc.root != ROOT {
        return Err(OrderError::Root(doc.root));
    }
    let state = match doc.attr("state")?.as_str() {
        "accepted" => OrderState::Accepted,
        "held" => OrderState::Held,
        other => {
            return Err(OrderError::Invalid {
                field: "state",
                why: "accepted or held",
                got: other.to_owned(),
            })
        }
    };
    let balance = doc.field("balance")?;
    let reply = OrderReply {
        order_id: identifier("orderId", doc.attr("orderId")?)?,
        state,
        customer_id: customer_id(doc.field("customerId")?)?,
        customer_name: doc.field("customerName")?,
        balance: Decimal::parse(balance.trim()).map_err(|_| OrderError::Invalid {
            field: "balance",
            why: "an xsd:decimal",
            got: balance,
        })?,
        reference: doc.field("reference")?,
    };
    doc.done()?;
    Ok(reply)
}
