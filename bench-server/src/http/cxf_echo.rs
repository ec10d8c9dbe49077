//! The CXF service's work for one call without HTTP: parse the request (its values borrowed from the body and
//! this thread's scratch arena, which is reset after the call) and write the echo, or the fault, into `out`.
//! In steady state it allocates nothing on the heap (bench-server's `allocations` test counts it).

use bench_proto::arena;
use bench_proto::cxf;
use bench_proto::soap::{self, Limits};

/// Writes the response to the CXF request `body` into `out`: the echo and its operation, or a SOAP fault and
/// `None`.
pub fn cxf_echo(body: &[u8], limits: &Limits, out: &mut Vec<u8>) -> Option<cxf::Operation> {
    arena::with_scratch(|arena| match cxf::parse_request_in(body, limits, arena) {
        Ok(req) => {
            let op = req.operation();
            cxf::write_response(&req.into_echo_response(), out);
            Some(op)
        }
        Err(e) => {
            soap::write_fault(out, &e.fault());
            None
        }
    })
}
