//! The server and client images: `FROM scratch` with one static binary each (`containers/*.Dockerfile`), built
//! locally from `target/dist` for either arch; no registry is needed. A ppc64le image runs here under
//! emulation (binfmt_misc, see `emulation`). Rebuilding a tag removes the image it replaced, so runs leave
//! only the current images behind. [`build_all`] (from an arch's `Dist`), [`tag_for`] and [`save`] are how
//! a caller (a swarm node of a given arch) gets its images.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use xshell::Shell;

use super::{Arch, Dist};
use wsbench_tools::docker;

/// Image names; the tag is the workspace version, suffixed with the arch for any arch but x86_64.
pub const SERVER: &str = "wsbench-server";
pub const CLIENT: &str = "wsbench-client";

/// One built image, for provenance.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Image {
    pub tag: String,
    pub id: String,
    pub dockerfile: String,
    /// Docker's name for the image's arch (`amd64`, `ppc64le`).
    pub arch: String,
    /// The image's arch is not this machine's: its containers ran under qemu-user through binfmt_misc.
    #[serde(default)]
    pub emulated: bool,
}

/// The x86_64 tag of `image` (`wsbench-server:0.1.0`, what compose.yaml runs).
pub fn tag(image: &str) -> String {
    tag_for(image, Arch::X86_64)
}

/// The tag of `image` built for `arch`: `wsbench-server:0.1.0` for x86_64, `wsbench-server:0.1.0-ppc64le`.
pub fn tag_for(image: &str, arch: Arch) -> String {
    let version = env!("CARGO_PKG_VERSION");
    match arch {
        Arch::X86_64 => format!("{image}:{version}"),
        other => format!("{image}:{version}-{}", other.name()),
    }
}

/// `docker save` of `arch`'s server and client images into the tar file `out` (for `docker load` on a node
/// of that arch); the images must have been built.
pub fn save(sh: &Shell, arch: Arch, out: &Path) -> anyhow::Result<()> {
    docker::save(sh, &[tag_for(SERVER, arch), tag_for(CLIENT, arch)], out)
}

/// Builds both images from `dist`'s binaries; returns them server first.
pub fn build_all(sh: &Shell, dist: &Dist) -> anyhow::Result<Vec<Image>> {
    let context = stage_context(dist)?;
    [
        (SERVER, "containers/server.Dockerfile"),
        (CLIENT, "containers/client.Dockerfile"),
    ]
    .into_iter()
    .map(|(image, dockerfile)| build_one(sh, dist, &context, image, dockerfile))
    .collect()
}

/// Builds one of the two images (`SERVER` or `CLIENT`) from `dist`'s binaries.
pub(crate) fn build_image(sh: &Shell, dist: &Dist, image: &str) -> anyhow::Result<Image> {
    let context = stage_context(dist)?;
    let name = image.strip_prefix("wsbench-").unwrap_or(image);
    build_one(
        sh,
        dist,
        &context,
        image,
        &format!("containers/{name}.Dockerfile"),
    )
}

/// `cargo xtask build --images`: builds them and returns the tags.
pub fn build(sh: &Shell, dist: &Dist) -> anyhow::Result<Vec<String>> {
    Ok(build_all(sh, dist)?.into_iter().map(|i| i.tag).collect())
}

/// The build context holds only the binaries, laid out by Docker's `TARGETARCH` (`amd64/`, `ppc64le/`), which
/// is what the Dockerfiles `COPY` from; `target/dist` names directories after our own arch names.
fn stage_context(dist: &Dist) -> anyhow::Result<PathBuf> {
    let context = crate::paths::project_root().join("target/containers/context");
    let dir = context.join(dist.arch.docker_arch());
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    for name in super::BINARIES {
        let (from, to) = (dist.dir.join(name), dir.join(name));
        std::fs::copy(&from, &to)
            .with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
    }
    Ok(context)
}

fn build_one(
    sh: &Shell,
    dist: &Dist,
    context: &Path,
    image: &str,
    dockerfile: &str,
) -> anyhow::Result<Image> {
    let tag = tag_for(image, dist.arch);
    let before = docker::image_id(sh, &tag);
    let arch_arg = format!("TARGETARCH={}", dist.arch.docker_arch());
    let builder = format!("wsbench.builder={}", dist.info.builder_version);
    // No `--platform`: the classic builder refuses it FROM scratch, so the image says the engine's arch; the
    // label below and provenance say the binaries'.
    let arch_label = format!("wsbench.arch={}", dist.arch.name());
    docker::build(
        sh,
        dockerfile,
        context,
        &tag,
        &[arch_arg],
        &[arch_label, builder],
    )?;
    let id =
        docker::image_id(sh, &tag).with_context(|| format!("{tag} missing after docker build"))?;
    if let Some(old) = before.filter(|old| *old != id) {
        // The replaced image is now an untagged leftover; one still used by a container stays (harmless).
        docker::remove_image(sh, &old);
    }
    Ok(Image {
        tag,
        id,
        dockerfile: dockerfile.to_owned(),
        arch: dist.arch.docker_arch().to_owned(),
        emulated: Arch::host() != Some(dist.arch),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_name_the_arch_but_x86_64s() {
        let v = env!("CARGO_PKG_VERSION");
        assert_eq!(tag(SERVER), format!("wsbench-server:{v}"));
        assert_eq!(
            tag_for(CLIENT, Arch::Ppc64le),
            format!("wsbench-client:{v}-ppc64le")
        );
    }

    /// The Dockerfiles stay FROM scratch, non-root by number, shell-free, and read the layout staged above.
    #[test]
    fn dockerfiles_are_scratch_numeric_user_exec_form() {
        for (name, binary) in [("server", "bench-server"), ("client", "bench-client")] {
            let path = crate::paths::project_root().join(format!("containers/{name}.Dockerfile"));
            let text = std::fs::read_to_string(&path).unwrap();
            let lines: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .collect();
            let froms: Vec<_> = lines.iter().filter(|l| l.starts_with("FROM ")).collect();
            assert_eq!(froms, [&"FROM scratch"], "{name}");
            assert!(lines.contains(&"ARG TARGETARCH"), "{name}");
            assert!(
                lines.contains(&format!("COPY ${{TARGETARCH}}/{binary} /{binary}").as_str()),
                "{name}"
            );
            let user = lines
                .iter()
                .find_map(|l| l.strip_prefix("USER "))
                .expect("a USER line");
            assert!(
                user.split(':')
                    .all(|id| id.parse::<u32>().is_ok_and(|n| n != 0)),
                "{name}: USER {user}"
            );
            let entry = lines
                .iter()
                .find_map(|l| l.strip_prefix("ENTRYPOINT "))
                .expect("an ENTRYPOINT line");
            assert_eq!(
                entry,
                format!("[\"/{binary}\"]"),
                "{name}: exec form, no shell"
            );
            assert!(
                !lines.iter().any(|l| l.starts_with("RUN ")),
                "{name}: no RUN in an image without a shell"
            );
        }
    }
}
