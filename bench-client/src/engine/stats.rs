//! Per-worker measurements, owned by one worker thread: the tally of the current interval (counters, HDR
//! histograms, connections made, recoveries), handed to the collector whole at the end of each interval —
//! one message per worker per interval, never one per call — and what is kept for the whole run (the first
//! error of each kind, the calls in flight at the end).

use std::time::Duration;

use bench_proto::ossj::Failure;
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
    /// `fault` errors by the service's own kind (the OSS/J portal's; error path only).
    pub failures: Vec<(Failure, u64)>,
    pub connects: Connects,
    /// Runs of failures that ended in a success (seconds from the start of the measured interval).
    pub recoveries: Vec<Recovery>,
    /// A mix: each operation's share of the above (empty without a mix).
    pub ops: Vec<OpTally>,
    /// The calls whose phases were timed apart (see [`Timed`]).
    pub timed: Timed,
}

/// One operation's calls within a tally.
#[derive(Debug, Clone)]
pub struct OpTally {
    pub ok: u64,
    pub errors: [u64; 6],
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub corrected: Histogram<u64>,
}

impl OpTally {
    fn new() -> OpTally {
        OpTally {
            ok: 0,
            errors: [0; 6],
            bytes_sent: 0,
            bytes_received: 0,
            corrected: latency_histogram(),
        }
    }

    fn add(&mut self, o: &OpTally) {
        self.ok += o.ok;
        for (a, b) in self.errors.iter_mut().zip(o.errors) {
            *a += b;
        }
        self.bytes_sent += o.bytes_sent;
        self.bytes_received += o.bytes_received;
        add_histogram(&mut self.corrected, &o.corrected);
    }
}

/// Time to first byte and transfer, kept apart only for the ok calls where they differ from the latency: a
/// call that made its connection, or whose response took more than one read. Every other call's first and
/// last bytes came with one read, right after its send: its time to first byte is its latency from the
/// actual send, and its transfer 0 — so the common call records nothing more, and the phases are derived
/// ([`Timed::phases`]) exactly.
#[derive(Debug, Default)]
pub struct Timed {
    /// How many calls were timed apart.
    pub calls: u64,
    /// Their latency from the actual send (also in the run's latency from the actual send).
    pub from_send: Option<Histogram<u64>>,
    pub ttfb: Option<Histogram<u64>>,
    pub transfer: Option<Histogram<u64>>,
}

impl Timed {
    fn add(&mut self, o: &Timed) {
        self.calls += o.calls;
        for (a, b) in [
            (&mut self.from_send, &o.from_send),
            (&mut self.ttfb, &o.ttfb),
            (&mut self.transfer, &o.transfer),
        ] {
            if let Some(b) = b {
                add_histogram(a.get_or_insert_with(latency_histogram), b);
            }
        }
    }

    /// Time to first byte and transfer of all `ok` calls, given their latencies from the actual send.
    pub fn phases(&self, from_send: &Histogram<u64>, ok: u64) -> (Histogram<u64>, Histogram<u64>) {
        let mut ttfb = from_send.clone();
        if let Some(h) = &self.from_send {
            // Each was recorded into both with the same value: the buckets subtract exactly.
            ttfb.subtract(h)
                .expect("the timed calls are among all calls");
        }
        if let Some(h) = &self.ttfb {
            add_histogram(&mut ttfb, h);
        }
        let mut transfer = self.transfer.clone().unwrap_or_else(latency_histogram);
        let untimed = ok.saturating_sub(self.calls);
        if untimed > 0 {
            transfer.saturating_record_n(0, untimed);
        }
        (ttfb, transfer)
    }
}

/// Connections opened and attempts failed; their set-up times (allocated at the first connection).
#[derive(Debug, Default)]
pub struct Connects {
    pub opened: u64,
    pub failed: u64,
    pub setup: Option<Histogram<u64>>,
}

impl Tally {
    /// An empty tally: `ops` operations of a mix (0 without one).
    pub fn new(open_loop: bool, ops: usize) -> Tally {
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
            failures: Vec::new(),
            connects: Connects::default(),
            recoveries: Vec::new(),
            ops: (0..ops).map(|_| OpTally::new()).collect(),
            timed: Timed::default(),
        }
    }

    /// An empty tally of the same shape.
    pub fn fresh(&self) -> Tally {
        Tally::new(self.uncorrected.is_some(), self.ops.len())
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
        for &(kind, n) in &other.failures {
            add_failure(&mut self.failures, kind, n);
        }
        self.connects.opened += other.connects.opened;
        self.connects.failed += other.connects.failed;
        if let Some(b) = &other.connects.setup {
            add_histogram(self.connects.setup.get_or_insert_with(latency_histogram), b);
        }
        for r in &other.recoveries {
            Recovery::merge_into(&mut self.recoveries, r.clone());
        }
        for (a, b) in self.ops.iter_mut().zip(&other.ops) {
            a.add(b);
        }
        self.timed.add(&other.timed);
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

fn add_failure(kinds: &mut Vec<(Failure, u64)>, kind: Failure, n: u64) {
    match kinds.iter_mut().find(|(k, _)| *k == kind) {
        Some((_, m)) => *m += n,
        None => kinds.push((kind, n)),
    }
}

/// From a worker to the collector: an interval's tally, or the worker's last.
#[derive(Debug)]
pub enum Report {
    /// Interval `idx` has ended on this worker (`closes`), or stage `stage` has ended within it (the
    /// interval goes on: its next piece comes later).
    Interval {
        worker: usize,
        idx: u64,
        stage: usize,
        closes: bool,
        tally: Tally,
    },
    /// The worker has finished, within interval `idx`: its tally since the last report and what it kept
    /// for the whole run.
    Last {
        worker: usize,
        idx: u64,
        stage: usize,
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
    /// The stage the calls now recorded belong to (0 without stages).
    stage: usize,
    tx: UnboundedSender<Report>,
}

impl WorkerStats {
    pub fn new(
        open_loop: bool,
        ops: usize,
        worker: usize,
        tx: UnboundedSender<Report>,
    ) -> WorkerStats {
        WorkerStats {
            now: Tally::new(open_loop, ops),
            end: WorkerEnd::default(),
            worker,
            idx: 0,
            stage: 0,
            tx,
        }
    }

    /// A successful call of operation `op` (its index in a mix), with its body bytes.
    #[inline]
    pub(crate) fn record_ok(
        &mut self,
        op: usize,
        latency_us: u64,
        uncorrected_us: Option<u64>,
        lag_us: Option<u64>,
        bytes: (u64, u64),
    ) {
        let t = &mut self.now;
        t.ok += 1;
        t.corrected.saturating_record(latency_us);
        t.bytes_sent += bytes.0;
        t.bytes_received += bytes.1;
        if let Some(o) = t.ops.get_mut(op) {
            o.ok += 1;
            o.corrected.saturating_record(latency_us);
            o.bytes_sent += bytes.0;
            o.bytes_received += bytes.1;
        }
        if let (Some(h), Some(u)) = (t.uncorrected.as_mut(), uncorrected_us) {
            h.saturating_record(u);
        }
        if let (Some(m), Some(l)) = (t.max_lag_us.as_mut(), lag_us) {
            *m = (*m).max(l);
        }
    }

    /// The phases of an ok call timed apart (see [`Timed`]): its latency from the actual send, its time to
    /// first byte and its transfer, µs.
    pub(crate) fn record_timed(&mut self, from_send_us: u64, ttfb_us: u64, transfer_us: u64) {
        let t = &mut self.now.timed;
        t.calls += 1;
        for (h, v) in [
            (&mut t.from_send, from_send_us),
            (&mut t.ttfb, ttfb_us),
            (&mut t.transfer, transfer_us),
        ] {
            h.get_or_insert_with(latency_histogram).saturating_record(v);
        }
    }

    /// A failed call of operation `op`.
    #[inline]
    pub fn record_error(&mut self, op: usize, kind: ErrorKind) {
        self.now.errors[kind.index()] += 1;
        if let Some(o) = self.now.ops.get_mut(op) {
            o.errors[kind.index()] += 1;
        }
    }

    /// `n` calls an open loop gave up unsent (their connection down), failed as `kind`; `op` says which
    /// operation each would have been (a mix).
    pub(crate) fn record_unsent(&mut self, kind: ErrorKind, n: u64, mut op: impl FnMut() -> usize) {
        self.now.errors[kind.index()] += n;
        if !self.now.ops.is_empty() {
            for _ in 0..n {
                self.now.ops[op()].errors[kind.index()] += 1;
            }
        }
    }

    /// An `http_status` error's code (the error itself is counted by `record_error`).
    pub(crate) fn record_status(&mut self, code: u16) {
        add_status(&mut self.now.status_codes, code, 1);
    }

    /// A `fault` error's kind, where the service names it (the error itself is counted by `record_error`).
    pub(crate) fn record_failure(&mut self, kind: Failure) {
        add_failure(&mut self.now.failures, kind, 1);
    }

    /// A connection attempt: its set-up time if it succeeded.
    pub(crate) fn record_connect(&mut self, setup: Option<Duration>) {
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
    pub(crate) fn record_recovery(
        &mut self,
        t0: Instant,
        from: Instant,
        ok: Instant,
        failures: u64,
    ) {
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
    pub(crate) fn record_in_flight(&mut self, op: usize, waited: Duration, timeout: Duration) {
        let f = &mut self.end.in_flight;
        f.calls += 1;
        let us = waited.as_micros().min(u128::from(u64::MAX)) as u64;
        f.max_wait_us = f.max_wait_us.max(us);
        if waited >= timeout {
            f.timed_out += 1;
            self.record_error(op, ErrorKind::Timeout);
        }
    }

    /// Whether a description of a `kind` failure is still wanted (only the first is kept).
    #[inline]
    pub(crate) fn wants_detail(&self, kind: ErrorKind) -> bool {
        self.end.first_errors[kind.index()].is_none()
    }

    pub(crate) fn set_detail(&mut self, kind: ErrorKind, detail: String) {
        self.end.first_errors[kind.index()].get_or_insert(detail);
    }

    /// Ends the current interval: its tally goes to the collector, a fresh one takes its place.
    pub(crate) fn ship(&mut self) {
        self.ship_part(true);
    }

    /// Ends the current stage: the tally so far goes to the collector (the interval goes on), and the calls
    /// recorded from now on belong to the next stage.
    pub(crate) fn end_stage(&mut self) {
        self.ship_part(false);
        self.stage += 1;
    }

    fn ship_part(&mut self, closes: bool) {
        let fresh = self.now.fresh();
        let tally = std::mem::replace(&mut self.now, fresh);
        // The collector lives as long as the run; if it is gone, the run is being abandoned.
        let _ = self.tx.send(Report::Interval {
            worker: self.worker,
            idx: self.idx,
            stage: self.stage,
            closes,
            tally,
        });
        self.idx += u64::from(closes);
    }

    /// The worker's last report: the tally since the last interval, and what it kept for the run.
    pub(crate) fn ship_last(&mut self) {
        let fresh = self.now.fresh();
        let _ = self.tx.send(Report::Last {
            worker: self.worker,
            idx: self.idx,
            stage: self.stage,
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
        (WorkerStats::new(open_loop, 0, 3, tx), rx)
    }

    #[test]
    fn tallies_add_everything_once() {
        let (mut a, _ra) = stats(true);
        let (mut b, _rb) = stats(true);
        a.record_ok(0, 100, Some(90), Some(10), (0, 0));
        a.record_ok(0, 200, Some(150), Some(50), (0, 0));
        b.record_ok(0, 300, Some(300), Some(0), (0, 0));
        b.record_error(0, ErrorKind::Fault);
        a.record_error(0, ErrorKind::HttpStatus);
        a.record_status(503);
        b.record_error(0, ErrorKind::HttpStatus);
        b.record_status(503);
        b.record_error(0, ErrorKind::HttpStatus);
        b.record_status(404);
        b.record_unsent(ErrorKind::Connect, 4, || 0);
        a.record_connect(Some(Duration::from_micros(120)));
        b.record_connect(None);
        let mut sum = Tally::new(true, 0);
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
        a.record_ok(0, 5, None, None, (0, 0));
        assert!(a.now.uncorrected.is_none());
        assert_eq!(a.now.max_lag_us, None);
    }

    #[test]
    fn in_flight_calls_past_the_timeout_are_timeouts() {
        let (mut a, _rx) = stats(false);
        a.record_in_flight(0, Duration::from_secs(2), Duration::from_secs(30));
        a.record_in_flight(0, Duration::from_secs(31), Duration::from_secs(30));
        let f = a.end.in_flight;
        assert_eq!((f.calls, f.max_wait_us, f.timed_out), (2, 31_000_000, 1));
        assert_eq!(a.now.errors[ErrorKind::Timeout.index()], 1);
    }

    #[test]
    fn each_interval_is_shipped_once_and_the_last_carries_the_rest() {
        let (mut a, mut rx) = stats(false);
        a.record_ok(0, 5, None, None, (0, 0));
        a.record_ok(0, 6, None, None, (0, 0));
        a.ship();
        a.ship();
        a.record_ok(0, 7, None, None, (0, 0));
        a.set_detail(ErrorKind::Io, "first".into());
        a.set_detail(ErrorKind::Io, "second".into());
        a.ship_last();
        let mut got = Vec::new();
        while let Ok(m) = rx.try_recv() {
            got.push(match m {
                Report::Interval {
                    worker, idx, tally, ..
                } => (worker, idx, tally.ok, false),
                Report::Last {
                    worker,
                    idx,
                    tally,
                    end,
                    ..
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

    #[test]
    fn a_mix_keeps_each_operations_calls_beside_the_totals() {
        let (tx, _rx) = mpsc::unbounded_channel();
        let mut a = WorkerStats::new(false, 2, 0, tx);
        a.record_ok(0, 100, None, None, (10, 20));
        a.record_ok(1, 200, None, None, (30, 40));
        a.record_ok(1, 300, None, None, (30, 40));
        a.record_error(1, ErrorKind::Io);
        a.record_unsent(ErrorKind::Connect, 3, || 0);
        a.record_in_flight(1, Duration::from_secs(40), Duration::from_secs(30));
        let t = &a.now;
        assert_eq!((t.ok, t.errors_total(), t.bytes_sent), (3, 5, 70));
        let (o0, o1) = (&t.ops[0], &t.ops[1]);
        assert_eq!((o0.ok, o0.errors[ErrorKind::Connect.index()]), (1, 3));
        assert_eq!((o1.ok, o1.corrected.len(), o1.bytes_received), (2, 2, 80));
        assert_eq!(
            o1.errors[ErrorKind::Io.index()] + o1.errors[ErrorKind::Timeout.index()],
            2
        );
        let mut sum = Tally::new(false, 2);
        sum.add(t);
        sum.add(t);
        assert_eq!((sum.ops[1].ok, sum.ops[0].bytes_sent), (4, 20));
    }

    /// Time to first byte and transfer come out exactly as if every call had recorded them: the calls timed
    /// apart as they were, the others' first byte at their latency and their transfer at 0.
    #[test]
    fn phases_are_derived_exactly_from_the_few_calls_timed_apart() {
        let (tx, _rx) = mpsc::unbounded_channel();
        let mut a = WorkerStats::new(false, 0, 0, tx);
        let mut want_ttfb = latency_histogram();
        let mut want_transfer = latency_histogram();
        for i in 0..1000u64 {
            let latency = 100 + i;
            a.record_ok(0, latency, None, None, (0, 0));
            if i % 10 == 0 {
                // A big response: first byte at 60 %, the rest in transfer.
                let (ttfb, transfer) = (latency * 6 / 10, latency - latency * 6 / 10);
                a.record_timed(latency, ttfb, transfer);
                want_ttfb.record(ttfb).unwrap();
                want_transfer.record(transfer).unwrap();
            } else {
                want_ttfb.record(latency).unwrap();
                want_transfer.record(0).unwrap();
            }
        }
        let t = &a.now;
        let (ttfb, transfer) = t.timed.phases(&t.corrected, t.ok);
        assert_eq!(ttfb, want_ttfb);
        assert_eq!(transfer, want_transfer);
        assert_eq!((ttfb.len(), transfer.len()), (1000, 1000));
    }

    #[test]
    fn a_stages_end_ships_a_piece_of_the_interval() {
        let (mut a, mut rx) = stats(false);
        a.record_ok(0, 5, None, None, (0, 0));
        a.end_stage();
        a.record_ok(0, 6, None, None, (0, 0));
        a.ship();
        let got: Vec<(u64, usize, bool, u64)> = std::iter::from_fn(|| rx.try_recv().ok())
            .map(|r| match r {
                Report::Interval {
                    idx,
                    stage,
                    closes,
                    tally,
                    ..
                } => (idx, stage, closes, tally.ok),
                Report::Last { .. } => unreachable!(),
            })
            .collect();
        assert_eq!(got, [(0, 0, false, 1), (0, 1, true, 1)]);
    }
}
