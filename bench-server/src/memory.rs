//! Giving memory back after a storm of connections. glibc's malloc keeps what thousands of closed
//! connections freed (free pages between live allocations, in the main arena and each worker thread's),
//! so RSS stayed at its peak for good (5,000 connections opened and closed nine times: 7 MB idle, 115 MB
//! ever after). A watcher calls `malloc_trim`, which also releases the whole free pages inside every
//! arena, once the open connections have fallen well below their high-water mark since the last trim:
//! after a storm, never under steady load or steady churn (the open count stays level), and at most once
//! per settling time. A connection costs two relaxed atomic operations at open and two at close (a wake
//! too while far below the mark); requests cost nothing.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use tokio::sync::Notify;

/// Connections open now (both servers).
static OPEN: AtomicUsize = AtomicUsize::new(0);
/// The most open at once since the last trim.
static HIGH: AtomicUsize = AtomicUsize::new(0);
/// Woken when the open connections fall `TRIM_AFTER` below the high-water mark.
static FALLEN: Notify = Notify::const_new();
/// Trims done.
static TRIMS: AtomicU64 = AtomicU64::new(0);

/// Connections that must have closed, from the high-water mark, for a trim: an HTTP connection holds about
/// 22 KiB (hyper's 8 KiB read buffer and 8 KiB write buffer, its task and service future), a chat one about
/// 10 KiB, so at least a few MiB are free then.
const TRIM_AFTER: usize = 256;

/// How long the watcher lets a storm finish closing before it trims, and so the least time between trims.
pub const SETTLE: Duration = Duration::from_millis(500);

pub(crate) fn connection_opened() {
    let open = OPEN.fetch_add(1, Relaxed) + 1;
    HIGH.fetch_max(open, Relaxed);
}

pub(crate) fn connection_closed() {
    let open = OPEN.fetch_sub(1, Relaxed) - 1;
    if HIGH.load(Relaxed).saturating_sub(open) >= TRIM_AFTER {
        FALLEN.notify_one();
    }
}

/// Trims done so far (for `/metrics`).
pub fn trims() -> u64 {
    TRIMS.load(Relaxed)
}

/// Waits until the open connections have fallen at least `TRIM_AFTER` below their high-water mark, lets
/// the rest close for `settle`, then trims the heap (on the blocking pool: a trim holds the allocator's
/// locks for a few milliseconds) and starts again from the connections open then. Sleeps otherwise: no
/// timer ticks while nothing closes. Runs until dropped.
pub async fn return_freed_memory(settle: Duration) {
    loop {
        FALLEN.notified().await;
        tokio::time::sleep(settle).await;
        let open = OPEN.load(Relaxed);
        // A wake stored while the last trim settled finds nothing more to do.
        if HIGH.load(Relaxed).saturating_sub(open) < TRIM_AFTER {
            continue;
        }
        HIGH.store(open, Relaxed);
        if tokio::task::spawn_blocking(trim).await.is_ok() {
            TRIMS.fetch_add(1, Relaxed);
        }
    }
}

/// Returns the free memory of every malloc arena to the kernel.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn trim() {
    // SAFETY: malloc_trim has no preconditions: it takes each arena's lock, releases free pages and
    // returns whether it released any.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Other allocators return memory by themselves (or not at all); nothing to do.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}
