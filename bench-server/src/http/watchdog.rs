//! The per-connection watchdog: closes a connection on which nothing moved for the idle timeout, or whose
//! output has been blocked (the peer not reading) for the send timeout. One timer per connection, ticking
//! at a quarter of the shorter timeout; nothing is reset per read or write.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::{interval_at, Instant, MissedTickBehavior};

use super::conn_io::ConnState;

/// Why the watchdog closed a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// No byte moved either way for the idle timeout.
    Idle,
    /// Output waited on a full socket, without a byte written, for the send timeout.
    SendStalled,
}

/// Completes when the connection is to be closed, saying why. A connection is closed between one timeout
/// and one timeout plus a tick after the condition began.
pub(crate) async fn watchdog(state: Arc<ConnState>, idle: Duration, send: Duration) -> Cut {
    let tick = (idle.min(send) / 4).max(Duration::from_millis(1));
    let ticks = |d: Duration| d.as_nanos().div_ceil(tick.as_nanos()).max(1);
    let (idle_ticks, send_ticks) = (ticks(idle), ticks(send));
    let mut timer = interval_at(Instant::now() + tick, tick);
    timer.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let (mut quiet, mut stalled) = (0, 0);
    loop {
        timer.tick().await;
        let read = state.read_moved.swap(false, Relaxed);
        let wrote = state.write_moved.swap(false, Relaxed);
        quiet = if read || wrote { 0 } else { quiet + 1 };
        stalled = if wrote || !state.write_blocked.load(Relaxed) {
            0
        } else {
            stalled + 1
        };
        if stalled >= send_ticks {
            return Cut::SendStalled;
        }
        if quiet >= idle_ticks {
            return Cut::Idle;
        }
    }
}
