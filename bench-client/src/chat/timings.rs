//! What a run times of its deliveries: fan-out latency (send → each delivery) and, at each member, the gap
//! since its previous delivery (where a server's Nagle algorithm shows: gaps near 40 ms). One pair of
//! histograms per worker thread, shared by the users that thread runs (one at a time, so never borrowed
//! twice), added up once the run is over: no lock, no channel send per message.

use std::cell::RefCell;

use bench_proto::results::{new_histogram, SIGFIG};
use hdrhistogram::Histogram;
use thread_local::ThreadLocal;

/// Times up to this many µs fit a thread's histograms as made; longer ones still grow them.
const RANGE_US: u64 = 60_000_000;

/// One thread's histograms.
#[derive(Debug)]
pub(crate) struct Timings {
    /// Send → delivery, µs.
    pub(crate) latency: Histogram<u64>,
    /// Delivery → the member's next delivery, µs.
    pub(crate) gaps: Histogram<u64>,
}

impl Timings {
    pub(crate) fn new() -> Timings {
        Timings {
            latency: histogram(),
            gaps: histogram(),
        }
    }

    /// Adds `other` in (same precision on both sides, and the sum grows to any range: it cannot fail).
    pub(crate) fn add(&mut self, other: &Timings) {
        let _ = self.latency.add(&other.latency);
        let _ = self.gaps.add(&other.gaps);
    }
}

/// Every worker thread's [`Timings`].
#[derive(Debug, Default)]
pub(crate) struct ThreadTimings(ThreadLocal<RefCell<Timings>>);

impl ThreadTimings {
    /// Records a delivery's latency and, when the member had one before, the gap since it (µs).
    pub(crate) fn record(&self, latency_us: Option<u64>, gap_us: Option<u64>) {
        let t = self.0.get_or(|| RefCell::new(Timings::new()));
        let mut t = t.borrow_mut();
        // Auto-resizing: a value past the range grows the histogram instead of failing.
        if let Some(us) = latency_us {
            let _ = t.latency.record(us);
        }
        if let Some(us) = gap_us {
            let _ = t.gaps.record(us);
        }
    }

    /// Every thread's timings added up (once no user records any more).
    pub(crate) fn total(&mut self) -> Timings {
        let mut out = Timings {
            latency: new_histogram(),
            gaps: new_histogram(),
        };
        for t in self.0.iter_mut() {
            out.add(t.get_mut());
        }
        out
    }
}

/// Sized for a minute at once, so that recording a new longest time does not reallocate and zero the counts
/// in the middle of the timed run. Per thread, not per user: 139 KB each, which per user came to 139 MB for
/// VolanoMark's default thousand users.
fn histogram() -> Histogram<u64> {
    match Histogram::new_with_bounds(1, RANGE_US, SIGFIG) {
        Ok(mut h) => {
            h.auto(true);
            h
        }
        Err(_) => new_histogram(),
    }
}
