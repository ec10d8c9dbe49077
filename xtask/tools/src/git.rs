//! git: the commit a run measured and whether the tree was dirty.

use std::path::Path;

use anyhow::Context as _;
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

/// The commit `spec` names (`git rev-parse --verify --quiet`).
pub fn commit_of(sh: &Shell, spec: &str) -> anyhow::Result<String> {
    Ok(cmd!(sh, "git rev-parse --verify --quiet {spec}")
        .quiet()
        .read()?)
}

/// `git worktree add --detach` of `commit` at `path`.
pub fn worktree_add(sh: &Shell, path: &Path, commit: &str) -> anyhow::Result<()> {
    cmd!(sh, "git worktree add --detach --quiet {path} {commit}")
        .quiet()
        .run()?;
    Ok(())
}

/// `git worktree remove --force`; whether it succeeded.
pub fn worktree_remove(sh: &Shell, path: &Path) -> bool {
    cmd!(sh, "git worktree remove --force {path}")
        .quiet()
        .ignore_stderr()
        .run()
        .is_ok()
}

/// `git worktree prune`, best effort.
pub fn worktree_prune(sh: &Shell) {
    let _ = cmd!(sh, "git worktree prune").quiet().run();
}

/// The committer time of `commit`, in seconds since the epoch.
pub fn commit_time(sh: &Shell, commit: &str) -> anyhow::Result<u64> {
    cmd!(sh, "git show -s --format=%ct {commit}")
        .quiet()
        .read()?
        .trim()
        .parse()
        .context("git show --format=%ct")
}
