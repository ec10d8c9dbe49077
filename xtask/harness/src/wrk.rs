//! wrk, the reference load generator of `icount` and `calibrate`: the Lua script that makes it post the same
//! echoComplexTypeDoc request bench-client sends.

/// A wrk script posting the CXF client's 1-item echoComplexTypeDoc request, as bench-client does.
pub fn echo_complex_post_script() -> String {
    let mut body = Vec::new();
    bench_proto::cxf::write_request(&bench_proto::cxf::echo_complex_request(1, 0), &mut body);
    let body = String::from_utf8_lossy(&body)
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    format!(
        "wrk.method = \"POST\"\nwrk.body = \"{body}\"\nwrk.headers[\"Content-Type\"] = \"{}\"\nwrk.headers[\"SOAPAction\"] = \"\\\"\\\"\"\n",
        bench_proto::soap::CONTENT_TYPE
    )
}
