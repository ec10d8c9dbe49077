//! Where things are in the workspace: its root (xtask's manifest lives one level below it).

use std::path::PathBuf;

/// The workspace root.
pub(crate) fn project_root() -> PathBuf {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    dir.parent().map(PathBuf::from).unwrap_or(dir)
}
