//! Images onto every node without a registry: `docker save | docker -H NODE load`, the image built for the
//! node's architecture (`docker node inspect`'s Platform.Architecture), tagged on the node with the one tag
//! the services name — so one service runs on nodes of either architecture.

use anyhow::{bail, Context as _};

use xshell::Shell;

use super::nodes::Node;
use crate::artifacts::images::{self, CLIENT, SERVER};
use crate::artifacts::Arch;
pub use crate::provenance::swarm::Placed;
use wsbench_tools::docker::EngineAddr;

/// The tag every service runs: the same on every node, whatever its architecture.
pub(crate) fn service_tag(image: &str) -> String {
    images::tag(image)
}

/// The local tag of `image` built for `arch`, as `harness::artifacts::images` names it (x86_64 the plain tag,
/// another arch `<tag>-<arch>`).
pub(crate) fn local_tag(image: &str, arch: Arch) -> String {
    images::tag_for(image, arch)
}

/// The image a role's tasks run.
pub(crate) fn image_of(role: super::nodes::Role) -> &'static str {
    match role {
        super::nodes::Role::Server => SERVER,
        super::nodes::Role::Client => CLIENT,
    }
}

/// The image id of `tag` on `engine`, if it has it.
pub(crate) fn id_on(sh: &Shell, engine: &EngineAddr, tag: &str) -> Option<String> {
    engine
        .read(sh, &["image", "inspect", "--format", "{{.Id}}", tag])
        .ok()
}

/// Makes sure every labelled node holds its role's images for its arch (a server node bench-client's too, for the
/// sampling agent), under the service tags.
pub(crate) fn distribute(sh: &Shell, nodes: &[Node]) -> anyhow::Result<Vec<Placed>> {
    let local = EngineAddr::default();
    let mut placed = Vec::new();
    for node in nodes.iter().filter(|n| n.usable()) {
        let Some(role) = node.role else { continue };
        let arch = node.wsbench_arch().with_context(|| {
            format!(
                "node {} is {}: wsbench builds for x86_64 and ppc64le only",
                node.hostname, node.arch
            )
        })?;
        let engine = node.engine.as_ref().with_context(|| {
            format!(
                "node {} ({}) has no engine address to load images through: \
                 `cargo xtask swarm label {} {} --engine ssh://USER@HOST`",
                node.hostname,
                node.id,
                node.id,
                role.name()
            )
        })?;
        // A server node also runs the sampling agent, which is bench-client's image.
        let wanted: &[&str] = match role {
            super::nodes::Role::Server => &[SERVER, CLIENT],
            super::nodes::Role::Client => &[CLIENT],
        };
        for image in wanted {
            placed.push(place(sh, &local, node, engine, arch, image)?);
        }
    }
    Ok(placed)
}

/// Puts `image` built for `arch` on `node` (through `engine`) under its service tag, unless it is there.
fn place(
    sh: &Shell,
    local: &EngineAddr,
    node: &Node,
    engine: &EngineAddr,
    arch: Arch,
    image: &str,
) -> anyhow::Result<Placed> {
    let (from, tag) = (local_tag(image, arch), service_tag(image));
    let Some(want) = id_on(sh, local, &from) else {
        bail!(
            "node {} is {} and {from} is not built here: `cargo xtask build --target {} --images`",
            node.hostname,
            arch.name(),
            arch.name()
        );
    };
    let loaded = id_on(sh, engine, &tag).as_deref() != Some(want.as_str());
    if loaded {
        eprintln!(
            "loading {from} onto {} ({})",
            node.hostname,
            engine.describe()
        );
        if id_on(sh, engine, &from).as_deref() != Some(want.as_str()) {
            engine.load_from_local(&from)?;
        }
        if from != tag {
            engine.read(sh, &["tag", &from, &tag])?;
        }
    }
    Ok(Placed {
        node: node.id.clone(),
        tag,
        from,
        id: want,
        loaded,
    })
}

/// Puts the peer images `tags` (built here, for this machine's architecture) on every server node, under the
/// same tag: a peer runs where bench-server would.
pub(crate) fn distribute_peers(
    sh: &Shell,
    nodes: &[Node],
    tags: &[String],
) -> anyhow::Result<Vec<Placed>> {
    let local = EngineAddr::default();
    let host = Arch::host();
    let mut placed = Vec::new();
    let servers = nodes
        .iter()
        .filter(|n| n.usable() && n.role == Some(super::nodes::Role::Server));
    for node in servers {
        if node.wsbench_arch() != host {
            bail!(
                "node {} runs {} images: the peer servers' images are built for this machine's architecture \
                 only; measure them on nodes of it",
                node.hostname,
                node.wsbench_arch().map_or(node.arch.clone(), |a| a.name().to_owned())
            );
        }
        let engine = node.engine.as_ref().with_context(|| {
            format!(
                "node {} has no engine address to load the peer images through: `cargo xtask swarm label {} \
                 server --engine ssh://USER@HOST`",
                node.hostname, node.id
            )
        })?;
        for tag in tags {
            let want = id_on(sh, &local, tag)
                .with_context(|| format!("the peer image {tag} is not in this machine's engine"))?;
            let loaded = id_on(sh, engine, tag).as_deref() != Some(want.as_str());
            if loaded {
                eprintln!(
                    "loading {tag} onto {} ({})",
                    node.hostname,
                    engine.describe()
                );
                engine.load_from_local(tag)?;
            }
            placed.push(Placed {
                node: node.id.clone(),
                tag: tag.clone(),
                from: tag.clone(),
                id: want,
                loaded,
            });
        }
    }
    Ok(placed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_foreign_arch_has_its_own_local_tag_and_the_common_service_tag() {
        let other = Arch::ALL
            .into_iter()
            .find(|a| Arch::host() != Some(*a))
            .unwrap();
        assert_ne!(local_tag(CLIENT, other), service_tag(CLIENT));
        assert!(local_tag(CLIENT, other).ends_with(other.name()));
        if let Some(host) = Arch::host() {
            assert_eq!(local_tag(SERVER, host), service_tag(SERVER));
        }
    }
}
