//! cargo and rustc (the toolchain this xtask runs under: `$CARGO`, `$RUSTC`): versions, the target
//! directory, and the release build of the two binaries.

use std::path::PathBuf;

use anyhow::Context as _;
use xshell::{cmd, Shell};

use crate::Program;

pub const CARGO: Program = Program {
    name: "cargo",
    version_args: &["--version"],
    install: "install Rust with rustup (https://rustup.rs)",
    used_for: "every build",
};

/// The cargo running this xtask (`$CARGO`), else `cargo` on PATH.
pub fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// `cargo --version`.
pub fn version(sh: &Shell) -> Option<String> {
    let cargo = cargo();
    cmd!(sh, "{cargo} --version").quiet().read().ok()
}

/// `cargo ARGS…` with this terminal's output; Err when it fails.
pub fn run(sh: &Shell, args: &[&str]) -> anyhow::Result<()> {
    let cargo = cargo();
    cmd!(sh, "{cargo} {args...}").run()?;
    Ok(())
}

/// `rustc -vV` (`$RUSTC` or `rustc`): the version line and the host triple (what `cargo build` without
/// `--target` targets).
pub fn rustc(sh: &Shell) -> (Option<String>, Option<String>) {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = cmd!(sh, "{rustc} -vV").quiet().read() else {
        return (None, None);
    };
    let version = out.lines().next().map(str::to_owned);
    let host = out
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_owned);
    (version, host)
}

/// `rustc --version` (what dist builds record).
pub fn rustc_version(sh: &Shell) -> String {
    cmd!(sh, "rustc --version").read().unwrap_or_default()
}

/// Cargo's target directory as cargo itself resolves it (CARGO_TARGET_DIR, config, or `target/`).
pub fn target_dir(sh: &Shell) -> anyhow::Result<PathBuf> {
    let meta = cmd!(sh, "cargo metadata --format-version 1 --no-deps")
        .quiet()
        .read()?;
    let meta: serde_json::Value = serde_json::from_str(&meta).context("parsing cargo metadata")?;
    let dir = meta["target_directory"]
        .as_str()
        .context("cargo metadata has no target_directory")?;
    Ok(PathBuf::from(dir))
}

/// `cargo build --release -p P…`, its output on this terminal.
pub fn build_release(sh: &Shell, packages: &[&str]) -> anyhow::Result<()> {
    let cargo = cargo();
    let args: Vec<String> = packages
        .iter()
        .flat_map(|p| ["-p".to_owned(), (*p).to_owned()])
        .collect();
    cmd!(sh, "{cargo} build --release {args...}")
        .run()
        .context("building release binaries")
}
