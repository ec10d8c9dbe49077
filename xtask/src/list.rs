//! `cargo xtask list` (not written yet).

use xshell::Shell;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_sh: &Shell, _args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`cargo xtask list` is not implemented yet")
}
