//! `POST /oss/portal` on an application instance: the order read (bounded), validated, sent through the
//! broker ([`crate::ossj::Portal`]) and its reply answered with 200; a failure answered with its kind's
//! status and an `orderFault` document naming the kind.

use std::sync::Arc;

use bench_proto::ossj::{self, Failure, OrderFault};
use http::{Request, Response, StatusCode};
use hyper::body::{Body as _, Incoming};

use super::app::App;
use super::body::{read_limited, ReadBodyError, ResponseBody};
use super::reply::{closing, with_type, TEXT_XML};
use crate::ossj::Portal;

/// Handles an order; returns the response and the request body bytes read.
pub(crate) async fn order(
    app: &Arc<App>,
    portal: &Portal,
    req: Request<Incoming>,
) -> (Response<ResponseBody>, usize) {
    let declared = req.body().size_hint().exact();
    let limit = ossj::MAX_ORDER_BYTES;
    if declared.is_some_and(|n| n > limit as u64) {
        let f = refused(portal, format!("an order is at most {limit} bytes"));
        return (closing(answer(&f)), 0);
    }
    let (budget, timeout) = (&app.request_budget, app.config.body_timeout);
    let body = match read_limited(req.into_body(), declared, limit, budget, timeout).await {
        Ok(body) => body,
        Err(e) => {
            let read = if matches!(e, ReadBodyError::TooLarge { .. }) {
                limit
            } else {
                0
            };
            return (closing(answer(&refused(portal, e.to_string()))), read);
        }
    };
    let body_in = body.bytes.len();
    let order = match ossj::parse_order(&body.bytes) {
        Ok(order) => order,
        Err(e) => return (answer(&refused(portal, e.to_string())), body_in),
    };
    drop(body);
    let resp = match portal.order(&order).await {
        Ok(reply) => with_type(StatusCode::OK, TEXT_XML, reply.into()),
        Err(f) => answer(&f),
    };
    (resp, body_in)
}

fn refused(portal: &Portal, detail: String) -> OrderFault {
    portal.refused(Failure::InvalidOrder);
    OrderFault {
        kind: Failure::InvalidOrder,
        detail,
    }
}

fn answer(f: &OrderFault) -> Response<ResponseBody> {
    let mut out = Vec::with_capacity(256);
    f.write(&mut out);
    let status = StatusCode::from_u16(f.kind.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    with_type(status, TEXT_XML, bytes::Bytes::from(out).into())
}
