//! The Customer parser on any bytes. What parses must write back and parse to the same message, and faults
//! must stay small.

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
        Err(e) => assert!(e.fault().string.len() < 2048, "a fault of {} bytes", e.fault().string.len()),
    }
    let _ = customer::parse_response(data);
});
