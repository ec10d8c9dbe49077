//! Where things are in the workspace: its root, the directory above every crate's manifest that holds
//! `Cargo.lock`.

use std::path::{Path, PathBuf};

/// The workspace root: the nearest ancestor of the running crate's manifest directory (cargo sets
/// CARGO_MANIFEST_DIR for `cargo run` and `cargo test`; else this crate's, as compiled) holding `Cargo.lock`.
pub fn project_root() -> PathBuf {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    dir.ancestors()
        .find(|d| d.join("Cargo.lock").is_file())
        .map(Path::to_path_buf)
        .unwrap_or(dir)
}
