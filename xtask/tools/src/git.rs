//! git: the commit a run measured and whether the tree was dirty.

use xshell::{cmd, Shell};

use crate::Program;

pub const GIT: Program = Program {
    name: "git",
    version_args: &["--version"],
    install: "apt-get install git",
    used_for: "provenance (the commit measured) and the regression gate's base worktree",
};

/// `git rev-parse HEAD` and whether `git status --porcelain` lists anything; None outside a checkout.
pub fn head(sh: &Shell) -> Option<(String, bool)> {
    let commit = cmd!(sh, "git rev-parse HEAD")
        .quiet()
        .ignore_stderr()
        .read()
        .ok()?;
    let status = cmd!(sh, "git status --porcelain")
        .quiet()
        .ignore_stderr()
        .read()
        .ok()?;
    Some((commit, !status.trim().is_empty()))
}
