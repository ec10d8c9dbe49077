//! `cargo xtask max-rate` (not written yet).

use xshell::Shell;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_sh: &Shell, _args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`cargo xtask max-rate` is not implemented yet")
}
