//! `--format cxf`: the CXF performance harness's "Overall Test Result" block, with CXF's meanings, so that
//! published CXF figures can be compared line by line.
//!
//! In CXF's harness every client thread runs for the whole time, and "Overall Throughput" is the total
//! invocations divided by the sum of the threads' running times — the rate ONE client saw. "AVG.
//! response time" is 1000 / that, in ms (not a measured latency), and "running" is that sum of times.

use bench_proto::results::ResultsDoc;

use bench_proto::numbers::java_double;

pub fn render(doc: &ResultsDoc) -> String {
    let running_s = doc.elapsed_s * doc.params.clients as f64;
    let per_client = if running_s > 0.0 {
        doc.counts.ok as f64 / running_s
    } else {
        0.0
    };
    let avg_ms = if per_client > 0.0 {
        1000.0 / per_client
    } else {
        0.0
    };
    format!(
        "=============Overall Test Result============\n\
         Overall Throughput: {op} {tp} (invocations/sec)\n\
         Overall AVG. response time: {avg} (ms)\n\
         {n} (invocations), running {running} (sec)\n\
         ============================================\n\
         (CXF harness format: \"Overall Throughput\" is the PER-CLIENT rate, ok calls / (clients × elapsed); \
         \"AVG. response time\" is 1000 / that, not a measured latency; \"running\" is clients × elapsed. \
         Measured latency is in the summary above.)\n",
        op = doc.params.operation,
        tp = java_double(per_client),
        avg = java_double(avg_ms),
        n = java_double(doc.counts.ok as f64),
        running = java_double(running_s),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::human::tests::sample_doc;

    #[test]
    fn reproduces_the_seed_block_from_its_own_figures() {
        // The seed's run: 100 threads, 28 800.386 s, 1 003 791 036 invocations.
        let mut doc = sample_doc();
        doc.params.clients = 100;
        doc.elapsed_s = 28_800.386_24;
        doc.counts.ok = 1_003_791_036;
        let text = render(&doc);
        assert!(
            text.contains("Overall Throughput: echoComplexTypeDoc 348.53"),
            "{text}"
        );
        assert!(text.contains("Overall AVG. response time: 2.869"), "{text}");
        assert!(
            text.contains("1.003791036E9 (invocations), running 2880038.62"),
            "{text}"
        );
        assert!(text.contains("PER-CLIENT"));
    }
}
