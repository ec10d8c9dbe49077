//! One virtual user: its connection and its request loop, closed loop (back to back, optional think time)
//! or open loop (at its scheduled times, latency from the intended send time).

use std::cell::{Cell, RefCell};
use std::ops::Range;
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use bench_proto::results::ErrorKind;
use http::StatusCode;
use tokio::sync::{mpsc, watch};
use tokio::time::{sleep, sleep_until, Instant};

use super::broken::Broken;
use super::clock::Start;
use super::exchange::Connector;
use super::link::{connect, exchange, Link, Wire};
use super::schedule::Schedule;
use super::stats::WorkerStats;
use crate::config::RunConfig;
use crate::progress::Progress;
use crate::workload::Workload;

/// What the connections of one worker share (all on the worker's thread).
#[derive(Debug)]
pub(super) struct Shared {
    pub cfg: Arc<RunConfig>,
    pub workload: Arc<Workload>,
    pub stats: RefCell<WorkerStats>,
    pub progress: Arc<Progress>,
    pub worker: usize,
    pub start: watch::Receiver<Option<Start>>,
    /// Per connection of this worker (connection `c` at `c / threads`): when its call in flight was sent
    /// (intended, in open loop), for the report of calls still waiting when the run ends.
    pub in_flight: Vec<Cell<Option<Instant>>>,
    pub connector: Connector,
}

/// Connect failures back off exponentially from this delay up to [`BACKOFF_MAX`], instead of retrying
/// at once (tens of thousands of times a second against a refused port); each attempt is a connect error.
const BACKOFF_MIN: Duration = Duration::from_millis(10);
const BACKOFF_MAX: Duration = Duration::from_secs(1);

/// Connects (before the clock starts), reports ready, waits for the start, then calls until its request
/// count is done. The worker aborts this task at the deadline or a stop, so that a wake-up polls only the
/// call in progress (not the stop signal and the deadline too).
pub(super) async fn run(sh: Rc<Shared>, conn: u64, ready: mpsc::UnboundedSender<()>) {
    let wire = Wire::of(
        &sh.cfg,
        &sh.connector,
        &sh.workload,
        sh.workload.variant(conn),
    )
    .await;
    let link = if sh.cfg.keepalive {
        connect(&wire, &sh.connector, sh.cfg.connect_timeout)
            .await
            .ok()
    } else {
        None
    };
    let _ = ready.send(());
    let mut start_rx = sh.start.clone();
    let start = match start_rx.wait_for(Option::is_some).await {
        Ok(s) => s.expect("waited for Some"),
        Err(_) => return, // the run was abandoned before it started
    };
    calls(&sh, conn, start, &wire, link).await;
}

async fn calls(sh: &Shared, conn: u64, start: Start, wire: &Wire, mut link: Option<Link>) {
    let cfg = &*sh.cfg;
    let workload = &*sh.workload;
    let variant = workload.variant(conn);
    let counter = sh.progress.worker(sh.worker);
    let limit = cfg.requests_for(conn);
    let schedule = cfg
        .rate
        .map(|r| Schedule::new(start.t0, r, cfg.clients, conn));
    let mut buf: Vec<u8> = Vec::new();
    let mut timer = pin!(sleep(Duration::ZERO));
    let slot = &sh.in_flight[(conn / cfg.threads) as usize];
    let mut backoff = Duration::ZERO;
    // k counts calls made (the schedule index), responses those answered, measured those recorded.
    let (mut measured, mut responses, mut k) = (0u64, 0u64, 0u64);

    while limit.map_or(true, |n| measured < n) {
        if k > 0 && !cfg.think_time.is_zero() {
            sleep(cfg.think_time).await;
        }
        let intended = match &schedule {
            Some(s) => {
                let mut t = s.at(k);
                // A backlog left by the warm-up (a slow start, a stall) is dropped, not replayed into the
                // measured interval, where it would add calls that were never offered in it.
                if t < start.measure_start && Instant::now() >= start.measure_start {
                    k = s.first_at_or_after(start.measure_start);
                    t = s.at(k);
                }
                if Instant::now() < t {
                    sleep_until(t).await;
                }
                Some(t)
            }
            None => None,
        };
        k += 1;
        let sent_at = Instant::now();
        slot.set(Some(intended.unwrap_or(sent_at)));
        let due = sent_at + cfg.timeout;
        let outcome = {
            let mut this_call = pin!(call(
                cfg,
                &sh.connector,
                workload,
                variant,
                wire,
                &mut link,
                &mut buf
            ));
            // The timer is re-armed only when it fires (then at this call's due time, if that is later): an
            // earlier deadline left by a previous call is checked and moved on, so calls that finish in time
            // (nearly all) do not pay the timer wheel's re-registration.
            loop {
                tokio::select! {
                    biased;
                    r = &mut this_call => break Some(r),
                    _ = timer.as_mut() => {
                        if Instant::now() >= due {
                            break None;
                        }
                        timer.as_mut().reset(due);
                    }
                }
            }
        };
        let end = Instant::now();
        if start.deadline.is_some_and(|d| end > d) {
            // Completed after the measured interval: neither counted nor recorded; the worker reports it
            // as in flight at the end (its slot stays set).
            return;
        }
        slot.set(None);
        // Open loop: a call belongs to the interval its intended send time falls in, so the measured
        // calls are at most rate × duration; closed loop: calls completed in the interval.
        let measuring = intended.unwrap_or(end) >= start.measure_start;
        if outcome.is_none() || !cfg.keepalive || !link.as_ref().is_some_and(Link::reusable) {
            link = None;
        }
        let status = match outcome {
            None => Err((ErrorKind::Timeout, None)),
            Some(Err(b)) if b.is_connect() => Err((ErrorKind::Connect, Some(b))),
            Some(Err(b)) => Err((ErrorKind::Io, Some(b))),
            Some(Ok(response)) => Ok(response),
        };
        backoff = match &status {
            Err((ErrorKind::Connect, _)) => (backoff * 2).clamp(BACKOFF_MIN, BACKOFF_MAX),
            _ => Duration::ZERO,
        };
        if !measuring {
            responses += u64::from(status.is_ok());
            if !backoff.is_zero() {
                sleep(backoff).await;
            }
            continue;
        }
        measured += 1;
        {
            let mut st = sh.stats.borrow_mut();
            match status {
                Ok((status, body)) => {
                    let body = &buf[body];
                    let full = should_validate(responses, cfg.validate_first, cfg.validate_every);
                    responses += 1;
                    match workload.check(variant, status, body, full) {
                        Ok(validated) => {
                            let latency = end - intended.unwrap_or(sent_at);
                            let uncorrected = intended.map(|_| micros(end - sent_at));
                            let lag =
                                intended.map(|t| micros(sent_at.saturating_duration_since(t)));
                            st.record_ok(
                                || end - start.measure_start,
                                micros(latency),
                                uncorrected,
                                lag,
                            );
                            st.validated += u64::from(validated);
                            st.bytes_sent += variant.body.len() as u64;
                            st.bytes_received += body.len() as u64;
                            counter.add_ok();
                        }
                        Err(kind) => {
                            if kind == ErrorKind::HttpStatus {
                                st.record_status(status.as_u16());
                            }
                            fail(&mut st, kind, || {
                                workload.describe(variant, kind, status, body)
                            });
                            counter.add_error();
                        }
                    }
                }
                Err((kind, broken)) => {
                    if broken.as_ref().is_some_and(Broken::is_addr_not_available) {
                        st.addr_not_avail += 1;
                    }
                    fail(&mut st, kind, || match broken {
                        Some(b) => b.to_string(),
                        None => format!(
                            "no complete response within {}",
                            humantime::format_duration(cfg.timeout)
                        ),
                    });
                    counter.add_error();
                }
            }
            st.last_completion = Some(end);
        }
        if !backoff.is_zero() {
            sleep(backoff).await;
        }
    }
}

/// One call: (re)connect if needed, send, read the whole response (the body is `buf[range]`).
async fn call(
    cfg: &RunConfig,
    connector: &Connector,
    workload: &Workload,
    variant: &crate::workload::Variant,
    wire: &Wire,
    link: &mut Option<Link>,
    buf: &mut Vec<u8>,
) -> Result<(StatusCode, Range<usize>), Broken> {
    let l = match link {
        Some(l) => l,
        None => link.insert(connect(wire, connector, cfg.connect_timeout).await?),
    };
    exchange(wire, l, workload, variant, buf).await
}

fn fail(st: &mut WorkerStats, kind: ErrorKind, describe: impl FnOnce() -> String) {
    st.record_error(kind);
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
