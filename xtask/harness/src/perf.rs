//! Performance tools on top of the backends' process layer: `icount` (instructions per call under callgrind,
//! with the chat rows' system calls), `calibrate` (bench-client against wrk on one endpoint) and `max_rate`
//! (the highest open-loop rate under a p99 SLO). Each takes its request as flags (`Args`) from `cargo xtask`.

pub mod calibrate;
pub mod icount;
pub mod max_rate;

/// A wrk script posting the CXF client's 1-item echoComplexTypeDoc request, as bench-client does.
pub(crate) fn echo_complex_post_script() -> String {
    let mut body = Vec::new();
    bench_proto::cxf::write_request(&bench_proto::cxf::echo_complex_request(1, 0), &mut body);
    wsbench_tools::wrk::post_script(
        &String::from_utf8_lossy(&body),
        bench_proto::soap::CONTENT_TYPE,
    )
}
