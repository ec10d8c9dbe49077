//! The collector: merges the workers' interval tallies as they arrive (on the pipeline's runtime, never on
//! a worker's), closes an interval once every worker has reported it, and keeps the run's totals and its
//! timeline. A closed interval is final, so a checkpoint written from it is never revised.

use std::collections::BTreeMap;
use std::time::Duration;

use bench_proto::results::{
    encode_histogram, Counts, ErrorCounts, ErrorKind, InFlight, Interval, Recovery,
};
use hdrhistogram::Histogram;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

use super::stats::{Connects, OpTally, Report, Tally, WorkerEnd};
use crate::readings::{own_rss_kb, Gauge};

/// All workers' measurements so far, merged.
#[derive(Debug)]
pub struct RunStats {
    pub counts: Counts,
    pub corrected: Histogram<u64>,
    pub uncorrected: Option<Histogram<u64>>,
    pub max_lag_us: Option<u64>,
    pub last_completion: Option<Instant>,
    pub addr_not_avail: u64,
    pub first_errors: Vec<(ErrorKind, String)>,
    pub connects: Connects,
    pub intervals: Vec<Interval>,
    pub recoveries: Vec<Recovery>,
    /// A mix: each operation's calls (empty without one).
    pub ops: Vec<OpTally>,
    /// Staged runs: each stage's calls, in order (empty without stages; the stages not reached yet are
    /// empty).
    pub stages: Vec<StageTally>,
    /// Time to first byte and transfer of the ok calls (µs).
    pub ttfb: Histogram<u64>,
    pub transfer: Histogram<u64>,
}

/// One stage's calls.
#[derive(Debug, Clone)]
pub struct StageTally {
    pub ok: u64,
    pub errors: [u64; 6],
    pub corrected: Histogram<u64>,
}

/// What the collector needs to know of the run's shape.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shape {
    pub open_loop: bool,
    /// Operations of a mix (0 without one).
    pub ops: usize,
    /// Stages (0 without).
    pub stages: usize,
}

/// What the collector has to say.
#[derive(Debug)]
pub enum Event {
    /// An interval has closed (every worker has reported it): the timeline's newest entry.
    Closed(Closed),
    /// Every worker has finished; `finish` closes the last interval.
    Finished,
}

/// A closed interval: where it lies in the measured interval, and its merged latencies (for `--hlog`).
#[derive(Debug)]
pub struct Closed {
    pub start: Duration,
    pub length: Duration,
    pub latencies: Histogram<u64>,
    pub ok: u64,
    pub errors: u64,
}

#[derive(Debug)]
pub(super) struct Collector {
    rx: UnboundedReceiver<Report>,
    interval: Duration,
    /// Per worker: the next interval it will report.
    next: Vec<u64>,
    /// Per worker: whether it has sent its last report.
    done: Vec<bool>,
    pending: BTreeMap<u64, Tally>,
    totals: Tally,
    /// Per stage (empty without stages).
    stages: Vec<Tally>,
    intervals: Vec<Interval>,
    first_errors: [Option<String>; 6],
    in_flight: InFlight,
    last_completion: Option<Instant>,
    /// `--monitor-pid`, `--agent`: read at each interval's close (RSS, open fds) for the soak verdict's
    /// series.
    server: Option<Gauge>,
}

impl Collector {
    pub(super) fn new(
        rx: UnboundedReceiver<Report>,
        workers: usize,
        interval: Duration,
        shape: Shape,
        server: Option<Gauge>,
    ) -> Collector {
        Collector {
            rx,
            interval,
            next: vec![0; workers],
            done: vec![false; workers],
            pending: BTreeMap::new(),
            totals: Tally::new(shape.open_loop, shape.ops),
            stages: (0..shape.stages).map(|_| Tally::new(false, 0)).collect(),
            intervals: Vec::new(),
            first_errors: Default::default(),
            in_flight: InFlight::default(),
            last_completion: None,
            server,
        }
    }

    /// The next closed interval, or the end of every worker. Cancel-safe: a report is taken in whole
    /// between awaits.
    pub(super) async fn next(&mut self) -> anyhow::Result<Event> {
        loop {
            if let Some(event) = self.close_ready() {
                return Ok(event);
            }
            match self.rx.recv().await {
                Some(report) => self.take(report),
                None => anyhow::bail!("a worker thread failed (see its message above)"),
            }
        }
    }

    /// Whether another event is already waiting (reports that came in meanwhile are taken): a checkpoint
    /// written now would be overtaken at once.
    pub(super) fn behind(&mut self) -> bool {
        while let Ok(report) = self.rx.try_recv() {
            self.take(report);
        }
        let k = self.intervals.len() as u64;
        self.finished() || self.next.iter().zip(&self.done).all(|(n, d)| *n > k || *d)
    }

    fn take(&mut self, report: Report) {
        let (idx, stage, tally) = match report {
            Report::Interval {
                worker,
                idx,
                stage,
                closes,
                tally,
            } => {
                self.next[worker] = idx + u64::from(closes);
                (idx, stage, tally)
            }
            Report::Last {
                worker,
                idx,
                stage,
                tally,
                end,
            } => {
                self.done[worker] = true;
                self.absorb_end(end);
                self.next[worker] = idx + 1;
                (idx, stage, tally)
            }
        };
        if let Some(s) = self.stages.get_mut(stage) {
            s.ok += tally.ok;
            for (a, b) in s.errors.iter_mut().zip(tally.errors) {
                *a += b;
            }
            s.corrected
                .add(&tally.corrected)
                .expect("histograms of equal bounds add");
        }
        match self.pending.get_mut(&idx) {
            Some(t) => t.add(&tally),
            None => {
                self.pending.insert(idx, tally);
            }
        }
    }

    fn absorb_end(&mut self, end: WorkerEnd) {
        for (mine, theirs) in self.first_errors.iter_mut().zip(end.first_errors) {
            if mine.is_none() {
                *mine = theirs;
            }
        }
        self.in_flight.add(&end.in_flight);
        self.last_completion = self.last_completion.max(end.last_completion);
    }

    fn finished(&self) -> bool {
        self.done.iter().all(|d| *d)
    }

    /// Closes the oldest open interval if every worker is past it (a finished worker is past them all);
    /// when every worker has finished, the last interval stays open for `finish`.
    fn close_ready(&mut self) -> Option<Event> {
        let k = self.intervals.len() as u64;
        let reported = self.next.iter().zip(&self.done).all(|(n, d)| *n > k || *d);
        let last = self.next.iter().max().map_or(0, |n| n.saturating_sub(1));
        if self.finished() && k >= last {
            return Some(Event::Finished);
        }
        if !reported {
            return None;
        }
        Some(Event::Closed(self.close(k, self.interval)))
    }

    fn close(&mut self, k: u64, dur: Duration) -> Closed {
        let tally = self
            .pending
            .remove(&k)
            .unwrap_or_else(|| self.totals.fresh());
        let start = self.start_of(k);
        let server = self.server.as_ref().map_or((None, None), Gauge::now);
        self.intervals.push(Interval {
            t_s: start.as_secs_f64(),
            dur_s: dur.as_secs_f64(),
            ok: tally.ok,
            errors: ErrorCounts::from_array(&tally.errors),
            p99_us: if tally.corrected.is_empty() {
                0
            } else {
                tally.corrected.value_at_quantile(0.99)
            },
            corrected: encode_histogram(&tally.corrected),
            uncorrected: tally.uncorrected.as_ref().map(encode_histogram),
            client_rss_kb: own_rss_kb(),
            server_rss_kb: server.0,
            server_fds: server.1,
        });
        self.totals.add(&tally);
        Closed {
            start,
            length: dur,
            ok: tally.ok,
            errors: tally.errors_total(),
            latencies: tally.corrected,
        }
    }

    fn start_of(&self, k: u64) -> Duration {
        self.interval
            .saturating_mul(u32::try_from(k).unwrap_or(u32::MAX))
    }

    /// When the last worker's last call completed (known once every worker has finished).
    pub(super) fn last_completion(&self) -> Option<Instant> {
        self.last_completion
    }

    /// Closes the last interval at `elapsed` from the start of the measured interval (call after
    /// [`Event::Finished`]); its merged latencies come back for `--hlog`.
    pub(super) fn finish(&mut self, elapsed: Duration) -> Option<Closed> {
        let k = self.intervals.len() as u64;
        let last = self.next.iter().max().map_or(0, |n| n.saturating_sub(1));
        if !self.finished() || k > last {
            return None;
        }
        Some(self.close(k, elapsed.saturating_sub(self.start_of(k))))
    }

    /// The run so far: every closed interval (and, after `finish`, the whole run).
    pub(super) fn stats(&self) -> RunStats {
        let t = &self.totals;
        let from_send = t.uncorrected.as_ref().unwrap_or(&t.corrected);
        let (ttfb, transfer) = t.timed.phases(from_send, t.ok);
        let errors = ErrorCounts::from_array(&t.errors);
        let counts = Counts {
            ok: t.ok,
            errors_total: errors.total(),
            errors,
            validated: t.validated,
            bytes_sent: t.bytes_sent,
            bytes_received: t.bytes_received,
            http_status_codes: t.status_codes.iter().copied().collect(),
            failure_kinds: t
                .failures
                .iter()
                .map(|&(kind, n)| (kind.as_str().to_owned(), n))
                .collect(),
            in_flight: self.in_flight,
        };
        RunStats {
            counts,
            corrected: t.corrected.clone(),
            uncorrected: t.uncorrected.clone(),
            max_lag_us: t.max_lag_us,
            last_completion: self.last_completion,
            addr_not_avail: t.addr_not_avail,
            first_errors: ErrorKind::ALL
                .iter()
                .filter_map(|k| Some((*k, self.first_errors[k.index()].clone()?)))
                .collect(),
            connects: Connects {
                opened: t.connects.opened,
                failed: t.connects.failed,
                setup: t.connects.setup.clone(),
            },
            intervals: self.intervals.clone(),
            recoveries: t.recoveries.clone(),
            ops: t.ops.clone(),
            stages: self
                .stages
                .iter()
                .map(|s| StageTally {
                    ok: s.ok,
                    errors: s.errors,
                    corrected: s.corrected.clone(),
                })
                .collect(),
            ttfb,
            transfer,
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::sync::mpsc;

    use super::*;

    const PLAIN: Shape = Shape {
        open_loop: false,
        ops: 0,
        stages: 0,
    };

    fn tally(ok: u64) -> Tally {
        let mut t = Tally::new(false, 0);
        for i in 0..ok {
            t.ok += 1;
            t.corrected.record(100 + i).unwrap();
        }
        t
    }

    fn block<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn an_interval_closes_once_every_worker_has_reported_it() {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut c = Collector::new(
            rx,
            2,
            Duration::from_secs(1),
            PLAIN,
            Some(Gauge::Local {
                proc: crate::readings::Proc::default(),
                pid: std::process::id(),
            }),
        );
        let interval = |worker, idx, ok| Report::Interval {
            worker,
            idx,
            stage: 0,
            closes: true,
            tally: tally(ok),
        };
        tx.send(interval(0, 0, 2)).unwrap();
        tx.send(interval(0, 1, 3)).unwrap();
        tx.send(interval(1, 0, 5)).unwrap();
        // Interval 0 closes with both workers' calls; interval 1 waits for worker 1.
        let Event::Closed(first) = block(c.next()).unwrap() else {
            panic!("interval 0 closes")
        };
        assert_eq!(first.latencies.len(), 7);
        assert_eq!(
            (first.start, first.length),
            (Duration::ZERO, Duration::from_secs(1))
        );
        assert!(c.close_ready().is_none());
        assert!(!c.behind());
        tx.send(interval(1, 1, 0)).unwrap();
        assert!(c.behind(), "interval 1 is ready to close");
        let Event::Closed(second) = block(c.next()).unwrap() else {
            panic!("interval 1 closes")
        };
        assert_eq!(second.latencies.len(), 3);
        // Both finish within interval 2.
        let last = |worker, idx, ok| Report::Last {
            worker,
            idx,
            stage: 0,
            tally: tally(ok),
            end: WorkerEnd::default(),
        };
        tx.send(last(1, 2, 1)).unwrap();
        tx.send(last(0, 2, 4)).unwrap();
        assert!(matches!(block(c.next()).unwrap(), Event::Finished));
        assert!(c.finish(Duration::from_millis(2500)).is_some());
        let s = c.stats();
        assert_eq!(s.counts.ok, 15);
        let shape: Vec<(f64, f64, u64)> =
            s.intervals.iter().map(|i| (i.t_s, i.dur_s, i.ok)).collect();
        assert_eq!(shape, [(0.0, 1.0, 7), (1.0, 1.0, 3), (2.0, 0.5, 5)]);
        // The monitored process (here, this one) is read at each close: its RSS and open fds.
        assert!(s.intervals.iter().all(
            |i| i.server_rss_kb.is_some_and(|kb| kb > 0) && i.server_fds.is_some_and(|n| n > 0)
        ));
        assert_eq!(s.corrected.len(), 15);
    }

    #[test]
    fn a_worker_gone_without_its_last_report_is_an_error() {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut c = Collector::new(rx, 1, Duration::from_secs(1), PLAIN, None);
        drop(tx);
        assert!(block(c.next()).is_err());
    }

    /// A stage that ends within an interval: its piece counts in the interval and in that stage, the rest of
    /// the interval in the next stage.
    #[test]
    fn stages_are_tallied_from_the_pieces_of_intervals() {
        let (tx, rx) = mpsc::unbounded_channel();
        let shape = Shape { stages: 2, ..PLAIN };
        let mut c = Collector::new(rx, 1, Duration::from_secs(1), shape, None);
        let piece = |idx, stage, closes, ok| Report::Interval {
            worker: 0,
            idx,
            stage,
            closes,
            tally: tally(ok),
        };
        tx.send(piece(0, 0, false, 3)).unwrap();
        tx.send(piece(0, 1, true, 4)).unwrap();
        let Event::Closed(first) = block(c.next()).unwrap() else {
            panic!("interval 0 closes")
        };
        assert_eq!((first.ok, first.latencies.len()), (7, 7));
        tx.send(Report::Last {
            worker: 0,
            idx: 1,
            stage: 1,
            tally: tally(5),
            end: WorkerEnd::default(),
        })
        .unwrap();
        assert!(matches!(block(c.next()).unwrap(), Event::Finished));
        c.finish(Duration::from_millis(1500));
        let s = c.stats();
        let per_stage: Vec<(u64, u64)> =
            s.stages.iter().map(|t| (t.ok, t.corrected.len())).collect();
        assert_eq!(per_stage, [(3, 3), (9, 9)]);
        assert_eq!(s.counts.ok, 12);
    }
}
