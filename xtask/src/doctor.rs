//! `cargo xtask doctor` (not written yet).

use xshell::Shell;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_sh: &Shell, _args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`cargo xtask doctor` is not implemented yet")
}
