//! The shape of every latency histogram of a run (workers, merge, hlog intervals): fixed bounds, so it is
//! allocated once and never resized on the hot path, and any two add exactly.

use hdrhistogram::Histogram;

/// Latencies above an hour are clamped (and would be timeouts long before).
pub(crate) const MAX_LATENCY_US: u64 = 3_600_000_000;

/// A fixed-range histogram: allocated once, never resized on the hot path.
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_US, bench_proto::results::SIGFIG)
        .expect("1 µs .. 1 h at 3 significant figures is a valid histogram")
}
