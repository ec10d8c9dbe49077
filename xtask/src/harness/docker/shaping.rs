//! Link shaping (`--link 100mbit`): a token bucket on both ends of the server container's veth pair, so traffic
//! each way is limited like a full-duplex link of that rate. `tc` is not in a `FROM scratch` image, so it runs
//! from the host inside the container's network namespace (`nsenter -t <pid> -n tc …`); the qdiscs go away
//! with the container.

use anyhow::{bail, Context as _};
use serde::{Deserialize, Serialize};
use xshell::{cmd, Shell};

/// A rate as tc writes it, with its value in bits/s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Rate {
    pub(crate) text: String,
    pub(crate) bits_per_s: f64,
}

/// tc's rate syntax: a number and `bit`, `kbit`, `mbit`, `gbit` (SI), or `bps`, `kbps`, `mbps`, `gbps` (bytes/s).
pub(crate) fn parse_rate(text: &str) -> anyhow::Result<Rate> {
    let lower = text.trim().to_ascii_lowercase();
    let split = lower
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(lower.len());
    let (number, unit) = lower.split_at(split);
    let factor = match unit {
        "bit" => 1.0,
        "kbit" => 1e3,
        "mbit" => 1e6,
        "gbit" => 1e9,
        "bps" => 8.0,
        "kbps" => 8e3,
        "mbps" => 8e6,
        "gbps" => 8e9,
        _ => bail!("`{text}` is not a link rate like 100mbit, 1gbit or 12mbps"),
    };
    let n: f64 = number
        .parse()
        .with_context(|| format!("`{text}` is not a link rate like 100mbit"))?;
    if !(n.is_finite() && n > 0.0) {
        bail!("the link rate must be > 0, got `{text}`");
    }
    Ok(Rate {
        text: lower,
        bits_per_s: n * factor,
    })
}

/// The token bucket: at least one 64 KiB GSO super-packet or 10 ms of traffic, whichever is larger.
fn burst_bytes(rate: &Rate) -> u64 {
    ((rate.bits_per_s / 8.0 / 100.0) as u64).max(128 * 1024)
}

/// Fails early, naming the package, when the host cannot shape.
pub(super) fn preflight(sh: &Shell) -> anyhow::Result<()> {
    if cmd!(sh, "tc -V")
        .quiet()
        .ignore_stdout()
        .ignore_stderr()
        .run()
        .is_err()
    {
        bail!("--link needs `tc` on the host: `apt-get install iproute2`");
    }
    if cmd!(sh, "nsenter --version")
        .quiet()
        .ignore_stdout()
        .ignore_stderr()
        .run()
        .is_err()
    {
        bail!("--link needs `nsenter` on the host: `apt-get install util-linux`");
    }
    if effective_uid() != Some(0) {
        bail!("--link enters the server container's network namespace with nsenter, which needs root: run as root");
    }
    Ok(())
}

fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let uids = status.lines().find_map(|l| l.strip_prefix("Uid:"))?;
    uids.split_whitespace().nth(1)?.parse().ok()
}

/// Where the limits were put.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Shaped {
    pub(crate) rate: Rate,
    pub(crate) burst_bytes: u64,
    /// Server → clients: the container's eth0.
    pub(crate) container_if: String,
    /// Clients → server: the host end of its veth pair.
    pub(crate) host_if: String,
}

/// Shapes both directions of the container whose main process is `pid`.
pub(super) fn apply(sh: &Shell, pid: u32, rate: &Rate) -> anyhow::Result<Shaped> {
    let pid = pid.to_string();
    let burst = format!("{}b", burst_bytes(rate));
    let r = &rate.text;
    cmd!(sh, "nsenter -t {pid} -n tc qdisc replace dev eth0 root tbf rate {r} burst {burst} latency 50ms")
        .quiet()
        .run()
        .context("shaping the server container's eth0")?;
    let link = cmd!(sh, "nsenter -t {pid} -n ip -o link show dev eth0")
        .quiet()
        .read()?;
    let peer = peer_index(&link).with_context(|| format!("no veth peer in `{link}`"))?;
    let host_links = cmd!(sh, "ip -o link show").quiet().read()?;
    let host_if = interface_named(&host_links, peer).with_context(|| {
        format!("the host has no interface {peer} (is the Docker daemon on another host?)")
    })?;
    cmd!(
        sh,
        "tc qdisc replace dev {host_if} root tbf rate {r} burst {burst} latency 50ms"
    )
    .quiet()
    .run()
    .with_context(|| format!("shaping {host_if}, the host end of the server's veth"))?;
    Ok(Shaped {
        rate: rate.clone(),
        burst_bytes: burst_bytes(rate),
        container_if: "eth0".into(),
        host_if,
    })
}

/// `tc -s qdisc` of both ends, to show in the server log that the shaper really carried the traffic.
pub(super) fn stats(sh: &Shell, pid: u32, shaped: &Shaped) -> String {
    let pid = pid.to_string();
    let host_if = &shaped.host_if;
    let inner = cmd!(sh, "nsenter -t {pid} -n tc -s qdisc show dev eth0")
        .quiet()
        .ignore_stderr()
        .read()
        .unwrap_or_default();
    let outer = cmd!(sh, "tc -s qdisc show dev {host_if}")
        .quiet()
        .ignore_stderr()
        .read()
        .unwrap_or_default();
    format!("server → clients (container eth0):\n{inner}\nclients → server (host {host_if}):\n{outer}\n")
}

/// `28: eth0@if29: <…>` → 29, the peer's interface index in the host namespace.
fn peer_index(link_line: &str) -> Option<u32> {
    let after = link_line.split_once("@if")?.1;
    after
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// The name of interface `index` in `ip -o link` output (`29: veth6e2d8d0@if28: <…>`).
fn interface_named(links: &str, index: u32) -> Option<String> {
    links.lines().find_map(|l| {
        let (idx, rest) = l.split_once(": ")?;
        (idx.trim().parse::<u32>().ok()? == index).then(|| {
            let name = rest.split(':').next().unwrap_or_default();
            name.split('@').next().unwrap_or_default().to_owned()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_follow_tc() {
        assert_eq!(parse_rate("100mbit").unwrap().bits_per_s, 100e6);
        assert_eq!(parse_rate("12.5MBps").unwrap().bits_per_s, 100e6);
        assert_eq!(parse_rate("1gbit").unwrap().text, "1gbit");
        assert!(parse_rate("100").is_err());
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("0mbit").is_err());
    }

    #[test]
    fn burst_covers_a_gso_packet_and_10ms() {
        assert_eq!(burst_bytes(&parse_rate("100mbit").unwrap()), 128 * 1024);
        assert_eq!(burst_bytes(&parse_rate("10gbit").unwrap()), 12_500_000);
    }

    #[test]
    fn finds_the_veth_peer() {
        let inside =
            "28: eth0@if29: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP";
        assert_eq!(peer_index(inside), Some(29));
        let host = "1: lo: <LOOPBACK,UP> mtu 65536\n29: veth6e2d8d0@if28: <BROADCAST,UP> mtu 1500 master br-1\n";
        assert_eq!(interface_named(host, 29).as_deref(), Some("veth6e2d8d0"));
        assert_eq!(interface_named(host, 7), None);
    }
}
