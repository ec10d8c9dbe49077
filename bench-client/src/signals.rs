//! SIGINT and SIGTERM, handled in this one place for every subcommand: they turn a stop flag
//! (`watch::Receiver<bool>`) that the request load and the chat load both watch.

use anyhow::Context as _;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;

/// A flag that turns true on the first SIGINT or SIGTERM. Call inside the tokio runtime that will watch it.
pub(crate) fn stop_on_signals() -> anyhow::Result<watch::Receiver<bool>> {
    let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        let _ = tx.send(true);
    });
    Ok(rx)
}

/// Resolves once `stop` is true; never, if its sender is gone without having asked.
pub async fn requested(stop: &mut watch::Receiver<bool>) {
    if stop.wait_for(|s| *s).await.is_err() {
        std::future::pending::<()>().await;
    }
}
