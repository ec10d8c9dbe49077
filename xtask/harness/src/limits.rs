//! The machine's limits on connections, judged against a plan: RLIMIT_NOFILE, net.core.somaxconn,
//! net.ipv4.tcp_max_syn_backlog and the ephemeral port range, each too low one named with the command that
//! raises it. `doctor` shows them for the scenarios; `run` prints them before the first step and notes them in
//! run.json (bench-client refuses to start short of file descriptors, and says so too).

use wsbench_tools::host;

use super::scenario::Plan;
use bench_proto::numbers::thousands;

/// Descriptors bench-client keeps beside its connections (its own files, the runtime's), as it counts them.
const SPARE_FDS: u64 = 64;

/// A limit too low for a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Short {
    pub limit: String,
    /// What it is and what the plan needs.
    pub found: String,
    /// The command that raises it.
    pub fix: String,
}

/// The most connections any step of `plan` holds at once.
pub fn most_connections(plan: &Plan) -> u64 {
    plan.steps()
        .filter_map(|s| s.client.clients)
        .map(u64::from)
        .max()
        .unwrap_or(0)
}

/// The limits this machine holds too low for `clients` connections made at once on loopback.
pub fn short_for(clients: u64) -> Vec<Short> {
    let mut out = Vec::new();
    let need = clients + SPARE_FDS;
    if let Ok(n) = host::nofile() {
        if n.hard.is_some_and(|h| h < need) {
            let h = n.hard.unwrap_or_default();
            out.push(Short {
                limit: "RLIMIT_NOFILE".into(),
                found: format!(
                    "hard limit {} is below the {} descriptors {} connections need (bench-client and \
                     bench-server each; runs raise the soft limit to the hard one themselves)",
                    thousands(h),
                    thousands(need),
                    thousands(clients)
                ),
                fix: format!(
                    "as root: `ulimit -Hn {need} && ulimit -n {need}` in the shell that runs xtask, \
                     `prlimit --nofile={need}:{need} --pid $$`, or /etc/security/limits.conf"
                ),
            });
        }
    }
    let sysctl = |name: &str| host::sysctl(name).and_then(|v| v.trim().parse::<u64>().ok());
    for (name, why) in [
        ("net.core.somaxconn", "caps bench-server's listen backlog"),
        (
            "net.ipv4.tcp_max_syn_backlog",
            "caps the half-open connections",
        ),
    ] {
        if let Some(v) = sysctl(name).filter(|&v| v < clients) {
            out.push(Short {
                limit: name.into(),
                found: format!(
                    "{} {why} below the {} connections made at once: the rest wait on SYN retries (1 s, \
                     3 s, …), which shows as set-up time",
                    thousands(v),
                    thousands(clients)
                ),
                fix: format!("sysctl -w {name}={}", clients.next_power_of_two()),
            });
        }
    }
    if let Some((lo, hi)) = host::ephemeral_ports() {
        let ports = u64::from(hi.saturating_sub(lo)) + 1;
        if ports < clients {
            out.push(Short {
                limit: "net.ipv4.ip_local_port_range".into(),
                found: format!(
                    "{lo}–{hi}: {} ports per source address, below {} connections; on loopback bench-client \
                     spreads them over 127.0.0.x, to a remote server it cannot",
                    thousands(ports),
                    thousands(clients)
                ),
                fix: "sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\", or bench-client --source-ips"
                    .into(),
            });
        }
    }
    out
}

impl Short {
    /// One line for a console or run.json's notes.
    pub fn line(&self) -> String {
        format!("{}: {} — raise it: {}", self.limit, self.found, self.fix)
    }
}
