//! What this machine allows a run: open files (the soft limit raised to the hard one), local ports per
//! source address (and the addresses to spread connections over), and, for a server on this machine, its
//! accept queue. Each limit too low for the run is named with the command that raises it.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use nix::sys::resource::{getrlimit, setrlimit, Resource};

use bench_proto::numbers::thousands;

/// Most addresses one `--source-ips` may list.
const MAX_SOURCES: u64 = 65_536;
/// Files a run holds besides its connections: standard streams, epoll and event fds per worker, the
/// results files, /proc reads.
const SPARE_FILES: u64 = 64;

/// `--source-ips`: comma-separated addresses and ranges, `A-B` (B a whole address, or for IPv4 the last
/// octet: `127.0.0.1-16`).
pub(crate) fn parse_source_ips(text: &str) -> Result<Vec<IpAddr>, String> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim) {
        let bad = || format!("--source-ips: {item:?} is not an address or a range A-B");
        let (a, b) = match item.split_once('-') {
            None => {
                let ip: IpAddr = item.parse().map_err(|_| bad())?;
                (ip, ip)
            }
            Some((a, b)) => {
                let a: IpAddr = a.trim().parse().map_err(|_| bad())?;
                let b = match (a, b.trim().parse::<u8>()) {
                    (IpAddr::V4(v4), Ok(last)) => {
                        let [x, y, z, _] = v4.octets();
                        IpAddr::V4(Ipv4Addr::new(x, y, z, last))
                    }
                    _ => b.trim().parse().map_err(|_| bad())?,
                };
                (a, b)
            }
        };
        let (lo, hi) = match (a, b) {
            (IpAddr::V4(a), IpAddr::V4(b)) => (u128::from(u32::from(a)), u128::from(u32::from(b))),
            (IpAddr::V6(a), IpAddr::V6(b)) => (u128::from(a), u128::from(b)),
            _ => return Err(format!("--source-ips: {item:?} mixes IPv4 and IPv6")),
        };
        if lo > hi {
            return Err(format!("--source-ips: {item:?} runs backwards"));
        }
        if (hi - lo) as u64 + out.len() as u64 >= MAX_SOURCES {
            return Err(format!("--source-ips: more than {MAX_SOURCES} addresses"));
        }
        out.extend((lo..=hi).map(|n| match a {
            IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::from(n as u32)),
            IpAddr::V6(_) => IpAddr::V6(n.into()),
        }));
    }
    Ok(out)
}

/// net.ipv4.ip_local_port_range: the ports a connection's local end is given from, both ends included.
pub(crate) fn local_port_range() -> Option<(u16, u16)> {
    parse_port_range(&std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?)
}

fn parse_port_range(text: &str) -> Option<(u16, u16)> {
    let mut it = text.split_whitespace().map(str::parse::<u16>);
    let (lo, hi) = (it.next()?.ok()?, it.next()?.ok()?);
    (lo <= hi).then_some((lo, hi))
}

/// How many connections one local address may hold to one server: half the local port range, the other
/// half left to sockets in TIME_WAIT and to everything else on the machine.
fn ports_per_source(range: (u16, u16)) -> u64 {
    let ports = u64::from(range.1 - range.0) + 1;
    ports / 2
}

/// The addresses to spread `clients` connections over when none are given: for a server on IPv4
/// loopback, as many of 127.0.0.1, 127.0.0.2, … as keep each within the ports one source has (`ports_per_source`); otherwise
/// none (the system chooses).
pub(crate) fn auto_sources(
    server: SocketAddr,
    clients: u64,
    range: Option<(u16, u16)>,
) -> Vec<IpAddr> {
    let (IpAddr::V4(ip), Some(range)) = (server.ip(), range) else {
        return Vec::new();
    };
    let per = ports_per_source(range).max(1);
    if !ip.is_loopback() || clients <= per {
        return Vec::new();
    }
    let n = clients.div_ceil(per).min(254) as u8;
    (1..=n)
        .map(|i| IpAddr::V4(Ipv4Addr::new(127, 0, 0, i)))
        .collect()
}

/// Checks the machine against a run of `clients` connections to `server` from `sources`: raises the
/// open-files soft limit to the hard limit, and fails naming the limit and the command that raises it
/// where the run cannot work. Returns warnings for what may slow it down.
pub fn prepare(
    server: SocketAddr,
    clients: u64,
    sources: &[IpAddr],
) -> anyhow::Result<Vec<String>> {
    let need = clients.saturating_add(SPARE_FILES);
    let (soft, hard) = raise_nofile()?;
    if soft < need {
        anyhow::bail!(
            "{} connections need about {} open files, and RLIMIT_NOFILE allows {} (hard limit {}); raise \
             it for this shell with `ulimit -Hn {n} && ulimit -n {n}` (as root; fs.nr_open bounds it), or \
             run bench-client under `prlimit --nofile={n}:{n} --`",
            thousands(clients),
            thousands(need),
            thousands(soft),
            thousands(hard),
            n = need.next_multiple_of(1024),
        );
    }
    if let Some(range) = local_port_range() {
        let per_source = clients.div_ceil(sources.len().max(1) as u64);
        let ports = u64::from(range.1 - range.0) + 1;
        if per_source > ports {
            anyhow::bail!(
                "{} connections from {} would need more local ports than net.ipv4.ip_local_port_range \
                 ({}-{}, {} ports) has: widen it with `sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\"`, \
                 or spread the connections with --source-ips",
                thousands(per_source),
                if sources.is_empty() { "one address".to_owned() } else { "each source address".to_owned() },
                range.0,
                range.1,
                thousands(ports)
            );
        }
    }
    let mut warnings = Vec::new();
    if server.ip().is_loopback() {
        if let Some(max) = read_u64("/proc/sys/net/core/somaxconn").filter(|m| *m < clients) {
            warnings.push(format!(
                "net.core.somaxconn is {}, below the {} connections: a server's accept queue holds at most that \
                 many, and connections past it wait for a SYN retransmission (1 s and more) while they are made; \
                 raise it with `sysctl -w net.core.somaxconn=65535` (and the server's listen backlog)",
                thousands(max),
                thousands(clients)
            ));
        }
    }
    Ok(warnings)
}

/// Raises the open-files soft limit to the hard limit (a process may); returns (soft, hard) in force.
pub fn raise_nofile() -> anyhow::Result<(u64, u64)> {
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE)?;
    if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
        return Ok((hard, hard));
    }
    Ok((soft, hard))
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ips(text: &str) -> Vec<String> {
        parse_source_ips(text)
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn source_ips_take_addresses_and_ranges() {
        assert_eq!(
            ips("127.0.0.1-127.0.0.3"),
            ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
        );
        assert_eq!(
            ips("127.0.0.9-10, 10.0.0.1"),
            ["127.0.0.9", "127.0.0.10", "10.0.0.1"]
        );
        assert_eq!(ips("10.0.0.255-10.0.1.0"), ["10.0.0.255", "10.0.1.0"]);
        assert_eq!(ips("::1"), ["::1"]);
        for bad in [
            "",
            "127.0.0.3-1",
            "127.0.0.1-::1",
            "x",
            "10.0.0.0-10.1.0.0",
            "127.0.0.1-300",
        ] {
            assert!(parse_source_ips(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn loopback_servers_get_as_many_addresses_as_the_ports_need() {
        let lo: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let range = Some((32768, 60999)); // 28 232 ports: 14 116 connections per address
        assert!(auto_sources(lo, 10_000, range).is_empty());
        let four: Vec<String> = auto_sources(lo, 50_000, range)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(four, ["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"]);
        assert!(auto_sources("10.0.0.1:80".parse().unwrap(), 50_000, range).is_empty());
        assert!(auto_sources("[::1]:80".parse().unwrap(), 50_000, range).is_empty());
        assert!(auto_sources(lo, 50_000, None).is_empty());
    }

    #[test]
    fn port_range_is_read_as_the_kernel_writes_it() {
        assert_eq!(parse_port_range("32768\t60999\n"), Some((32768, 60999)));
        assert_eq!(parse_port_range("9 1"), None);
        assert!(local_port_range().is_some());
    }

    #[test]
    fn too_many_connections_for_the_open_files_limit_are_named() {
        let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
        let lo: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let e = prepare(lo, hard, &[]).unwrap_err().to_string();
        assert!(
            e.contains("RLIMIT_NOFILE") && e.contains("ulimit -Hn"),
            "{e}"
        );
        let (soft, _) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
        assert_eq!(soft, hard, "the soft limit was raised to the hard one");
        assert!(prepare(lo, 10, &[]).unwrap().is_empty());
    }
}
