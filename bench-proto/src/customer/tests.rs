//! Customer codec: round trips (100 KB arrays included), sizes, generator determinism, bad requests.

use super::*;
use crate::soap::SoapError;

fn bytes_of(req: &Request) -> Vec<u8> {
    let mut out = Vec::new();
    write_request(req, &mut out);
    out
}

#[test]
fn a_customer_is_about_half_a_kilobyte() {
    let customers = generate(1000, 7, 1);
    let mut total = 0;
    for c in &customers {
        let mut out = Vec::new();
        write_customer(&mut out, c);
        assert!(
            (350..800).contains(&out.len()),
            "{}",
            String::from_utf8_lossy(&out)
        );
        total += out.len();
    }
    let mean = total / customers.len();
    assert!((420..600).contains(&mean), "mean {mean}");
}

#[test]
fn generation_is_deterministic_per_seed_and_id() {
    assert_eq!(generate(50, 9, 1), generate(50, 9, 1));
    assert_ne!(generate(5, 9, 1), generate(5, 10, 1));
    // Record 31 is the same whether generated alone or in a batch.
    assert_eq!(generate(1, 9, 31)[0], generate(40, 9, 1)[30]);
    let ids: Vec<u64> = generate(3, 1, u64::MAX - 1).iter().map(|c| c.id).collect();
    assert_eq!(ids, [u64::MAX - 1, u64::MAX, 0]);
}

#[test]
fn sizes_hit_the_target_within_five_percent() {
    for target in [1_000, 1_024, 2_500, 10_000, 100_000, 102_400, 1_000_000] {
        for seed in [1, 2] {
            let customers = generate_for_size(target, seed);
            let len = bytes_of(&Request::Add(customers.clone())).len();
            let err = (len as f64 - target as f64).abs() / target as f64;
            assert!(err <= 0.05, "target {target}: {len} bytes");
            assert_eq!(generate_for_size(target, seed), customers);
        }
    }
    assert_eq!(generate_for_size(10, 1).len(), 1);
}

#[test]
fn hundred_kilobyte_arrays_round_trip() {
    let customers = generate_for_size(100 * 1024, 3);
    assert!(customers.len() > 150);
    for req in [
        Request::Add(customers.clone()),
        Request::AddAsync(customers.clone()),
        Request::Echo(customers.clone()),
    ] {
        assert_eq!(parse_request(&bytes_of(&req)).unwrap(), req);
    }
    for resp in [Response::Get(customers.clone()), Response::Echo(customers)] {
        let mut out = Vec::new();
        write_response(&resp, &mut out);
        assert_eq!(parse_response(&out).unwrap(), resp);
    }
}

#[test]
fn small_messages_round_trip() {
    let get = get_request(100, u64::MAX);
    assert_eq!(parse_request(&bytes_of(&get)).unwrap(), get);
    let summary = Response::Add(AddSummary {
        count: 20,
        first_id: 1_000_001,
        last_id: 1_000_020,
        stored: 100_000,
    });
    let mut out = Vec::new();
    write_response(&summary, &mut out);
    assert_eq!(parse_response(&out).unwrap(), summary);
    assert_eq!(
        parse_request(&bytes_of(&Request::Echo(Vec::new()))).unwrap(),
        Request::Echo(Vec::new())
    );
}

#[test]
fn bad_requests_say_which_field() {
    let req = Request::Add(generate(3, 5, 1));
    let text = String::from_utf8(bytes_of(&req)).unwrap();
    let third = text.match_indices("<balance>").nth(2).unwrap().0;
    let mut bad = text.clone();
    bad.replace_range(third..third + "<balance>".len(), "<balance>12,50");
    let err = parse_request(bad.as_bytes()).unwrap_err().to_string();
    assert!(err.starts_with("add/customer[2]/balance: '12,50"), "{err}");
    let no_email = text
        .replacen("<email>", "<mail>", 1)
        .replacen("</email>", "</mail>", 1);
    assert_eq!(
        parse_request(no_email.as_bytes()).unwrap_err().to_string(),
        "add/customer[0]/email: expected element 'email', found 'mail'"
    );
    let bad_country = text.replacen("<country>", "<country>usa", 1);
    assert!(parse_request(bad_country.as_bytes())
        .unwrap_err()
        .to_string()
        .contains("is not a valid CountryCode"));
    let bad_get = String::from_utf8(bytes_of(&get_request(1, 0)))
        .unwrap()
        .replace("<count>1<", "<count>-1<");
    assert_eq!(
        parse_request(bad_get.as_bytes()).unwrap_err().to_string(),
        "get/count: '-1' is not an xsd:unsignedInt (negative)"
    );
    let unknown = text
        .replace("<add ", "<remove ")
        .replace("</add>", "</remove>");
    assert!(matches!(
        parse_request(unknown.as_bytes()).unwrap_err(),
        SoapError::UnknownOperation { .. }
    ));
    let wrong_ns = text.replace(NS, "http://wsbench.dev/other");
    assert!(matches!(
        parse_request(wrong_ns.as_bytes()).unwrap_err(),
        SoapError::WrongNamespace { .. }
    ));
    let extra = text.replacen("</tags>", "</tags><notes>a</notes><extra/>", 1);
    assert_eq!(
        parse_request(extra.as_bytes()).unwrap_err().to_string(),
        "add/customer[0]: unexpected element 'extra'"
    );
}

#[test]
fn wsdl_is_well_formed_and_complete() {
    let doc = wsdl("http://127.0.0.1:1/services/CustomerService");
    for name in [
        "addAsync",
        "getResponse",
        "CustomerArray",
        "postalCode",
        "CustomerPort",
        NS,
    ] {
        assert!(doc.contains(name), "{name}");
    }
    let mut reader = quick_xml::Reader::from_str(&doc);
    while !matches!(reader.read_event().unwrap(), quick_xml::events::Event::Eof) {}
}
