//! rustup: the targets and components installed for the toolchain.

use xshell::{cmd, Shell};

use crate::Program;

pub const RUSTUP: Program = Program {
    name: "rustup",
    version_args: &["--version"],
    install: "install Rust with rustup (https://rustup.rs)",
    used_for: "cross builds (targets, rust-src)",
};

/// `rustup target list --installed` (empty when rustup cannot tell).
pub fn targets(sh: &Shell) -> Vec<String> {
    lines(cmd!(sh, "rustup target list --installed"))
}

/// `rustup component list --installed` (empty when rustup cannot tell).
pub fn components(sh: &Shell) -> Vec<String> {
    lines(cmd!(sh, "rustup component list --installed"))
}

/// `rustup target add TRIPLE`, its output on this terminal.
pub fn add_target(sh: &Shell, triple: &str) -> anyhow::Result<()> {
    cmd!(sh, "rustup target add {triple}").run()?;
    Ok(())
}

fn lines(c: xshell::Cmd<'_>) -> Vec<String> {
    c.quiet()
        .ignore_stderr()
        .read()
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().to_owned())
        .collect()
}
