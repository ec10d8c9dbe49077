//! debootstrap, chroot and tar: a Debian root file system built, provisioned with apt-get inside it, and
//! packed for `docker import` (the local cross builder images).

use std::path::Path;

use anyhow::Context as _;
use xshell::{cmd, Shell};

use crate::Program;

pub const DEBOOTSTRAP: Program = Program {
    name: "debootstrap",
    version_args: &["--version"],
    install: "apt-get install debootstrap",
    used_for: "building the local cross images (cargo xtask cross-image)",
};

/// `debootstrap --variant=minbase --cache-dir=CACHE SUITE ROOT MIRROR`.
pub fn bootstrap(
    sh: &Shell,
    cache: &Path,
    suite: &str,
    root: &Path,
    mirror: &str,
) -> anyhow::Result<()> {
    let cache = format!("--cache-dir={}", cache.display());
    cmd!(
        sh,
        "debootstrap --variant=minbase {cache} {suite} {root} {mirror}"
    )
    .quiet()
    .ignore_stdout()
    .run()
    .with_context(|| format!("debootstrap {suite} from {mirror}"))
}

/// `cp -a FROM TO`: a copy of a root file system, owners and modes kept.
pub fn copy(sh: &Shell, from: &Path, to: &Path) -> anyhow::Result<()> {
    cmd!(sh, "cp -a {from} {to}").run()?;
    Ok(())
}

/// `chroot ROOT apt-get ARGS…`, non-interactively; its output discarded.
pub fn apt_get(sh: &Shell, root: &Path, args: &[&str]) -> anyhow::Result<()> {
    let _frontend = sh.push_env("DEBIAN_FRONTEND", "noninteractive");
    cmd!(sh, "chroot {root} apt-get {args...}")
        .quiet()
        .ignore_stdout()
        .run()
        .with_context(|| format!("apt-get {} in {}", args.join(" "), root.display()))
}

/// `apt_get` with `/proc` mounted in the chroot for the duration (a JRE's postinst runs `java`, which needs
/// it); unmounted again whatever apt-get did, so the tree can be removed.
pub fn apt_get_with_proc(sh: &Shell, root: &Path, args: &[&str]) -> anyhow::Result<()> {
    let proc = root.join("proc");
    cmd!(sh, "mount -t proc proc {proc}")
        .quiet()
        .run()
        .with_context(|| format!("mounting /proc in {}", root.display()))?;
    let result = apt_get(sh, root, args);
    let unmounted = cmd!(sh, "umount {proc}")
        .quiet()
        .run()
        .with_context(|| format!("unmounting {}", proc.display()));
    result.and(unmounted)
}

/// `tar --numeric-owner -C ROOT -cf TAR .`.
pub fn pack(sh: &Shell, root: &Path, tar: &Path) -> anyhow::Result<()> {
    cmd!(sh, "tar --numeric-owner -C {root} -cf {tar} .")
        .quiet()
        .run()
        .context("packing the root file system")
}
