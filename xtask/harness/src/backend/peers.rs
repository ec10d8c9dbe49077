//! The peer servers as container images, for both container backends (`--containers`, `--swarm`): each built
//! peer's image (built here unless the engine has it) and the command a container of it runs in bench-server's
//! place.

use anyhow::{Context as _, Result};
use xshell::Shell;

use crate::argv::{self, PeerPlace};
use crate::artifacts;
use crate::artifacts::peer_images::{self, PeerImage};
use crate::artifacts::peers::PeerBuilds;
use crate::scenario::{Instance, Plan};
use crate::sut::{PeerSut, Sut};

/// The image of each peer build among `suts`, built here unless the engine has it (`artifacts::peer_images`).
pub fn peer_images(sh: &Shell, suts: &[Sut], builds: &PeerBuilds) -> Result<Vec<PeerImage>> {
    let root = crate::paths::project_root();
    let mut out: Vec<PeerImage> = Vec::new();
    for sut in suts {
        let Sut::Peer(peer) = sut else { continue };
        if out.iter().any(|i| i.key == peer.build_key()) {
            continue;
        }
        let dir = builds.get(peer)?;
        let hash = artifacts::peers::source_hash(&root, &peer.def, peer.build().0)?;
        let image = peer_images::ensure(sh, peer, dir, &hash)?;
        println!(
            "peer image {}: {} in {:.1} s",
            image.tag,
            if image.built { "built" } else { "present" },
            image.seconds
        );
        out.push(image);
    }
    Ok(out)
}

/// The image tag and container command of `peer` for `instance` (the image has no ENTRYPOINT: the command is
/// the peer's whole command line), listening on the port bench-server's container uses, with the flags it
/// gets as a process; a per-core worker rule counts `cores`, the CPUs its container is given.
pub(crate) fn peer_command(
    images: &[PeerImage],
    peer: &PeerSut,
    plan: &Plan,
    instance: &Instance,
    cores: u32,
) -> Result<(String, Vec<String>)> {
    let image = images
        .iter()
        .find(|i| i.key == peer.build_key())
        .with_context(|| format!("no image was built for the {peer} peer"))?;
    let listen = format!("0.0.0.0:{}", peer_images::HTTP_PORT);
    let argv = argv::peer(
        peer,
        PeerPlace::Container,
        &plan.server,
        instance,
        (instance.workers, cores),
        &listen,
    )?;
    Ok((image.tag.clone(), argv))
}
