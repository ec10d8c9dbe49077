//! The OSS/J portal's orders (activations and trouble tickets over the ordered customers) and their
//! checks: every answer must be, byte for byte, the reply a back end holding the generated customers
//! writes; a failed transaction is counted under its kind, read from the portal's fault answer.

use bench_proto::customer;
use bench_proto::ossj::{self, Order, OrderFault, OrderReply};
use bytes::Bytes;

use super::mismatch::Mismatch;
use super::snippet::snippet;

/// Distinct orders a load cycles through (over [`ossj::ORDERED_CUSTOMERS`] customers).
pub(super) const VARIANTS: u64 = 64;

/// The `n`th order's body and the reply it must get.
pub(super) fn request(n: u64) -> (Bytes, OrderReply) {
    let order = Order::sample(n);
    let store = customer::generate(1, ossj::CUSTOMER_SEED, order.customer_id());
    let reply = OrderReply::serve(&order, &store[0]);
    let mut body = Vec::new();
    order.write(&mut body);
    (Bytes::from(body), reply)
}

/// The reply's canonical bytes: what every answer is compared with.
pub(super) fn exact(reply: &OrderReply) -> Vec<u8> {
    let mut out = Vec::new();
    reply.write(&mut out);
    out
}

/// The full check: the answer parsed and each field compared, naming the first that differs.
pub(super) fn validate(want: &OrderReply, body: &[u8]) -> Result<(), Mismatch> {
    let got = ossj::parse_reply(body).map_err(|source| Mismatch::NotAnOrderReply {
        source,
        body: snippet(body),
    })?;
    let fields: [(&str, String, String); 6] = [
        ("orderId", want.order_id.clone(), got.order_id.clone()),
        (
            "state",
            want.state.as_str().into(),
            got.state.as_str().into(),
        ),
        (
            "customerId",
            want.customer_id.to_string(),
            got.customer_id.to_string(),
        ),
        (
            "customerName",
            want.customer_name.clone(),
            got.customer_name.clone(),
        ),
        (
            "balance",
            format!("{:?}", want.balance),
            format!("{:?}", got.balance),
        ),
        ("reference", want.reference.clone(), got.reference.clone()),
    ];
    for (name, w, g) in fields {
        if w != g {
            return Err(Mismatch::Field {
                element: "orderResponse".to_owned(),
                difference: format!("{name}: expected {w}, received {g}"),
            });
        }
    }
    if body != exact(want) {
        return Err(Mismatch::NotAsWritten {
            body: snippet(body),
        });
    }
    Ok(())
}

/// The portal's fault answer, if `body` is one.
pub(super) fn fault(body: &[u8]) -> Option<OrderFault> {
    OrderFault::parse(body)
}
