//! What the two container backends (`docker` and `swarm`) share: the session label every object they create
//! carries (so cleanup finds it even when creation was interrupted half-way), how a step's clients are split
//! across client containers (`clients`), and the containers' kernel tunables and limits (`tuning`).

pub mod clients;
pub mod tuning;

use anyhow::Context as _;

/// The label key; its value is the session id.
pub const LABEL: &str = "wsbench.session";

pub fn label(session: &str) -> String {
    format!("{LABEL}={session}")
}

/// A session id, unique enough on one engine or swarm manager: the process id and the sub-second clock, in hex
/// (safe in container, service and network names).
pub(crate) fn session_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{:x}{:04x}", std::process::id(), nanos & 0xffff)
}

/// Appends `text` to a session's log file (what containers and services printed).
pub fn append(path: &std::path::Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    f.write_all(text.as_bytes())?;
    Ok(())
}
