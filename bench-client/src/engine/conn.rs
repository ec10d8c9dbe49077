//! One virtual user: its connection and its request loop, closed loop (back to back, optional think time)
//! or open loop (at its scheduled times, latency from the intended send time).

use std::cell::RefCell;
use std::net::IpAddr;
use std::ops::Range;
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use bench_proto::results::ErrorKind;
use http::StatusCode;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::broken::Broken;
use super::clock::Start;
use super::exchange::Connector;
use super::link::{connect, exchange, Link, Wire};
use super::schedule::{self, Rate, Schedule};
use super::stats::WorkerStats;
use super::timer::Timer;
use super::watchdog::Slot;
use crate::config::RunConfig;
use crate::progress::{Progress, WorkerCounter};
use crate::workload::{Variant, Workload};
use bench_proto::shape::{Mix, Stages};

/// What the connections of one worker share (all on the worker's thread).
#[derive(Debug)]
pub(super) struct Shared {
    pub cfg: Arc<RunConfig>,
    pub workload: Arc<Workload>,
    pub stats: RefCell<WorkerStats>,
    pub progress: Arc<Progress>,
    pub worker: usize,
    pub start: watch::Receiver<Option<Start>>,
    /// Per connection of this worker (connection `c` at `c / threads`): its call in flight, for the
    /// watchdog's timeout and the report of calls still waiting when the run ends.
    pub in_flight: Vec<Slot>,
    pub connector: Connector,
    /// The worker's timer (its runtime has no time driver).
    pub timer: Rc<Timer>,
}

/// Connect failures back off exponentially from this delay up to [`BACKOFF_MAX`], instead of retrying
/// at once (tens of thousands of times a second against a refused port); each attempt is a connect error.
const BACKOFF_MIN: Duration = Duration::from_millis(10);
const BACKOFF_MAX: Duration = Duration::from_secs(1);

/// Connects (before the clock starts), reports ready, waits for the start, then calls until its request
/// count is done. The worker aborts this task at the deadline or a stop, so that a wake-up polls only the
/// call in progress (not the stop signal and the deadline too).
pub(super) async fn run(sh: Rc<Shared>, conn: u64, ready: mpsc::UnboundedSender<()>) {
    let mut wires = Vec::with_capacity(sh.workload.operations());
    for op in 0..sh.workload.operations() {
        let v = sh.workload.variant_of(op, conn);
        wires.push(Wire::of(&sh.cfg, &sh.connector, &sh.workload, v).await);
    }
    let source = sh.connector.source(conn);
    // A clients ramp's users connect when they arrive, not before the clock.
    let link = if sh.cfg.keepalive && !sh.cfg.shape.ramps_clients() {
        open(&sh, &wires[0], source).await.ok()
    } else {
        None
    };
    let _ = ready.send(());
    let mut start_rx = sh.start.clone();
    let start = match start_rx.wait_for(Option::is_some).await {
        Ok(s) => s.expect("waited for Some"),
        Err(_) => return, // the run was abandoned before it started
    };
    Calls::new(&sh, conn, start, &wires, source, link)
        .run()
        .await;
}

/// Opens a connection, recording its set-up time (or the failed attempt).
async fn open(sh: &Shared, wire: &Wire, source: Option<IpAddr>) -> Result<Link, Broken> {
    let t = Instant::now();
    let r = connect(
        wire,
        &sh.connector,
        source,
        sh.cfg.connect_timeout,
        &sh.timer,
    )
    .await;
    let setup = r.as_ref().ok().map(|_| t.elapsed());
    sh.stats.borrow_mut().record_connect(setup);
    r
}

/// One connection's request loop and its state between calls.
struct Calls<'a> {
    sh: &'a Shared,
    start: Start,
    /// Per operation (one, or a mix's): how it is sent and what it sends.
    wires: &'a [Wire],
    variants: Vec<&'a Variant>,
    /// A mix: each call's operation drawn from this connection's own seeded sequence.
    picker: Option<(fastrand::Rng, &'a Mix)>,
    /// A clients ramp: when this connection's client is active.
    presence: Option<Presence>,
    source: Option<IpAddr>,
    link: Option<Link>,
    counter: &'a WorkerCounter,
    slot: &'a Slot,
    limit: Option<u64>,
    schedule: Option<Schedule>,
    buf: Vec<u8>,
    /// Calls made (the schedule index), responses those answered, measured those recorded.
    k: u64,
    responses: u64,
    measured: u64,
    backoff: Duration,
    /// The last call failed and took the connection with it: its kind, for the sends an open loop gives up.
    down: Option<ErrorKind>,
    /// The measured failures since this connection's last success: when the first was known, how many.
    failing: Option<(Instant, u64)>,
}

impl<'a> Calls<'a> {
    fn new(
        sh: &'a Shared,
        conn: u64,
        start: Start,
        wires: &'a [Wire],
        source: Option<IpAddr>,
        link: Option<Link>,
    ) -> Calls<'a> {
        let cfg = &*sh.cfg;
        let shape = &cfg.shape;
        Calls {
            sh,
            start,
            wires,
            variants: (0..wires.len())
                .map(|op| sh.workload.variant_of(op, conn))
                .collect(),
            picker: shape.mix.as_ref().map(|m| {
                let seed = schedule::stream_seed(shape.seed ^ MIX_STREAM, conn);
                (fastrand::Rng::with_seed(seed), m)
            }),
            presence: shape
                .stages
                .as_ref()
                .filter(|_| shape.ramps_clients())
                .map(|s| Presence::of(s, conn, start.measure_start)),
            source,
            link,
            counter: sh.progress.worker(sh.worker),
            slot: &sh.in_flight[(conn / cfg.threads) as usize],
            limit: cfg.requests_for(conn),
            schedule: rate_of(cfg)
                .map(|r| Schedule::new(start.t0, r, shape.arrivals, cfg.clients, conn, shape.seed)),
            buf: Vec::new(),
            k: 0,
            responses: 0,
            measured: 0,
            backoff: Duration::ZERO,
            down: None,
            failing: None,
        }
    }

    fn counted(&self) -> bool {
        self.limit.is_some_and(|n| self.measured >= n)
    }

    async fn run(mut self) {
        let cfg = &*self.sh.cfg;
        while !self.counted() {
            if self.k > 0 && !cfg.think_time.is_zero() {
                self.sh.timer.sleep(cfg.think_time).await;
            }
            if let Some(p) = &mut self.presence {
                p.arrive(&mut self.link, &self.sh.timer).await;
            }
            let intended = match self.schedule.is_some() {
                true => {
                    let t = self.next_send().await;
                    if self.counted() {
                        break; // the sends given up completed the count
                    }
                    Some(t)
                }
                false => None,
            };
            let op = self.pick();
            self.k += 1;
            let sent_at = Instant::now();
            // The worker's watchdog times the call out: no timer per call.
            self.slot
                .begin(intended.unwrap_or(sent_at), sent_at + cfg.timeout, op);
            let outcome = {
                let (sh, wire, source, variant) =
                    (self.sh, &self.wires[op], self.source, self.variants[op]);
                let this_call = pin!(call(
                    sh,
                    variant,
                    wire,
                    source,
                    &mut self.link,
                    &mut self.buf
                ));
                self.slot.guard(this_call).await
            };
            let end = Instant::now();
            if self.start.deadline.is_some_and(|d| end > d) {
                // Completed after the measured interval: neither counted nor recorded; the worker reports it
                // as in flight at the end (its slot stays set).
                return;
            }
            self.slot.end();
            self.settle(&outcome);
            // Open loop: a call belongs to the interval its intended send time falls in, so the measured
            // calls are at most rate × duration; closed loop: calls completed in the interval.
            if intended.unwrap_or(end) >= self.start.measure_start {
                self.measured += 1;
                self.record(op, &outcome, intended, sent_at, end);
            } else {
                self.responses += u64::from(matches!(outcome, Some(Ok(_))));
            }
            if !self.backoff.is_zero() {
                self.sh.timer.sleep(self.backoff).await;
            }
        }
    }

    /// A mix: this call's operation, drawn from the connection's sequence (0 without a mix).
    #[inline]
    fn pick(&mut self) -> usize {
        match &mut self.picker {
            Some((rng, mix)) => mix.pick(rng.u64(..)),
            None => 0,
        }
    }

    /// Open loop: waits for the next intended send time and returns it. Sends that came due while the
    /// connection was down (the failed call, its backoff, the reconnection) are given up as failures of
    /// the kind that took it down, not replayed late into a server that just came back. Once the stages
    /// have no more sends for this connection, it waits for the end of the run.
    async fn next_send(&mut self) -> Instant {
        let start = self.start;
        let Some(s) = self.schedule.as_mut() else {
            unreachable!("only an open loop has a schedule")
        };
        if let Some(kind) = self.down.take() {
            let n = s.skip_before(Instant::now(), start.measure_start, start.deadline);
            self.give_up(kind, n);
        }
        let Some(s) = self.schedule.as_mut() else {
            unreachable!("only an open loop has a schedule")
        };
        // A backlog left by the warm-up (a slow start, a stall) is dropped, not replayed into the measured
        // interval, where it would add calls that were never offered in it.
        if s.due().is_some_and(|t| t < start.measure_start) && Instant::now() >= start.measure_start
        {
            s.skip_before(start.measure_start, start.measure_start, start.deadline);
        }
        let Some(t) = s.due() else {
            return std::future::pending().await;
        };
        s.advance();
        if Instant::now() < t {
            self.sh.timer.sleep_until(t).await;
        }
        t
    }

    /// After a call: drops a connection unfit for another, sets the backoff, and notes a connection a
    /// failure took down (for the sends an open loop gives up).
    #[inline(always)]
    fn settle(&mut self, outcome: &Outcome) {
        let cfg = &*self.sh.cfg;
        if outcome.is_none() || !cfg.keepalive || !self.link.as_ref().is_some_and(Link::reusable) {
            self.link = None;
        }
        let failed = match outcome {
            Some(Ok(_)) => None,
            None => Some(ErrorKind::Timeout),
            Some(Err(b)) => Some(b.kind()),
        };
        self.backoff = match failed {
            Some(ErrorKind::Connect) => (self.backoff * 2).clamp(BACKOFF_MIN, BACKOFF_MAX),
            _ => Duration::ZERO,
        };
        if failed.is_some() && self.link.is_none() {
            self.down = failed;
        }
    }

    /// `n` measured sends given up unsent: failed calls of `kind`.
    fn give_up(&mut self, kind: ErrorKind, n: u64) {
        let n = self.limit.map_or(n, |l| n.min(l - self.measured));
        if n == 0 {
            return;
        }
        self.measured += n;
        let picker = &mut self.picker;
        self.sh
            .stats
            .borrow_mut()
            .record_unsent(kind, n, || match picker {
                Some((rng, mix)) => mix.pick(rng.u64(..)),
                None => 0,
            });
        self.counter.add_errors(n);
        self.failing.get_or_insert((Instant::now(), 0)).1 += n;
    }

    /// Records a measured call: ok once its response passes the check, else failed by kind.
    #[inline(always)]
    fn record(
        &mut self,
        op: usize,
        outcome: &Outcome,
        intended: Option<Instant>,
        sent_at: Instant,
        end: Instant,
    ) {
        let (sh, cfg, workload, variant) = (
            self.sh,
            &*self.sh.cfg,
            &*self.sh.workload,
            self.variants[op],
        );
        let mut st = sh.stats.borrow_mut();
        let failed = match outcome {
            Some(Ok((status, body, timing))) => {
                let (status, body) = (*status, &self.buf[body.clone()]);
                let full = should_validate(self.responses, cfg.validate_first, cfg.validate_every);
                self.responses += 1;
                match workload.check(variant, status, body, full) {
                    Ok(validated) => {
                        let latency = end - intended.unwrap_or(sent_at);
                        let uncorrected = intended.map(|_| micros(end - sent_at));
                        let lag = intended.map(|t| micros(sent_at.saturating_duration_since(t)));
                        let bytes = (variant.body.len() as u64, body.len() as u64);
                        st.record_ok(op, micros(latency), uncorrected, lag, bytes);
                        if timing.apart() {
                            timing.record(&mut st, sent_at, end);
                        }
                        st.now.validated += u64::from(validated);
                        self.counter.add_ok();
                        if let Some((from, failures)) = self.failing {
                            self.failing = None;
                            st.record_recovery(self.start.measure_start, from, end, failures);
                        }
                        false
                    }
                    Err(kind) => {
                        if kind == ErrorKind::HttpStatus {
                            st.record_status(status.as_u16());
                        }
                        if kind == ErrorKind::Fault {
                            if let Some(failure) = workload.failure(body) {
                                st.record_failure(failure);
                            }
                        }
                        fail(&mut st, op, kind, || {
                            workload.describe(variant, kind, status, body)
                        });
                        true
                    }
                }
            }
            Some(Err(broken)) => {
                if broken.is_addr_not_available() {
                    st.now.addr_not_avail += 1;
                }
                fail(&mut st, op, broken.kind(), || broken.to_string());
                true
            }
            None => {
                fail(&mut st, op, ErrorKind::Timeout, || {
                    format!(
                        "no complete response within {}",
                        humantime::format_duration(cfg.timeout)
                    )
                });
                true
            }
        };
        if failed {
            self.counter.add_error();
            self.failing.get_or_insert((end, 0)).1 += 1;
        }
        st.end.last_completion = Some(end);
    }
}

/// A call's result: the response (status, where its body lies in the buffer, its timing), why there was
/// none, or `None` when it had none within its timeout.
type Outcome = Option<Result<(StatusCode, Range<usize>, Timing), Broken>>;

/// One call: (re)connect if needed, send, read the whole response (the body is `buf[range]`).
async fn call(
    sh: &Shared,
    variant: &Variant,
    wire: &Wire,
    source: Option<IpAddr>,
    link: &mut Option<Link>,
    buf: &mut Vec<u8>,
) -> Result<(StatusCode, Range<usize>, Timing), Broken> {
    let (l, connected) = match link {
        Some(l) => (l, None),
        None => (
            link.insert(open(sh, wire, source).await?),
            Some(Instant::now()),
        ),
    };
    let (status, body, first_byte) = exchange(wire, l, &sh.workload, variant, buf).await?;
    Ok((
        status,
        body,
        Timing {
            connected,
            first_byte,
        },
    ))
}

/// What a call saw of its phases beyond its start and end: when it had made its connection (if it made
/// one), and when its response's first byte was read (if the response took more than one read).
#[derive(Debug, Clone, Copy)]
struct Timing {
    connected: Option<Instant>,
    first_byte: Option<Instant>,
}

impl Timing {
    /// Whether its phases differ from its latency (see `stats::Timed`).
    #[inline]
    fn apart(&self) -> bool {
        self.connected.is_some() || self.first_byte.is_some()
    }

    fn record(&self, st: &mut WorkerStats, sent_at: Instant, end: Instant) {
        let request = self.connected.unwrap_or(sent_at);
        let first = self.first_byte.unwrap_or(end);
        st.record_timed(
            micros(end - sent_at),
            micros(first.saturating_duration_since(request)),
            micros(end.saturating_duration_since(first)),
        );
    }
}

/// The open loop's rate: a fixed one, or the stages'.
fn rate_of(cfg: &RunConfig) -> Option<Rate> {
    match (&cfg.shape.stages, cfg.rate) {
        (Some(s), _) if cfg.shape.ramps_rate() => Some(Rate::Stages(Arc::new(s.clone()))),
        (_, Some(r)) => Some(Rate::Fixed(r)),
        _ => None,
    }
}

/// Mixed into the run's seed for the mix's draws, so they are not the Poisson draws' sequence.
const MIX_STREAM: u64 = 0x6D69_7800;

/// A clients ramp: the windows of time this connection's client is active; between them it is gone (its
/// connection closed) and waits for the next.
#[derive(Debug)]
struct Presence {
    windows: Vec<(Instant, Instant)>,
    next: usize,
}

impl Presence {
    fn of(stages: &Stages, conn: u64, t0: Instant) -> Presence {
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        Presence {
            windows: stages
                .windows(conn)
                .into_iter()
                .map(|(a, b)| (at(a), at(b)))
                .collect(),
            next: 0,
        }
    }

    /// Returns once the client is active; a client past its window leaves (its connection closes) and
    /// waits for its next, or for the end of the run when it has none.
    async fn arrive(&mut self, link: &mut Option<Link>, timer: &Timer) {
        let now = Instant::now();
        while self.windows.get(self.next).is_some_and(|w| now >= w.1) {
            self.next += 1;
            *link = None;
        }
        let Some(&(from, _)) = self.windows.get(self.next) else {
            *link = None;
            return std::future::pending().await;
        };
        if now < from {
            *link = None;
            timer.sleep_until(from).await;
        }
    }
}

fn fail(st: &mut WorkerStats, op: usize, kind: ErrorKind, describe: impl FnOnce() -> String) {
    st.record_error(op, kind);
    if st.wants_detail(kind) {
        st.set_detail(kind, describe());
    }
}

/// The first `first` responses of a connection, then every `every`-th.
#[inline]
fn should_validate(n: u64, first: u64, every: u64) -> bool {
    n < first || (every > 0 && (n - first + 1) % every == 0)
}

#[inline]
fn micros(d: Duration) -> u64 {
    d.as_micros().min(u128::from(u64::MAX)) as u64
}

#[cfg(test)]
mod tests {
    use super::should_validate;

    #[test]
    fn validation_sample() {
        let picked: Vec<u64> = (0..30).filter(|&n| should_validate(n, 3, 10)).collect();
        assert_eq!(picked, [0, 1, 2, 12, 22]);
        let none_after: Vec<u64> = (0..30).filter(|&n| should_validate(n, 2, 0)).collect();
        assert_eq!(none_after, [0, 1]);
        assert!((0..5).all(|n| should_validate(n, 0, 1)));
    }
}
