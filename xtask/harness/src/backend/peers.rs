//! The peer servers as container images, for both container backends (`--containers`, `--swarm`): each built
//! peer's image (built here unless the engine has it) and the command a container of it runs in bench-server's
//! place.

use anyhow::{Context as _, Result};
use xshell::Shell;

use crate::argv;
use crate::artifacts;
use crate::artifacts::peer_images::{self, PeerImage};
use crate::artifacts::peers::PeerBuilds;
use crate::scenario::{Instance, Plan};
use crate::sut::Peer;

/// Each built peer's image, built here unless the engine has it (`artifacts::peer_images`).
pub fn peer_images(sh: &Shell, peers: &PeerBuilds) -> Result<Vec<PeerImage>> {
    let root = crate::paths::project_root();
    peers
        .iter()
        .map(|(peer, dir)| {
            let hash = artifacts::peers::source_hash(&root, peer)?;
            let image = peer_images::ensure(sh, peer, dir, &hash)?;
            println!(
                "peer image {}: {} in {:.1} s",
                image.tag,
                if image.built { "built" } else { "present" },
                image.seconds
            );
            Ok(image)
        })
        .collect()
}

/// The image tag and container arguments of `peer` for `instance` (the image's ENTRYPOINT is the program):
/// listening on the port bench-server's container uses, with the flags it gets as a process.
pub fn peer_command(
    images: &[PeerImage],
    peer: Peer,
    plan: &Plan,
    instance: &Instance,
) -> Result<(String, Vec<String>)> {
    let image = images
        .iter()
        .find(|i| i.peer == peer)
        .with_context(|| format!("no image was built for the {} peer", peer.name()))?;
    let listen = format!("0.0.0.0:{}", peer_images::HTTP_PORT);
    let flags = argv::peer_flags(peer, &plan.server, instance, instance.workers, &listen);
    Ok((image.tag.clone(), flags))
}
