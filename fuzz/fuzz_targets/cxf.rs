//! The CXF parser on any bytes. What parses must write back and parse to the same message (compared as
//! written bytes, so NaN floats compare equal), and faults must stay small.

#![no_main]

use bench_proto::cxf;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match cxf::parse_request(data) {
        Ok(req) => {
            let mut once = Vec::new();
            cxf::write_request(&req, &mut once);
            let again = cxf::parse_request(&once).expect("a written request parses");
            let mut twice = Vec::new();
            cxf::write_request(&again, &mut twice);
            assert_eq!(once, twice, "write(parse(write(x))) differs");
            let mut resp = Vec::new();
            cxf::write_response(&again.into_echo_response(), &mut resp);
            cxf::parse_response(&resp).expect("a written response parses");
        }
        Err(e) => assert!(e.fault().string.len() < 2048, "a fault of {} bytes", e.fault().string.len()),
    }
    let _ = cxf::parse_response(data);
});
