//! Local builder images for `cross`, made without a registry: a Debian root filesystem from `debootstrap`, the
//! C toolchain and static glibc of each target installed into it with `chroot … apt-get`, then `docker import`.
//! Each image is tagged with a hash of its recipe, so a changed recipe builds a new image and an unchanged one
//! is reused.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context as _};
use sha2::{Digest as _, Sha256};
use wsbench_tools::debootstrap::{self, DEBOOTSTRAP};
use wsbench_tools::docker;
use xshell::Shell;

use super::Arch;

/// The repository of the builder images; the tag is `<arch>-<recipe hash>`.
pub const REPOSITORY: &str = "wsbench-builder";
const SUITE: &str = "bookworm";
const MIRROR: &str = "http://deb.debian.org/debian";

/// The Debian packages of `arch`'s image: a host C compiler for build scripts, and the target's linker with a
/// glibc that has `libc.a` (static linking).
pub fn packages(arch: Arch) -> &'static [&'static str] {
    match arch {
        Arch::X86_64 => &["gcc", "libc6-dev"],
        Arch::Ppc64le => &[
            "gcc",
            "libc6-dev",
            "gcc-powerpc64le-linux-gnu",
            "libc6-dev-ppc64el-cross",
        ],
    }
}

/// Everything that decides the image's content; its hash is the tag. Bump `v` when the steps below change.
fn recipe(arch: Arch) -> String {
    format!(
        "v1 debootstrap --variant=minbase {SUITE} {MIRROR}; chroot apt-get install --no-install-recommends {}; \
         apt clean; docker import",
        packages(arch).join(" ")
    )
}

/// The tag of `arch`'s builder image for the current recipe.
pub fn tag(arch: Arch) -> String {
    let hash = Sha256::digest(recipe(arch).as_bytes());
    let hex: String = hash[..6].iter().map(|b| format!("{b:02x}")).collect();
    format!("{REPOSITORY}:{}-{hex}", arch.name())
}

/// True when the image for the current recipe is in the local engine.
pub fn present(sh: &Shell, arch: Arch) -> bool {
    docker::image_id(sh, &tag(arch)).is_some()
}

/// What [`ensure`] did for one arch.
#[derive(Debug)]
pub struct Outcome {
    pub tag: String,
    /// False when the image for this recipe already existed.
    pub built: bool,
    /// This image's own time (copy of the root, apt-get install, import), without the shared debootstrap.
    pub seconds: f64,
}

/// Builds the images of `arches` that are missing (all of them with `rebuild`); keeps the downloaded packages
/// in `target/builder-images/debs` so a rebuild fetches less.
pub fn ensure(sh: &Shell, arches: &[Arch], rebuild: bool) -> anyhow::Result<Vec<Outcome>> {
    let todo: Vec<Arch> = arches
        .iter()
        .copied()
        .filter(|a| rebuild || !present(sh, *a))
        .collect();
    let mut out: Vec<Outcome> = arches
        .iter()
        .filter(|a| !todo.contains(a))
        .map(|a| Outcome {
            tag: tag(*a),
            built: false,
            seconds: 0.0,
        })
        .collect();
    if todo.is_empty() {
        return Ok(out);
    }
    preflight_for("building builder images", sh)?;
    let work = crate::paths::project_root().join("target/builder-images");
    let base = work.join("base");
    let start = Instant::now();
    remove_tree(&base)?;
    debootstrap(sh, &work, &base)?;
    println!(
        "debootstrap {SUITE}: {:.0} s (shared by the images)",
        start.elapsed().as_secs_f64()
    );
    for arch in todo {
        let start = Instant::now();
        let root = work.join(arch.name());
        remove_tree(&root)?;
        debootstrap::copy(sh, &base, &root)?;
        let result = install_and_import(sh, arch, &root, &work);
        remove_tree(&root)?;
        result?;
        out.push(Outcome {
            tag: tag(arch),
            built: true,
            seconds: start.elapsed().as_secs_f64(),
        });
    }
    remove_tree(&base)?;
    Ok(out)
}

/// debootstrap and chroot need root and the `debootstrap` package; `docker import` needs the daemon.
pub(crate) fn preflight_for(what: &str, sh: &Shell) -> anyhow::Result<()> {
    if !is_root() {
        bail!("{what} runs debootstrap and chroot, which need root: run as root (sudo -E)");
    }
    DEBOOTSTRAP.require(sh)?;
    if !docker::daemon_answers(sh) {
        bail!(
            "`docker info` failed: {what} imports an image into the Docker engine; start dockerd"
        );
    }
    Ok(())
}

pub use wsbench_tools::host::is_root;

fn debootstrap(sh: &Shell, work: &Path, base: &Path) -> anyhow::Result<()> {
    let debs = work.join("debs");
    std::fs::create_dir_all(&debs)?;
    debootstrap::bootstrap(sh, &debs, SUITE, base, MIRROR)
}

fn install_and_import(sh: &Shell, arch: Arch, root: &Path, work: &Path) -> anyhow::Result<()> {
    let pkgs = packages(arch);
    debootstrap::apt_get(sh, root, &["update", "-qq"])?;
    let mut install = vec!["install", "-y", "-qq", "--no-install-recommends"];
    install.extend(pkgs.iter().map(|p| &**p));
    debootstrap::apt_get(sh, root, &install)?;
    debootstrap::apt_get(sh, root, &["clean"])?;
    let _ = std::fs::remove_dir_all(root.join("var/lib/apt/lists"));
    let tar: PathBuf = work.join(format!("{}.tar", arch.name()));
    debootstrap::pack(sh, root, &tar)?;
    let tag = tag(arch);
    let label = format!("LABEL wsbench.recipe=\"{}\"", recipe(arch));
    let previous = tags_of(sh, arch);
    let imported = docker::import(sh, &label, &tar, &tag);
    let _ = std::fs::remove_file(&tar);
    imported?;
    // An image of an older recipe is now a leftover.
    for old in previous.into_iter().filter(|t| *t != tag) {
        docker::remove_image(sh, &old);
    }
    Ok(())
}

/// Every `wsbench-builder:<arch>-…` tag in the engine.
pub(crate) fn tags_of(sh: &Shell, arch: Arch) -> Vec<String> {
    let prefix = format!("{REPOSITORY}:{}-", arch.name());
    docker::tags(sh, REPOSITORY)
        .into_iter()
        .filter(|l| l.starts_with(&prefix))
        .collect()
}

fn remove_tree(dir: &Path) -> anyhow::Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", dir.display()))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_follow_the_recipe_per_arch() {
        let (x, p) = (tag(Arch::X86_64), tag(Arch::Ppc64le));
        assert!(x.starts_with("wsbench-builder:x86_64-"), "{x}");
        assert!(p.starts_with("wsbench-builder:ppc64le-"), "{p}");
        assert_eq!(x.len(), "wsbench-builder:x86_64-".len() + 12);
        assert_ne!(recipe(Arch::X86_64), recipe(Arch::Ppc64le));
        assert!(recipe(Arch::Ppc64le).contains("libc6-dev-ppc64el-cross"));
    }
}
