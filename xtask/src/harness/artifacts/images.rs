//! The server and client images: `FROM scratch` with one static binary each (`containers/*.Dockerfile`), built
//! locally from `target/dist`; no registry is needed. Rebuilding a tag removes the image it replaced, so runs
//! leave only the current images behind.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};
use serde::{Deserialize, Serialize};
use xshell::{cmd, Shell};

use super::Dist;
use crate::harness::docker::engine as docker;

/// Image names; the tag is the workspace version.
pub(crate) const SERVER: &str = "wsbench-server";
pub(crate) const CLIENT: &str = "wsbench-client";

/// One built image, for provenance.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Image {
    pub(crate) tag: String,
    pub(crate) id: String,
    pub(crate) dockerfile: String,
    pub(crate) arch: String,
}

pub(crate) fn tag(image: &str) -> String {
    format!("{image}:{}", env!("CARGO_PKG_VERSION"))
}

/// Builds both images from `dist`'s binaries; returns them server first.
pub(crate) fn build_all(sh: &Shell, dist: &Dist) -> anyhow::Result<Vec<Image>> {
    let context = stage_context(dist)?;
    [
        (SERVER, "containers/server.Dockerfile"),
        (CLIENT, "containers/client.Dockerfile"),
    ]
    .into_iter()
    .map(|(image, dockerfile)| build_one(sh, dist, &context, image, dockerfile))
    .collect()
}

/// `cargo xtask build --images`: builds them and returns the tags.
pub(crate) fn build(sh: &Shell, dist: &Dist) -> anyhow::Result<Vec<String>> {
    Ok(build_all(sh, dist)?.into_iter().map(|i| i.tag).collect())
}

/// The build context holds only the binaries, laid out by Docker's `TARGETARCH` (`amd64/`, `ppc64le/`), which
/// is what the Dockerfiles `COPY` from; `target/dist` names directories after our own arch names.
fn stage_context(dist: &Dist) -> anyhow::Result<PathBuf> {
    let context = crate::harness::paths::project_root().join("target/containers/context");
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
    let tag = tag(image);
    let before = docker::image_id(sh, &tag);
    let arch_arg = format!("TARGETARCH={}", dist.arch.docker_arch());
    let builder = format!("wsbench.builder={}", dist.info.builder_version);
    let out = cmd!(
        sh,
        "docker build --quiet --file {dockerfile} --build-arg {arch_arg} --label {builder} --tag {tag} {context}"
    )
    .quiet()
    .ignore_status()
    .output()
    .with_context(|| format!("running docker build for {tag}"))?;
    if !out.status.success() {
        bail!(
            "docker build of {tag} failed:\n{}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let id =
        docker::image_id(sh, &tag).with_context(|| format!("{tag} missing after docker build"))?;
    if let Some(old) = before.filter(|old| *old != id) {
        // The replaced image is now an untagged leftover; one still used by a container stays (harmless).
        let _ = cmd!(sh, "docker image rm {old}")
            .quiet()
            .ignore_stdout()
            .ignore_stderr()
            .run();
    }
    Ok(Image {
        tag,
        id,
        dockerfile: dockerfile.to_owned(),
        arch: dist.arch.docker_arch().to_owned(),
    })
}

#[cfg(test)]
mod tests {
    /// The Dockerfiles stay FROM scratch, non-root by number, shell-free, and read the layout staged above.
    #[test]
    fn dockerfiles_are_scratch_numeric_user_exec_form() {
        for (name, binary) in [("server", "bench-server"), ("client", "bench-client")] {
            let path =
                crate::harness::paths::project_root().join(format!("containers/{name}.Dockerfile"));
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
