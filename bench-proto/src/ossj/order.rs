//! The orders a customer posts to the portal: a service activation (JSR 89-style: a service of the
//! customer's to activate, modify, suspend, resume or deactivate) or a trouble ticket (JSR 91-style: a
//! fault reported with its severity).

use super::flat::{self, customer_id, identifier, OrderError};

/// An order, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Order {
    Activation(Activation),
    Ticket(Ticket),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activation {
    pub order_id: String,
    pub customer_id: u64,
    /// The service's catalogue name, e.g. `broadband-100`.
    pub service: String,
    pub action: Action,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket {
    pub order_id: String,
    pub customer_id: u64,
    pub severity: Severity,
    /// What the customer reports: 1 to 512 characters.
    pub description: String,
}

/// What a service activation asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Activate,
    Modify,
    Suspend,
    Resume,
    Deactivate,
}

/// How bad a reported fault is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Minor,
    Major,
    Critical,
}

macro_rules! words {
    ($ty:ident, $field:literal, $($v:ident = $s:literal),+) => {
        impl $ty {
            pub const ALL: &'static [$ty] = &[$($ty::$v),+];

            pub fn as_str(self) -> &'static str {
                match self { $($ty::$v => $s),+ }
            }

            fn parse(s: String) -> Result<$ty, OrderError> {
                match s.trim() {
                    $($s => Ok($ty::$v),)+
                    _ => Err(OrderError::Invalid { field: $field, why: concat!("one of", $(" ", $s),+), got: s }),
                }
            }
        }
    };
}

words!(
    Action,
    "action",
    Activate = "activate",
    Modify = "modify",
    Suspend = "suspend",
    Resume = "resume",
    Deactivate = "deactivate"
);
words!(
    Severity,
    "severity",
    Minor = "minor",
    Major = "major",
    Critical = "critical"
);

const ACTIVATION: &str = "serviceActivation";
const TICKET: &str = "troubleTicket";

impl Order {
    pub fn order_id(&self) -> &str {
        match self {
            Order::Activation(a) => &a.order_id,
            Order::Ticket(t) => &t.order_id,
        }
    }

    pub fn customer_id(&self) -> u64 {
        match self {
            Order::Activation(a) => a.customer_id,
            Order::Ticket(t) => t.customer_id,
        }
    }

    /// The order's document, as the portal takes it and as it travels to the back ends.
    pub fn write(&self, out: &mut Vec<u8>) {
        let mut id = itoa::Buffer::new();
        let id = id.format(self.customer_id());
        match self {
            Order::Activation(a) => {
                flat::open_root(out, ACTIVATION, &[("orderId", &a.order_id)]);
                flat::leaf(out, "customerId", id);
                flat::leaf(out, "service", &a.service);
                flat::leaf(out, "action", a.action.as_str());
                flat::close_root(out, ACTIVATION);
            }
            Order::Ticket(t) => {
                flat::open_root(out, TICKET, &[("orderId", &t.order_id)]);
                flat::leaf(out, "customerId", id);
                flat::leaf(out, "severity", t.severity.as_str());
                flat::leaf(out, "description", &t.description);
                flat::close_root(out, TICKET);
            }
        }
    }

    /// The `n`th order of a load: activations and tickets alternating over the ordered customers.
    pub fn sample(n: u64) -> Order {
        let customer_id = super::FIRST_CUSTOMER + (n * 7919) % super::ORDERED_CUSTOMERS;
        if n % 2 == 0 {
            Order::Activation(Activation {
                order_id: format!("SA-{n:06}"),
                customer_id,
                service: ["broadband-100", "voice-basic", "iptv-hd"][(n / 2 % 3) as usize].into(),
                action: Action::ALL[(n / 2 % Action::ALL.len() as u64) as usize],
            })
        } else {
            Order::Ticket(Ticket {
                order_id: format!("TT-{n:06}"),
                customer_id,
                severity: Severity::ALL[(n / 2 % Severity::ALL.len() as u64) as usize],
                description: "no dial tone since this morning & the line crackles <loudly>".into(),
            })
        }
    }
}

/// Reads and validates an order document (the caller bounds its size: [`super::MAX_ORDER_BYTES`]).
pub fn parse_order(bytes: &[u8]) -> Result<Order, OrderError> {
    let mut doc = flat::read(bytes)?;
    let order_id = identifier("orderId", doc.attr("orderId")?)?;
    let customer_id = customer_id(doc.field("customerId")?)?;
    let order = match doc.root.as_str() {
        ACTIVATION => Order::Activation(Activation {
            order_id,
            customer_id,
            service: identifier("service", doc.field("service")?)?,
            action: Action::parse(doc.field("action")?)?,
        }),
        TICKET => {
            let description = doc.field("description")?;
            let chars = description.chars().count();
            if !(1..=512).contains(&chars) {
                return Err(OrderError::Invalid {
                    field: "description",
                    why: "1 to 512 characters",
                    got: description.chars().take(40).collect(),
                });
            }
            Order::Ticket(Ticket {
                order_id,
                customer_id,
                severity: Severity::parse(doc.field("severity")?)?,
                description,
            })
        }
        _ => return Err(OrderError::Root(std::mem::take(&mut doc.root))),
    };
    doc.done()?;
    Ok(order)
}
