//! Link shaping (`--link 100mbit`): a token bucket on both ends of the server container's veth pair, so traffic
//! each way is limited like a full-duplex link of that rate. `tc` is not in a `FROM scratch` image, so it runs
//! from the host inside the container's network namespace (`nsenter -t <pid> -n tc …`); the qdiscs go away
//! with the container.

use anyhow::{bail, Context as _};
use xshell::Shell;

pub use crate::provenance::containers::Shaped;
use wsbench_tools::tc::{self, Netns};
pub use wsbench_tools::tc::{parse_rate, Rate};
use wsbench_tools::{host, ip};

/// The token bucket: at least one 64 KiB GSO super-packet or 10 ms of traffic, whichever is larger.
fn burst_bytes(rate: &Rate) -> u64 {
    ((rate.bits_per_s / 8.0 / 100.0) as u64).max(128 * 1024)
}

/// Fails early, naming the package, when the host cannot shape.
pub(super) fn preflight(sh: &Shell) -> anyhow::Result<()> {
    for p in [tc::TC, tc::NSENTER] {
        if p.version(sh).is_none() {
            bail!("--link needs `{}` on the host: `{}`", p.name, p.install);
        }
    }
    if !host::is_root() {
        bail!("--link enters the server container's network namespace with nsenter, which needs root: run as root");
    }
    Ok(())
}

/// Shapes both directions of the container whose main process is `pid`.
pub(super) fn apply(sh: &Shell, pid: u32, rate: &Rate) -> anyhow::Result<Shaped> {
    let burst = burst_bytes(rate);
    tc::replace_tbf(sh, Netns::Of(pid), "eth0", rate, burst)
        .context("shaping the server container's eth0")?;
    let host_if = host_end(sh, pid)?;
    tc::replace_tbf(sh, Netns::Host, &host_if, rate, burst)
        .with_context(|| format!("shaping {host_if}, the host end of the server's veth"))?;
    Ok(Shaped {
        rate: rate.clone(),
        burst_bytes: burst,
        container_if: "eth0".into(),
        host_if,
    })
}

/// The host's end of the veth pair whose other end is eth0 of the container whose main process is `pid`.
fn host_end(sh: &Shell, pid: u32) -> anyhow::Result<String> {
    let link = ip::links(sh, Netns::Of(pid), Some("eth0"))?;
    let peer = ip::peer_index(&link).with_context(|| format!("no veth peer in `{link}`"))?;
    let host_links = ip::links(sh, Netns::Host, None)?;
    ip::interface_named(&host_links, peer).with_context(|| {
        format!("the host has no interface {peer} (is the Docker daemon on another host?)")
    })
}

/// A link fault: netem (`rate R delay D loss L`) on both ends of the container's veth pair, each direction
/// shaped alike.
pub(super) fn degrade(sh: &Shell, pid: u32, netem: &[String]) -> anyhow::Result<()> {
    preflight(sh)?;
    tc::replace_netem(sh, Netns::Of(pid), "eth0", netem)?;
    tc::replace_netem(sh, Netns::Host, &host_end(sh, pid)?, netem)
}

/// The link as it was before [`degrade`]: the run's `--link` shaping, or none.
pub(super) fn restore(sh: &Shell, pid: u32, link: Option<&Rate>) -> anyhow::Result<Option<Shaped>> {
    if let Some(rate) = link {
        return apply(sh, pid, rate).map(Some);
    }
    tc::delete_root(sh, Netns::Of(pid), "eth0")?;
    tc::delete_root(sh, Netns::Host, &host_end(sh, pid)?)?;
    Ok(None)
}

/// `tc -s qdisc` of both ends, to show in the server log that the shaper really carried the traffic.
pub(super) fn stats(sh: &Shell, pid: u32, shaped: &Shaped) -> String {
    let inner = tc::stats(sh, Netns::Of(pid), "eth0");
    let host_if = &shaped.host_if;
    let outer = tc::stats(sh, Netns::Host, host_if);
    format!("server → clients (container eth0):\n{inner}\nclients → server (host {host_if}):\n{outer}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_covers_a_gso_packet_and_10ms() {
        assert_eq!(burst_bytes(&parse_rate("100mbit").unwrap()), 128 * 1024);
        assert_eq!(burst_bytes(&parse_rate("10gbit").unwrap()), 12_500_000);
    }
}
