//! One VolanoMark run: create every user (room by room, user by user, each entered before the next
//! connects, as VolanoMark does), start the clock, wait until every connection has closed, add up.

use std::sync::Arc;
use std::time::Duration;

use bench_proto::results::{new_histogram, ErrorCounts, ErrorKind};
use hdrhistogram::Histogram;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::{timeout, Instant};

use super::load::ChatLoad;
use super::stamps::Stamps;
use super::user::{Phase, RunShared, User, UserResult};

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
    /// Fan-out latency of every delivery, µs.
    pub latency: Histogram<u64>,
    /// True when every user finished the protocol (and nothing aborted the run).
    pub completed: bool,
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
}

/// Keep this many error messages per run.
const FIRST_ERRORS: usize = 5;

/// Runs the test once. `stop` turning true (SIGINT) aborts it; the outcome then says so.
pub async fn run_once(load: &ChatLoad, run: u64, mut stop: watch::Receiver<bool>) -> RunOutcome {
    let (phase, _) = watch::channel(Phase::Setup);
    let stamps = Stamps::new(
        load.rooms as usize,
        load.users as usize,
        load.count as usize,
    );
    let mut shared = Arc::new(RunShared::new(load.clone(), phase, stamps));
    let users = enter_all(load, &shared, &mut stop).await;

    let all_entered =
        users.tasks.len() as u64 == load.connections() && *shared.phase.borrow() == Phase::Setup;
    let begin = Instant::now();
    let started = all_entered
        && shared.phase.send_if_modified(|p| {
            let setup = *p == Phase::Setup;
            if setup {
                *p = Phase::Running;
            }
            setup
        });
    tell(
        &users.controls,
        if started {
            Phase::Running
        } else {
            Phase::Abort
        },
    );

    let mut failed = shared.phase.subscribe();
    let mut join = Box::pin(join_all(users.tasks));
    let results = tokio::select! {
        r = &mut join => r,
        _ = stop.wait_for(|&s| s) => {
            shared.phase.send_replace(Phase::Abort);
            tell(&users.controls, Phase::Abort);
            join.await
        }
        _ = failed.wait_for(|&p| p == Phase::Abort) => {
            tell(&users.controls, Phase::Abort);
            join.await
        }
    };

    let mut out = RunOutcome {
        run,
        elapsed: Duration::ZERO,
        sent: 0,
        received: 0,
        validated: 0,
        bytes_sent: 0,
        bytes_received: 0,
        errors: users.errors,
        first_errors: users.first_errors,
        latency: new_histogram(),
        completed: started && *shared.phase.borrow() == Phase::Running,
    };
    let end = add_up(&mut out, results, begin);
    // Every user task has ended, and with it its share of `shared`.
    match Arc::get_mut(&mut shared) {
        Some(shared) => {
            for h in shared.latency.iter_mut() {
                // Same precision on both sides, and the sum grows to any range: adding cannot fail.
                let _ = out.latency.add(&*h.get_mut());
            }
        }
        None => {
            *out.errors.get_mut(ErrorKind::Io) += 1;
            out.first_errors
                .push("the run's latency histograms were still in use".to_owned());
            out.completed = false;
        }
    }
    if started {
        out.elapsed = end.saturating_duration_since(begin);
    }
    out
}

/// The users created so far, their control channels, and what went wrong while they entered.
struct Entered {
    tasks: Vec<JoinHandle<UserResult>>,
    controls: Vec<mpsc::Sender<Phase>>,
    errors: ErrorCounts,
    first_errors: Vec<String>,
}

/// Creates the users room by room, each entered before the next connects; stops at the first that fails to
/// enter (it counted its own error), at a user not entered within the timeout, or when `stop` turns true.
async fn enter_all(
    load: &ChatLoad,
    shared: &Arc<RunShared>,
    stop: &mut watch::Receiver<bool>,
) -> Entered {
    let mut users = Entered {
        tasks: Vec::with_capacity(load.connections() as usize),
        controls: Vec::with_capacity(load.connections() as usize),
        errors: ErrorCounts::default(),
        first_errors: Vec::new(),
    };
    for room in 0..load.rooms as usize {
        for number in 1..=load.users {
            let (entered_tx, entered) = oneshot::channel();
            // Room for both messages a user can get: Running, then Abort.
            let (control, ctl) = mpsc::channel(2);
            users.controls.push(control);
            let user = User::new(shared.clone(), room, number, entered_tx);
            users.tasks.push(tokio::spawn(user.run(ctl)));
            let ready = tokio::select! {
                r = timeout(load.timeout, entered) => r,
                _ = stop.wait_for(|&s| s) => return users,
            };
            match ready {
                Ok(Ok(Ok(()))) => {}
                // The user counted its own error and aborted the run.
                Ok(Ok(Err(_))) | Ok(Err(_)) => return users,
                Err(_) => {
                    *users.errors.get_mut(ErrorKind::Timeout) += 1;
                    users.first_errors.push(format!(
                        "Mark{number} in Room{}: not entered within {:?}",
                        load.start as usize + room,
                        load.timeout
                    ));
                    return users;
                }
            }
        }
    }
    users
}

/// Adds every user's counts into `out` (a panicked user is an I/O error); returns when the last connection
/// closed.
fn add_up(out: &mut RunOutcome, results: (Vec<UserResult>, u64), begin: Instant) -> Instant {
    let (results, panicked) = results;
    if panicked > 0 {
        *out.errors.get_mut(ErrorKind::Io) += panicked;
        out.first_errors
            .push(format!("{panicked} user task(s) panicked"));
        out.completed = false;
    }
    let mut end = begin;
    for r in results {
        out.sent += r.sent;
        out.received += r.received;
        out.validated += r.validated;
        out.bytes_sent += r.bytes_sent;
        out.bytes_received += r.bytes_received;
        out.errors.add(&r.errors);
        if let Some(e) = r.first_error {
            if out.first_errors.len() < FIRST_ERRORS {
                out.first_errors.push(e);
            }
        }
        end = end.max(r.closed_at);
    }
    end
}

/// Tells every user (whose channel has room for it: each gets at most two messages).
fn tell(controls: &[mpsc::Sender<Phase>], phase: Phase) {
    for c in controls {
        let _ = c.try_send(phase);
    }
}

/// Awaits every task, in order; also returns how many panicked (users that reported nothing).
async fn join_all(tasks: Vec<JoinHandle<UserResult>>) -> (Vec<UserResult>, u64) {
    let mut out = Vec::with_capacity(tasks.len());
    let mut panicked = 0;
    for t in tasks {
        match t.await {
            Ok(r) => out.push(r),
            Err(_) => panicked += 1,
        }
    }
    (out, panicked)
}
