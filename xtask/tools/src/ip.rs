//! `ip` (iproute2): the links of a network namespace, and the namespaces and veth pairs of the local swarm.

use xshell::{cmd, Shell};

use crate::tc::Netns;
use crate::Program;

pub const IP: Program = Program {
    name: "ip",
    version_args: &["-V"],
    install: "apt-get install iproute2",
    used_for: "link shaping (--link) and the local swarm (swarm up --local)",
};

/// `ip -o link show [dev DEV]` in `ns`.
pub fn links(sh: &Shell, ns: Netns, dev: Option<&str>) -> anyhow::Result<String> {
    let mut args = vec!["-o", "link", "show"];
    if let Some(d) = dev {
        args.extend(["dev", d]);
    }
    let argv = ns.argv("ip", &args);
    let (p, a) = argv.split_first().expect("a program");
    Ok(cmd!(sh, "{p} {a...}").quiet().read()?)
}

/// `ip ARGS…` on the host, quiet; Err when it fails.
pub fn run(sh: &Shell, args: &[&str]) -> anyhow::Result<()> {
    cmd!(sh, "ip {args...}").quiet().run()?;
    Ok(())
}

/// `ip ARGS…` on the host, quiet and without its error output; whether it succeeded.
pub fn try_run(sh: &Shell, args: &[&str]) -> bool {
    cmd!(sh, "ip {args...}")
        .quiet()
        .ignore_stdout()
        .ignore_stderr()
        .run()
        .is_ok()
}

/// `ip ARGS…`'s output.
pub fn read(sh: &Shell, args: &[&str]) -> anyhow::Result<String> {
    Ok(cmd!(sh, "ip {args...}").quiet().read()?)
}

/// `28: eth0@if29: <…>` → 29, the peer's interface index in the host namespace.
pub fn peer_index(link_line: &str) -> Option<u32> {
    let after = link_line.split_once("@if")?.1;
    after
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// The name of interface `index` in `ip -o link` output (`29: veth6e2d8d0@if28: <…>`).
pub fn interface_named(links: &str, index: u32) -> Option<String> {
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
    fn finds_the_veth_peer() {
        let inside =
            "28: eth0@if29: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP";
        assert_eq!(peer_index(inside), Some(29));
        let host = "1: lo: <LOOPBACK,UP> mtu 65536\n29: veth6e2d8d0@if28: <BROADCAST,UP> mtu 1500 master br-1\n";
        assert_eq!(interface_named(host, 29).as_deref(), Some("veth6e2d8d0"));
        assert_eq!(interface_named(host, 7), None);
    }
}
