//! Per-worker measurements, owned by one worker thread: the tally of the current interval (counters, HDR
//! histograms, connections made, recoveries), handed to the collector whole at the end of each interval —
//! one message per worker per interval, never one per call — and what is kept for the whole run (the first
//! error of each kind, the calls in flight at the end).

use std::time::Duration;

use bench_proto::results::{ErrorKind, InFlight, Recovery};
use hdrhistogram::Histogram;
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Instant;

use crate::latency::latency_histogram;

/// What was measured in one interval: by one worker, by all of them merged, or by the run so far.
#[derive(Debug)]
pub struct Tally {
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
    /// Connect errors that were EADDRNOTAVAIL (no local port left: TIME_WAIT exhaustion).
    pub addr_not_avail: u64,
    /// `http_status` errors by code (error path only; a handful of distinct codes).
    pub status_codes: Vec<(u16, u64)>,
    pub connects: Connects,
    /// Runs of failures that ended in a success (seconds from the start of the measured interval).
    pub recoveries: Vec<Recovery>,
}

/// Connections opened and attempts failed; their set-up times (allocated at the first connection).
#[derive(Debug, Default)]
pub struct Connects {
    pub opened: u64,
    pub failed: u64,
    pub setup: Option<Histogram<u64>>,
}

impl Tally {
    pub fn new(open_loop: bool) -> Tally {
        Tally {
            ok: 0,
            errors: [0; 6],
            validated: 0,
            bytes_sent: 0,
            bytes_received: 0,
            corrected: latency_histogram(),
            uncorrected: open_loop.then(latency_histogram),
            max_lag_us: open_loop.then_some(0),
            addr_not_avail: 0,
            status_codes: Vec::new(),
            connects: Connects::default(),
            recoveries: Vec::new(),
        }
    }

    /// An empty tally of the same shape.
    fn fresh(&self) -> Tally {
        Tally::new(self.uncorrected.is_some())
    }

    /// Adds `other` in (histograms of one shape add exactly).
    pub fn add(&mut self, other: &Tally) {
        self.ok += other.ok;
        for (a, b) in self.errors.iter_mut().zip(other.errors) {
            *a += b;
        }
        self.validated += other.validated;
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        add_histogram(&mut self.corrected, &other.corrected);
        if let (Some(a), Some(b)) = (self.uncorrected.as_mut(), other.uncorrected.as_ref()) {
            add_histogram(a, b);
        }
        self.max_lag_us = self.max_lag_us.max(other.max_lag_us);
        self.addr_not_avail += other.addr_not_avail;
        for &(code, n) in &other.status_codes {
            add_status(&mut self.status_codes, code, n);
        }
        self.connects.opened += other.connects.opened;
        self.connects.failed += other.connects.failed;
        if let Some(b) = &other.connects.setup {
            add_histogram(self.connects.setup.get_or_insert_with(latency_histogram), b);
        }
        for r in &other.recoveries {
            Recovery::merge_into(&mut self.recoveries, r.clone());
        }
    }

    pub fn errors_total(&self) -> u64 {
        self.errors.iter().sum()
    }
}

fn add_histogram(a: &mut Histogram<u64>, b: &Histogram<u64>) {
    // Same bounds on both sides (`latency_histogram`): adding cannot fail.
    a.add(b).expect("histograms of equal bounds add");
}

fn add_status(codes: &mut Vec<(u16, u64)>, code: u16, n: u64) {
    match codes.iter_mut().find(|(c, _)| *c == code) {
        Some((_, m)) => *m += n,
        None => codes.push((code, n)),
    }
}

/// From a worker to the collector: an interval's tally, or the worker's last.
#[derive(Debug)]
pub enum Report {
    /// Interval `idx` has ended on this worker.
    Interval {
        worker: usize,
        idx: u64,
        tally: Tally,
    },
    /// The worker has finished, within interval `idx`: its tally since the last report and what it kept
    /// for the whole run.
    Last {
        worker: usize,
        idx: u64,
        tally: Tally,
        end: WorkerEnd,
    },
}

/// What a worker keeps for the whole run, reported once at its end.
#[derive(Debug, Default)]
pub struct WorkerEnd {
    /// The first failure of each kind, described, for the summary.
    pub first_errors: [Option<String>; 6],
    /// Calls waiting for their response when the run ended.
    pub in_flight: InFlight,
    pub last_completion: Option<Instant>,
}

/// One worker's measurements: the current interval's tally, written by its connections on the hot path.
#[derive(Debug)]
pub struct WorkerStats {
    pub now: Tally,
    pub end: WorkerEnd,
    worker: usize,
    idx: u64,
    tx: UnboundedSender<Report>,
}

impl WorkerStats {
    pub fn new(open_loop: bool, worker: usize, tx: UnboundedSender<Report>) -> WorkerStats {
        WorkerStats {
            now: Tally::new(open_loop),
            end: WorkerEnd::default(),
            worker,
            idx: 0,
            tx,
        }
    }

    /// A successful call.
    #[inline]
    pub fn record_ok(&mut self, latency_us: u64, uncorrected_us: Option<u64>, lag_us: Option<u64>) {
        let t = &mut self.now;
        t.ok += 1;
        t.corrected.saturating_record(latency_us);
        if let (Some(h), Some(u)) = (t.uncorrected.as_mut(), uncorrected_us) {
            h.saturating_record(u);
        }
        if let (Some(m), Some(l)) = (t.max_lag_us.as_mut(), lag_us) {
            *m = (*m).max(l);
        }
    }

    #[inline]
    pub fn record_error(&mut self, kind: ErrorKind) {
        self.now.errors[kind.index()] += 1;
    }

    /// `n` calls an open loop gave up unsent (their connection down), failed as `kind`.
    pub fn record_unsent(&mut self, kind: ErrorKind, n: u64) {
        self.now.errors[kind.index()] += n;
    }

    /// An `http_status` error's code (the error itself is counted by `record_error`).
    pub fn record_status(&mut self, code: u16) {
        add_status(&mut self.now.status_codes, code, 1);
    }

    /// A connection attempt: its set-up time if it succeeded.
    pub fn record_connect(&mut self, setup: Option<Duration>) {
        let c = &mut self.now.connects;
        match setup {
            Some(d) => {
                c.opened += 1;
                let h = c.setup.get_or_insert_with(latency_histogram);
                h.saturating_record(d.as_micros().min(u128::from(u64::MAX)) as u64);
            }
            None => c.failed += 1,
        }
    }

    /// A connection's run of `failures` failed calls, the first at `from`, ended by a success at `ok`.
    pub fn record_recovery(&mut self, t0: Instant, from: Instant, ok: Instant, failures: u64) {
        let s = |t: Instant| t.saturating_duration_since(t0).as_secs_f64();
        let r = Recovery {
            failed_from_s: s(from),
            first_ok_s: s(ok),
            last_ok_s: s(ok),
            connections: 1,
            failures,
        };
        Recovery::merge_into(&mut self.now.recoveries, r);
    }

    /// A call still waiting when the run ended, after `waited`; at or past `timeout` it is a timeout error.
    pub fn record_in_flight(&mut self, waited: Duration, timeout: Duration) {
        let f = &mut self.end.in_flight;
        f.calls += 1;
        let us = waited.as_micros().min(u128::from(u64::MAX)) as u64;
        f.max_wait_us = f.max_wait_us.max(us);
        if waited >= timeout {
            f.timed_out += 1;
            self.record_error(ErrorKind::Timeout);
        }
    }

    /// Whether a description of a `kind` failure is still wanted (only the first is kept).
    #[inline]
    pub fn wants_detail(&self, kind: ErrorKind) -> bool {
        self.end.first_errors[kind.index()].is_none()
    }

    pub fn set_detail(&mut self, kind: ErrorKind, detail: String) {
        self.end.first_errors[kind.index()].get_or_insert(detail);
    }

    /// Ends the current interval: its tally goes to the collector, a fresh one takes its place.
    pub fn ship(&mut self) {
        let fresh = self.now.fresh();
        let tally = std::mem::replace(&mut self.now, fresh);
        // The collector lives as long as the run; if it is gone, the run is being abandoned.
        let _ = self.tx.send(Report::Interval {
            worker: self.worker,
            idx: self.idx,
            tally,
        });
        self.idx += 1;
    }

    /// The worker's last report: the tally since the last interval, and what it kept for the run.
    pub fn ship_last(&mut self) {
        let fresh = self.now.fresh();
        let _ = self.tx.send(Report::Last {
            worker: self.worker,
            idx: self.idx,
            tally: std::mem::replace(&mut self.now, fresh),
            end: std::mem::take(&mut self.end),
        });
    }
}

#[cfg(test)]
mod tests {
    use tokio::sync::mpsc;

    use super::*;

    fn stats(open_loop: bool) -> (WorkerStats, mpsc::UnboundedReceiver<Report>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (WorkerStats::new(open_loop, 3, tx), rx)
    }

    #[test]
    fn tallies_add_everything_once() {
        let (mut a, _ra) = stats(true);
        let (mut b, _rb) = stats(true);
        a.record_ok(100, Some(90), Some(10));
        a.record_ok(200, Some(150), Some(50));
        b.record_ok(300, Some(300), Some(0));
        b.record_error(ErrorKind::Fault);
        a.record_error(ErrorKind::HttpStatus);
        a.record_status(503);
        b.record_error(ErrorKind::HttpStatus);
        b.record_status(503);
        b.record_error(ErrorKind::HttpStatus);
        b.record_status(404);
        b.record_unsent(ErrorKind::Connect, 4);
        a.record_connect(Some(Duration::from_micros(120)));
        b.record_connect(None);
        let mut sum = Tally::new(true);
        sum.add(&a.now);
        sum.add(&b.now);
        assert_eq!(sum.ok, 3);
        assert_eq!(sum.errors[ErrorKind::Fault.index()], 1);
        assert_eq!(sum.errors[ErrorKind::HttpStatus.index()], 3);
        assert_eq!(sum.errors[ErrorKind::Connect.index()], 4);
        assert_eq!(sum.errors_total(), 8);
        sum.status_codes.sort();
        assert_eq!(sum.status_codes, [(404, 1), (503, 2)]);
        assert_eq!(sum.corrected.len(), 3);
        assert_eq!(sum.uncorrected.as_ref().unwrap().len(), 3);
        assert_eq!(sum.max_lag_us, Some(50));
        assert_eq!((sum.connects.opened, sum.connects.failed), (1, 1));
        assert_eq!(sum.connects.setup.as_ref().unwrap().len(), 1);
    }

    #[test]
    fn closed_loop_keeps_no_uncorrected_histogram() {
        let (mut a, _rx) = stats(false);
        a.record_ok(5, None, None);
        assert!(a.now.uncorrected.is_none());
        assert_eq!(a.now.max_lag_us, None);
    }

    #[test]
    fn in_flight_calls_past_the_timeout_are_timeouts() {
        let (mut a, _rx) = stats(false);
        a.record_in_flight(Duration::from_secs(2), Duration::from_secs(30));
        a.record_in_flight(Duration::from_secs(31), Duration::from_secs(30));
        let f = a.end.in_flight;
        assert_eq!((f.calls, f.max_wait_us, f.timed_out), (2, 31_000_000, 1));
        assert_eq!(a.now.errors[ErrorKind::Timeout.index()], 1);
    }

    #[test]
    fn each_interval_is_shipped_once_and_the_last_carries_the_rest() {
        let (mut a, mut rx) = stats(false);
        a.record_ok(5, None, None);
        a.record_ok(6, None, None);
        a.ship();
        a.ship();
        a.record_ok(7, None, None);
        a.set_detail(ErrorKind::Io, "first".into());
        a.set_detail(ErrorKind::Io, "second".into());
        a.ship_last();
        let mut got = Vec::new();
        while let Ok(m) = rx.try_recv() {
            got.push(match m {
                Report::Interval { worker, idx, tally } => (worker, idx, tally.ok, false),
                Report::Last {
                    worker,
                    idx,
                    tally,
                    end,
                } => {
                    assert_eq!(
                        end.first_errors[ErrorKind::Io.index()].as_deref(),
                        Some("first")
                    );
                    (worker, idx, tally.ok, true)
                }
            });
        }
        assert_eq!(got, [(3, 0, 2, false), (3, 1, 0, false), (3, 2, 1, true)]);
    }

    #[test]
    fn recoveries_are_kept_in_seconds_from_the_start() {
        let (mut a, _rx) = stats(false);
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        a.record_recovery(t0, at(1000), at(3000), 4);
        a.record_recovery(t0, at(1500), at(2500), 2);
        assert_eq!(a.now.recoveries.len(), 1);
        let r = &a.now.recoveries[0];
        assert_eq!(
            (r.failed_from_s, r.first_ok_s, r.last_ok_s),
            (1.0, 2.5, 3.0)
        );
        assert_eq!((r.connections, r.failures), (2, 6));
    }
}
