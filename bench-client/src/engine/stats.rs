//! Per-worker measurements (counters, HDR histograms, first error of each kind), owned by one worker
//! thread during the run and merged once at the end.

use std::time::Duration;

use bench_proto::results::{Counts, ErrorCounts, ErrorKind, InFlight};
use hdrhistogram::Histogram;
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Instant;

use crate::hlog::IntervalMsg;
use crate::latency::latency_histogram;

#[derive(Debug)]
pub struct WorkerStats {
    pub ok: u64,
    pub errors: [u64; 6],
    pub validated: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Closed loop: from send to response. Open loop: from the intended send time.
    pub corrected: Histogram<u64>,
    /// Open loop only: from the actual send.
    pub uncorrected: Option<Histogram<u64>>,
    /// Open loop: how late the latest request went out, in µs.
    pub max_lag_us: Option<u64>,
    pub last_completion: Option<Instant>,
    /// Connect errors that were EADDRNOTAVAIL (no local port left: TIME_WAIT exhaustion).
    pub addr_not_avail: u64,
    /// The first failure of each kind, described, for the summary.
    pub first_errors: [Option<String>; 6],
    /// `http_status` errors by code (error path only; a handful of distinct codes).
    pub status_codes: Vec<(u16, u64)>,
    /// Calls waiting for their response when the run ended.
    pub in_flight: InFlight,
    interval: Option<IntervalRecorder>,
}

/// `--hlog`: this worker's histogram of the current one-second interval.
#[derive(Debug)]
struct IntervalRecorder {
    worker: usize,
    idx: u64,
    hist: Histogram<u64>,
    tx: UnboundedSender<IntervalMsg>,
}

impl WorkerStats {
    pub fn new(
        open_loop: bool,
        hlog: Option<(usize, UnboundedSender<IntervalMsg>)>,
    ) -> WorkerStats {
        WorkerStats {
            ok: 0,
            errors: [0; 6],
            validated: 0,
            bytes_sent: 0,
            bytes_received: 0,
            corrected: latency_histogram(),
            uncorrected: open_loop.then(latency_histogram),
            max_lag_us: open_loop.then_some(0),
            last_completion: None,
            addr_not_avail: 0,
            first_errors: Default::default(),
            status_codes: Vec::new(),
            in_flight: InFlight::default(),
            interval: hlog.map(|(worker, tx)| IntervalRecorder {
                worker,
                idx: 0,
                hist: latency_histogram(),
                tx,
            }),
        }
    }

    /// A successful call. `since_start` gives its completion time within the measured interval (asked only
    /// by `--hlog`'s interval histograms: Instant arithmetic is not free per call).
    #[inline]
    pub fn record_ok(
        &mut self,
        since_start: impl FnOnce() -> Duration,
        latency_us: u64,
        uncorrected_us: Option<u64>,
        lag_us: Option<u64>,
    ) {
        self.ok += 1;
        self.corrected.saturating_record(latency_us);
        if let (Some(h), Some(u)) = (self.uncorrected.as_mut(), uncorrected_us) {
            h.saturating_record(u);
        }
        if let (Some(m), Some(l)) = (self.max_lag_us.as_mut(), lag_us) {
            *m = (*m).max(l);
        }
        if let Some(iv) = self.interval.as_mut() {
            let idx = since_start().as_secs();
            if idx != iv.idx {
                iv.flush(idx);
            }
            iv.hist.saturating_record(latency_us);
        }
    }

    #[inline]
    pub fn record_error(&mut self, kind: ErrorKind) {
        self.errors[kind.index()] += 1;
    }

    /// An `http_status` error's code (the error itself is counted by `record_error`).
    pub fn record_status(&mut self, code: u16) {
        match self.status_codes.iter_mut().find(|(c, _)| *c == code) {
            Some((_, n)) => *n += 1,
            None => self.status_codes.push((code, 1)),
        }
    }

    /// A call still waiting when the run ended, after `waited`; at or past `timeout` it is a timeout error.
    pub fn record_in_flight(&mut self, waited: Duration, timeout: Duration) {
        self.in_flight.calls += 1;
        let us = waited.as_micros().min(u128::from(u64::MAX)) as u64;
        self.in_flight.max_wait_us = self.in_flight.max_wait_us.max(us);
        if waited >= timeout {
            self.in_flight.timed_out += 1;
            self.record_error(ErrorKind::Timeout);
        }
    }

    /// Whether a description of a `kind` failure is still wanted (only the first is kept).
    #[inline]
    pub fn wants_detail(&self, kind: ErrorKind) -> bool {
        self.first_errors[kind.index()].is_none()
    }

    pub fn set_detail(&mut self, kind: ErrorKind, detail: String) {
        self.first_errors[kind.index()].get_or_insert(detail);
    }

    /// Sends the last interval histogram and tells the log writer this worker is done.
    pub fn finish_intervals(&mut self) {
        if let Some(mut iv) = self.interval.take() {
            iv.flush(iv.idx + 1);
            let _ = iv.tx.send(IntervalMsg::Done { worker: iv.worker });
        }
    }
}

impl IntervalRecorder {
    fn flush(&mut self, next_idx: u64) {
        let fresh = Histogram::new_from(&self.hist);
        let hist = std::mem::replace(&mut self.hist, fresh);
        if !hist.is_empty() {
            // The writer lives as long as the run; if it is gone, the log is simply not written.
            let _ = self.tx.send(IntervalMsg::Interval {
                worker: self.worker,
                idx: self.idx,
                hist,
            });
        }
        self.idx = next_idx;
    }
}

/// All workers' measurements, merged.
#[derive(Debug)]
pub struct RunStats {
    pub counts: Counts,
    pub corrected: Histogram<u64>,
    pub uncorrected: Option<Histogram<u64>>,
    pub max_lag_us: Option<u64>,
    pub last_completion: Option<Instant>,
    pub addr_not_avail: u64,
    pub first_errors: Vec<(ErrorKind, String)>,
}

impl RunStats {
    pub fn merge(workers: Vec<WorkerStats>, open_loop: bool) -> RunStats {
        let mut out = RunStats {
            counts: Counts::default(),
            corrected: latency_histogram(),
            uncorrected: open_loop.then(latency_histogram),
            max_lag_us: None,
            last_completion: None,
            addr_not_avail: 0,
            first_errors: Vec::new(),
        };
        let mut errors = [0u64; 6];
        for w in workers {
            out.counts.ok += w.ok;
            for (a, b) in errors.iter_mut().zip(w.errors) {
                *a += b;
            }
            out.counts.validated += w.validated;
            out.counts.bytes_sent += w.bytes_sent;
            out.counts.bytes_received += w.bytes_received;
            // Same bounds on both sides: adding cannot fail.
            out.corrected
                .add(&w.corrected)
                .expect("histograms of equal bounds add");
            if let (Some(a), Some(b)) = (out.uncorrected.as_mut(), w.uncorrected.as_ref()) {
                a.add(b).expect("histograms of equal bounds add");
            }
            out.max_lag_us = out.max_lag_us.max(w.max_lag_us);
            out.last_completion = out.last_completion.max(w.last_completion);
            out.addr_not_avail += w.addr_not_avail;
            for (code, n) in &w.status_codes {
                *out.counts.http_status_codes.entry(*code).or_default() += n;
            }
            out.counts.in_flight.add(&w.in_flight);
            for k in ErrorKind::ALL {
                if let Some(d) = &w.first_errors[k.index()] {
                    if !out.first_errors.iter().any(|(kk, _)| *kk == k) {
                        out.first_errors.push((k, d.clone()));
                    }
                }
            }
        }
        out.counts.errors = ErrorCounts::from_array(&errors);
        out.counts.errors_total = out.counts.errors.total();
        out.first_errors.sort_by_key(|(k, _)| k.index());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_everything_once() {
        let mut a = WorkerStats::new(true, None);
        let mut b = WorkerStats::new(true, None);
        a.record_ok(|| Duration::ZERO, 100, Some(90), Some(10));
        a.record_ok(|| Duration::ZERO, 200, Some(150), Some(50));
        b.record_ok(|| Duration::ZERO, 300, Some(300), Some(0));
        b.record_error(ErrorKind::Fault);
        a.record_error(ErrorKind::HttpStatus);
        a.record_status(503);
        b.record_error(ErrorKind::HttpStatus);
        b.record_status(503);
        b.record_error(ErrorKind::HttpStatus);
        b.record_status(404);
        b.record_in_flight(Duration::from_secs(2), Duration::from_secs(30));
        a.record_in_flight(Duration::from_secs(31), Duration::from_secs(30));
        b.set_detail(ErrorKind::Fault, "first".into());
        b.set_detail(ErrorKind::Fault, "second".into());
        let m = RunStats::merge(vec![a, b], true);
        assert_eq!(m.counts.ok, 3);
        assert_eq!(m.counts.errors.fault, 1);
        assert_eq!(m.counts.errors.http_status, 3);
        assert_eq!(m.counts.errors.timeout, 1);
        assert_eq!(m.counts.errors_total, 5);
        assert_eq!(
            m.counts.http_status_codes.into_iter().collect::<Vec<_>>(),
            [(404, 1), (503, 2)]
        );
        let f = m.counts.in_flight;
        assert_eq!((f.calls, f.max_wait_us, f.timed_out), (2, 31_000_000, 1));
        assert_eq!(m.corrected.len(), 3);
        assert_eq!(m.uncorrected.as_ref().unwrap().len(), 3);
        assert_eq!(m.max_lag_us, Some(50));
        assert_eq!(m.first_errors, vec![(ErrorKind::Fault, "first".to_owned())]);
    }

    #[test]
    fn closed_loop_keeps_no_uncorrected_histogram() {
        let mut a = WorkerStats::new(false, None);
        a.record_ok(|| Duration::ZERO, 5, None, None);
        let m = RunStats::merge(vec![a], false);
        assert!(m.uncorrected.is_none());
        assert_eq!(m.max_lag_us, None);
    }

    #[test]
    fn intervals_are_sent_as_time_passes() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut a = WorkerStats::new(false, Some((3, tx)));
        a.record_ok(|| Duration::from_millis(10), 5, None, None);
        a.record_ok(|| Duration::from_millis(900), 6, None, None);
        a.record_ok(|| Duration::from_millis(2100), 7, None, None);
        a.finish_intervals();
        let mut got = Vec::new();
        while let Ok(m) = rx.try_recv() {
            got.push(match m {
                IntervalMsg::Interval { worker, idx, hist } => (worker, Some(idx), hist.len()),
                IntervalMsg::Done { worker } => (worker, None, 0),
            });
        }
        assert_eq!(got, vec![(3, Some(0), 2), (3, Some(2), 1), (3, None, 0)]);
    }
}
