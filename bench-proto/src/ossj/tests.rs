use super::*;
use crate::customer;

fn written(order: &Order) -> Vec<u8> {
    let mut out = Vec::new();
    order.write(&mut out);
    out
}

#[test]
fn sample_orders_round_trip() {
    for n in 0..40 {
        let order = Order::sample(n);
        let back = parse_order(&written(&order)).unwrap();
        assert_eq!(back, order);
        assert!((FIRST_CUSTOMER..FIRST_CUSTOMER + ORDERED_CUSTOMERS).contains(&order.customer_id()));
    }
}

#[test]
fn an_order_written_by_hand_is_read() {
    let doc = br#"<?xml version="1.0"?>
<!-- from the portal -->
<p:troubleTicket xmlns:p="urn:wsbench:ossj:portal:1" orderId="TT-1">
  <severity> major </severity>
  <customerId>42</customerId>
  <description><![CDATA[a <b>]]> &amp; c</description>
</p:troubleTicket>
"#;
    let order = parse_order(doc).unwrap();
    assert_eq!(
        order,
        Order::Ticket(Ticket {
            order_id: "TT-1".into(),
            customer_id: 42,
            severity: Severity::Major,
            description: "a <b> & c".into(),
        })
    );
    // In the default namespace the fields would be qualified: they must say `xmlns=""`.
    let default_ns = r#"<serviceActivation xmlns="urn:wsbench:ossj:portal:1" orderId="a"><customerId xmlns="">1</customerId><service xmlns="">x</service><action xmlns="">resume</action></serviceActivation>"#;
    assert!(parse_order(default_ns.as_bytes()).is_ok());
    let qualified = default_ns.replacen(r#"<service xmlns="">"#, "<service>", 1);
    let err = parse_order(qualified.as_bytes()).unwrap_err().to_string();
    assert!(err.contains("<service> in a namespace"), "{err}");
}

#[test]
fn invalid_orders_are_refused_with_the_reason() {
    let ok = r#"<o:serviceActivation xmlns:o="urn:wsbench:ossj:portal:1" orderId="SA-1"><customerId>7</customerId><service>iptv-hd</service><action>activate</action></o:serviceActivation>"#;
    assert!(parse_order(ok.as_bytes()).is_ok());
    let cases: [(&str, &str, &str); 13] = [
        (
            "urn:wsbench:ossj:portal:1",
            "urn:other",
            "not a portal document",
        ),
        ("<customerId>7</customerId>", "", "missing customerId"),
        (
            "<customerId>7</customerId>",
            "<customerId>0</customerId>",
            "customerId: a positive integer",
        ),
        (
            "<customerId>7</customerId>",
            "<customerId>7</customerId><customerId>8</customerId>",
            "<customerId> given twice",
        ),
        (
            "<action>activate</action>",
            "<action>explode</action>",
            "action: one of activate",
        ),
        (
            "<service>iptv-hd</service>",
            "<service>iptv hd</service>",
            "service: 1 to 64",
        ),
        (
            "<service>iptv-hd</service>",
            "<service><b>x</b></service>",
            "may not hold elements",
        ),
        (
            "<service>iptv-hd</service>",
            "<service>iptv-hd</service><extra/>",
            "unexpected element <extra>",
        ),
        (
            "orderId=\"SA-1\"",
            "orderId=\"SA-1\" rush=\"yes\"",
            "unexpected attribute rush",
        ),
        ("orderId=\"SA-1\"", "", "missing orderId"),
        (
            "</o:serviceActivation>",
            "</o:serviceActivation><x/>",
            "after the root",
        ),
        ("</o:serviceActivation>", "", "not well-formed"),
        (
            "<action>activate</action>",
            "<action>activate</act>",
            "not well-formed",
        ),
    ];
    for (from, to, want) in cases {
        let bad = ok.replacen(from, to, 1);
        let err = parse_order(bad.as_bytes()).unwrap_err().to_string();
        assert!(err.contains(want), "{bad}: {err}");
    }
    assert!(parse_order(b"<!DOCTYPE x []><x/>").is_err());
    assert!(parse_order(b"").is_err());
    assert!(parse_order(b"\xff").is_err());
}

#[test]
fn the_reply_names_what_the_store_holds_and_round_trips() {
    let order = Order::sample(3);
    let c = &customer::generate(1, CUSTOMER_SEED, order.customer_id())[0];
    let reply = OrderReply::serve(&order, c);
    assert_eq!(
        reply.customer_name,
        format!("{} {}", c.first_name, c.last_name)
    );
    assert_eq!(reply.state == OrderState::Accepted, c.active);
    let mut out = Vec::new();
    reply.write(&mut out);
    assert_eq!(parse_reply(&out).unwrap(), reply);
    assert!(parse_reply(&written(&order)).is_err());
}

#[test]
fn faults_name_their_kind() {
    for kind in Failure::ALL {
        let f = OrderFault {
            kind,
            detail: "no reply within 2s <&>".into(),
        };
        let mut out = Vec::new();
        f.write(&mut out);
        assert_eq!(OrderFault::parse(&out), Some(f));
        assert_eq!(Failure::parse(kind.as_str()), Some(kind));
    }
    assert_eq!(
        OrderFault::parse(b"<html>503 Service Unavailable</html>"),
        None
    );
    let from = OrderFault::from(&OrderError::Missing("orderId"));
    assert_eq!(from.kind.status(), 400);
}
