//! The Customer parser on any bytes. What parses must write back and parse to the same message, faults
//! must stay small, and the one-pass echo (`serve_request`) must answer as parse-then-serialise does.

#![no_main]

use bench_proto::customer;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match customer::parse_request(data) {
        Ok(req) => {
            let mut once = Vec::new();
            customer::write_request(&req, &mut once);
            let again = customer::parse_request(&once).expect("a written request parses");
            assert_eq!(again, req, "parse(write(x)) differs");
        }
        Err(e) => assert!(
            e.fault().string.len() < 2048,
            "a fault of {} bytes",
            e.fault().string.len()
        ),
    }
    let _ = customer::parse_response(data);
    let limits = bench_proto::soap::Limits::default();
    let mut one_pass = Vec::new();
    let served = customer::serve_request(data, &limits, &mut one_pass);
    match (customer::parse_request(data), served) {
        (Ok(customer::Request::Echo(cs)), Ok(customer::Served::Echoed { customers })) => {
            assert_eq!(customers, cs.len());
            let mut two_pass = Vec::new();
            customer::write_response(&customer::Response::Echo(cs), &mut two_pass);
            assert_eq!(one_pass, two_pass, "the one-pass echo differs");
        }
        (Ok(req), Ok(customer::Served::Request(served))) => assert_eq!(req, served),
        (Err(a), Err(b)) => assert_eq!(
            a.to_string(),
            b.to_string(),
            "the one-pass echo fails otherwise"
        ),
        (two, one) => panic!("parse: {two:?}, serve_request: {one:?}"),
    }
});
