//! One VolanoMark run: create every user (room by room, user by user, each entered before the next
//! connects, as VolanoMark does), start the clock, wait until every connection has closed, add up.

use std::sync::Arc;
use std::time::Duration;

use bench_proto::results::{new_histogram, ErrorCounts, ErrorKind, RunEnd, Violation, Violations};
use hdrhistogram::Histogram;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::{sleep_until, timeout, Instant};

use super::load::ChatLoad;
use super::stamps::Stamps;
use super::user::{RunShared, User, UserResult};

/// The outcome of one run.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// 1-based.
    pub run: u64,
    /// From the start signal to the close of the last connection (zero if the run never started).
    pub elapsed: Duration,
    /// Chat messages sent and received, summed over users exactly as VolanoMark sums them.
    pub sent: u64,
    pub received: u64,
    pub validated: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub errors: ErrorCounts,
    /// The first few error messages, for the summary.
    pub first_errors: Vec<String>,
    /// Deliveries that broke the order checked (also in `errors.validation`), and the first few.
    pub violations: Violations,
    pub first_violations: Vec<Violation>,
    /// Deliveries out of the room's order when it was not checked (paced runs).
    pub departures: u64,
    /// Fan-out latency of every delivery, µs.
    pub latency: Histogram<u64>,
    /// Gaps between consecutive deliveries at each member, µs.
    pub gaps: Histogram<u64>,
    pub end: RunEnd,
}

impl RunOutcome {
    /// VolanoMark's throughput: (messages sent + messages received) / seconds.
    pub fn score(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            (self.sent + self.received) as f64 / s
        } else {
            0.0
        }
    }

    /// Every user finished the protocol.
    pub fn completed(&self) -> bool {
        self.end == RunEnd::Completed
    }
}

/// Keep this many error messages (and violations) per run.
const FIRST_ERRORS: usize = 5;

/// How long users get to stop once told to: each ends at its next poll, so only a user stuck in code that
/// does not yield could take longer (it is then abandoned, and counted).
const STOP_GRACE: Duration = Duration::from_secs(1);

/// Runs the test once, by its deadline. `stop` turning true (SIGINT, SIGTERM) cuts it short; the outcome
/// says how it ended, and keeps what was measured until then.
pub async fn run_once(load: &ChatLoad, run: u64, mut stop: watch::Receiver<bool>) -> RunOutcome {
    let deadline = Instant::now() + load.deadline;
    let (failed_tx, mut failed) = mpsc::unbounded_channel();
    let stamps = Stamps::new(
        load.rooms as usize,
        load.users as usize,
        load.count as usize,
    );
    let mut shared = Arc::new(RunShared::new(load.clone(), failed_tx, stamps));
    let mut users = enter_all(load, &shared, &mut stop, deadline).await;

    let mut end = users.end;
    if end == RunEnd::Completed && failed.try_recv().is_ok() {
        end = RunEnd::NotStarted;
    }
    let begin = Instant::now();
    if end == RunEnd::Completed {
        // Kept open to the end: a user whose channel closes takes it that the driver is gone.
        for s in &users.starts {
            let _ = s.try_send(());
        }
        // Each arm's future is dropped before its body runs: nothing is held while the users are awaited.
        tokio::select! {
            () = users.join() => {}
            () = requested(&mut stop) => end = RunEnd::Interrupted,
            Some(()) = failed.recv() => end = RunEnd::Failed,
            () = sleep_until(deadline) => end = RunEnd::Deadline,
        }
    }
    stop_all(&mut users, load, end).await;
    if end == RunEnd::Completed && (failed.try_recv().is_ok() || users.lost > 0) {
        end = RunEnd::Failed;
    }
    let mut out = add_up(run, &mut users, end, begin);
    // Every user task has ended, and with it its share of `shared`.
    match Arc::get_mut(&mut shared) {
        Some(shared) => {
            let t = shared.timings.total();
            (out.latency, out.gaps) = (t.latency, t.gaps);
        }
        None => {
            *out.errors.get_mut(ErrorKind::Io) += 1;
            out.first_errors
                .push("the run's latency histograms were still in use".to_owned());
            out.end = RunEnd::Failed;
        }
    }
    out
}

/// Tells every user to stop, gives them [`STOP_GRACE`] to, and counts why the run ended early.
async fn stop_all(users: &mut Users, load: &ChatLoad, end: RunEnd) {
    users.abort();
    if timeout(STOP_GRACE, users.join()).await.is_err() {
        let n = users.abandon();
        users.count(
            ErrorKind::Io,
            format!("{n} user(s) did not stop within {STOP_GRACE:?} of the abort: abandoned"),
        );
    }
    if end == RunEnd::Deadline {
        users.count(
            ErrorKind::Timeout,
            format!(
                "the run was still going at its deadline ({:?}): cut short",
                load.deadline
            ),
        );
    }
}

/// The users created so far, the channels that tell them the clock started or the run is aborted, what
/// they reported, and what went wrong while they entered.
struct Users {
    tasks: Vec<JoinHandle<UserResult>>,
    /// `tasks[..joined]` have been awaited (their results are in `results`).
    joined: usize,
    results: Vec<UserResult>,
    /// Users whose task panicked or was abandoned: they reported nothing.
    lost: u64,
    starts: Vec<mpsc::Sender<()>>,
    aborts: Vec<oneshot::Sender<()>>,
    errors: ErrorCounts,
    first_errors: Vec<String>,
    /// `Completed` while nothing ended the setup early; else why it ended.
    end: RunEnd,
}

impl Users {
    /// Awaits every user, in order, keeping each result as it comes: cancelled, it loses nothing and can
    /// be awaited again.
    async fn join(&mut self) {
        while let Some(task) = self.tasks.get_mut(self.joined) {
            let result = task.await;
            self.joined += 1;
            match result {
                Ok(r) => self.results.push(r),
                Err(_) => {
                    self.lost += 1;
                    self.count(ErrorKind::Io, "a user task panicked".to_owned());
                }
            }
        }
    }

    /// Tells every user to stop where it is.
    fn abort(&mut self) {
        for a in self.aborts.drain(..) {
            let _ = a.send(());
        }
    }

    /// Gives up on the users not yet ended; returns how many.
    fn abandon(&mut self) -> u64 {
        let rest = &self.tasks[self.joined..];
        rest.iter().for_each(JoinHandle::abort);
        let n = rest.len() as u64;
        self.joined = self.tasks.len();
        self.lost += n;
        n
    }

    fn count(&mut self, kind: ErrorKind, message: String) {
        *self.errors.get_mut(kind) += 1;
        if self.first_errors.len() < FIRST_ERRORS {
            self.first_errors.push(message);
        }
    }
}

/// Resolves once `stop` is true; never, if its sender is gone without having asked. (The guard `wait_for`
/// returns is dropped here, not held by the caller.)
async fn requested(stop: &mut watch::Receiver<bool>) {
    if stop.wait_for(|&s| s).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Creates the users room by room, each entered before the next connects; stops at the first that fails to
/// enter (it counted its own error), at a user not entered within the timeout, at the deadline, or when
/// `stop` turns true.
async fn enter_all(
    load: &ChatLoad,
    shared: &Arc<RunShared>,
    stop: &mut watch::Receiver<bool>,
    deadline: Instant,
) -> Users {
    let n = load.connections() as usize;
    let mut users = Users {
        tasks: Vec::with_capacity(n),
        joined: 0,
        results: Vec::with_capacity(n),
        lost: 0,
        starts: Vec::with_capacity(n),
        aborts: Vec::with_capacity(n),
        errors: ErrorCounts::default(),
        first_errors: Vec::new(),
        end: RunEnd::Completed,
    };
    for room in 0..load.rooms as usize {
        for number in 1..=load.users {
            let (entered_tx, entered) = oneshot::channel();
            let (start_tx, start) = mpsc::channel(1);
            let (abort_tx, abort) = oneshot::channel();
            users.starts.push(start_tx);
            users.aborts.push(abort_tx);
            let user = User::new(shared.clone(), room, number, entered_tx);
            users.tasks.push(tokio::spawn(user.run(start, abort)));
            let ready = tokio::select! {
                r = timeout(load.timeout, entered) => r,
                () = requested(stop) => {
                    users.end = RunEnd::Interrupted;
                    return users;
                }
                () = sleep_until(deadline) => {
                    users.end = RunEnd::Deadline;
                    return users;
                }
            };
            match ready {
                Ok(Ok(Ok(()))) => {}
                // The user counted its own error.
                Ok(Ok(Err(_))) | Ok(Err(_)) => {
                    users.end = RunEnd::NotStarted;
                    return users;
                }
                Err(_) => {
                    users.end = RunEnd::NotStarted;
                    users.count(
                        ErrorKind::Timeout,
                        format!(
                            "Mark{number} in Room{}: not entered within {:?}",
                            load.start as usize + room,
                            load.timeout
                        ),
                    );
                    return users;
                }
            }
        }
    }
    users
}

/// Adds every user's counts up into the run's outcome. The run's time is from the start signal to the
/// close of the last connection, for a run that started.
fn add_up(run: u64, users: &mut Users, end: RunEnd, begin: Instant) -> RunOutcome {
    let mut out = RunOutcome {
        run,
        elapsed: Duration::ZERO,
        sent: 0,
        received: 0,
        validated: 0,
        bytes_sent: 0,
        bytes_received: 0,
        errors: std::mem::take(&mut users.errors),
        first_errors: std::mem::take(&mut users.first_errors),
        violations: Violations::default(),
        first_violations: Vec::new(),
        departures: 0,
        latency: new_histogram(),
        gaps: new_histogram(),
        end,
    };
    let mut last = begin;
    for r in users.results.drain(..) {
        out.sent += r.sent;
        out.received += r.received;
        out.validated += r.validated;
        out.bytes_sent += r.bytes_sent;
        out.bytes_received += r.bytes_received;
        out.errors.add(&r.errors);
        out.violations.add(&r.violations);
        out.departures += r.departures;
        let room = FIRST_ERRORS.saturating_sub(out.first_violations.len());
        out.first_violations
            .extend(r.first_violations.into_iter().take(room));
        if let Some(e) = r.first_error {
            if out.first_errors.len() < FIRST_ERRORS {
                out.first_errors.push(e);
            }
        }
        last = last.max(r.closed_at);
    }
    if end != RunEnd::NotStarted {
        out.elapsed = last.saturating_duration_since(begin);
    }
    out
}
