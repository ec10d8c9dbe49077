//! `tc` (iproute2): token-bucket shaping of a link, on the host or inside a process's network namespace
//! (`nsenter -t PID -n tc …`, for a `FROM scratch` container that has no tc), its statistics, and tc's rate
//! syntax.

use anyhow::{bail, Context as _};
use serde::{Deserialize, Serialize};
use xshell::{cmd, Shell};

use crate::Program;

pub const TC: Program = Program {
    name: "tc",
    version_args: &["-V"],
    install: "apt-get install iproute2",
    used_for: "link shaping (--link)",
};

/// `nsenter`, which runs tc and ip inside a container's network namespace.
pub const NSENTER: Program = Program {
    name: "nsenter",
    version_args: &["--version"],
    install: "apt-get install util-linux",
    used_for: "link shaping (--link) and the local swarm (swarm up --local)",
};

/// A rate as tc writes it, with its value in bits/s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    pub text: String,
    pub bits_per_s: f64,
}

/// tc's rate syntax: a number and `bit`, `kbit`, `mbit`, `gbit` (SI), or `bps`, `kbps`, `mbps`, `gbps` (bytes/s).
pub fn parse_rate(text: &str) -> anyhow::Result<Rate> {
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

/// Where a command runs: the host's network namespace, or that of the process `pid`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Netns {
    Host,
    Of(u32),
}

impl Netns {
    /// The argv of `program args…` in this namespace.
    pub fn argv(self, program: &str, args: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = match self {
            Netns::Host => vec![],
            Netns::Of(pid) => vec!["nsenter".into(), "-t".into(), pid.to_string(), "-n".into()],
        };
        v.push(program.to_owned());
        v.extend(args.iter().map(|a| (*a).to_owned()));
        v
    }
}

fn read(sh: &Shell, argv: &[String]) -> xshell::Result<String> {
    let (program, args) = argv.split_first().expect("a program");
    cmd!(sh, "{program} {args...}").quiet().read()
}

/// `tc qdisc replace dev DEV root tbf rate RATE burst BURSTb latency 50ms` in `ns`.
pub fn replace_tbf(
    sh: &Shell,
    ns: Netns,
    dev: &str,
    rate: &Rate,
    burst_bytes: u64,
) -> anyhow::Result<()> {
    let burst = format!("{burst_bytes}b");
    let args = [
        "qdisc", "replace", "dev", dev, "root", "tbf", "rate", &rate.text, "burst", &burst,
        "latency", "50ms",
    ];
    read(sh, &ns.argv("tc", &args)).with_context(|| format!("shaping {dev}"))?;
    Ok(())
}

/// `tc qdisc replace dev DEV root netem [rate R] [delay D] [loss L]` in `ns`: a link of that rate, one-way
/// delay and loss (the kernel needs `sch_netem`, CONFIG_NET_SCH_NETEM).
pub fn replace_netem(sh: &Shell, ns: Netns, dev: &str, netem: &[String]) -> anyhow::Result<()> {
    let mut args: Vec<&str> = vec!["qdisc", "replace", "dev", dev, "root", "netem"];
    args.extend(netem.iter().map(String::as_str));
    read(sh, &ns.argv("tc", &args)).with_context(|| {
        format!("netem on {dev} (does this kernel have sch_netem, CONFIG_NET_SCH_NETEM?)")
    })?;
    Ok(())
}

/// `tc qdisc del dev DEV root` in `ns`: the device's default queueing again.
pub fn delete_root(sh: &Shell, ns: Netns, dev: &str) -> anyhow::Result<()> {
    read(sh, &ns.argv("tc", &["qdisc", "del", "dev", dev, "root"]))
        .with_context(|| format!("removing the qdisc of {dev}"))?;
    Ok(())
}

/// `tc -s qdisc show dev DEV` in `ns` (empty when it cannot be read).
pub fn stats(sh: &Shell, ns: Netns, dev: &str) -> String {
    let argv = ns.argv("tc", &["-s", "qdisc", "show", "dev", dev]);
    let (p, a) = argv.split_first().expect("a program");
    cmd!(sh, "{p} {a...}")
        .quiet()
        .ignore_stderr()
        .read()
        .unwrap_or_default()
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
    fn a_namespace_is_entered_with_nsenter() {
        assert_eq!(Netns::Host.argv("tc", &["-V"]), ["tc", "-V"]);
        assert_eq!(
            Netns::Of(7).argv("ip", &["link"]),
            ["nsenter", "-t", "7", "-n", "ip", "link"]
        );
    }
}
