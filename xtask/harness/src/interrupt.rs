//! Ctrl-C / SIGTERM: the first one only raises a flag (children get the signal too and fail, and the cleanup
//! guards then remove what was created); a second one exits at once.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

static INTERRUPTS: AtomicUsize = AtomicUsize::new(0);
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();

/// Installs the handler once per process; later calls return the first call's outcome.
pub fn install() -> anyhow::Result<()> {
    INSTALLED
        .get_or_init(|| {
            ctrlc::set_handler(|| {
                INTERRUPTED.store(true, Ordering::SeqCst);
                if INTERRUPTS.fetch_add(1, Ordering::SeqCst) == 0 {
                    eprintln!("interrupted: cleaning up (press Ctrl-C again to exit at once and leave things behind)");
                } else {
                    eprintln!("interrupted twice: exiting without cleaning up");
                    std::process::exit(130);
                }
            })
            .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|e| anyhow::anyhow!("installing the Ctrl-C handler: {e}"))
}

/// True once Ctrl-C (or SIGTERM) arrived.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Fails with a clear message if the run was interrupted.
pub fn check() -> anyhow::Result<()> {
    if interrupted() {
        anyhow::bail!("interrupted");
    }
    Ok(())
}
