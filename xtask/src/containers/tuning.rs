//! Container limits and kernel tunables, set the way the OSS/J seed tuned its hosts, and the CPU pinning plan.

/// Server: the seed's Solaris `tcp_conn_req_max_q 2048` and `tcp_conn_req_max_q0 10240` are Linux's accept
/// and SYN backlogs. Its `tcp_time_wait_interval 1000` has no Linux counterpart (TIME_WAIT is fixed at 60 s);
/// the clients reuse TIME_WAIT ports instead (below).
pub(crate) const SERVER_SYSCTLS: [(&str, &str); 2] = [
    ("net.core.somaxconn", "2048"),
    ("net.ipv4.tcp_max_syn_backlog", "10240"),
];

/// Server: the seed's `rlim_fd_cur=4096`, `rlim_fd_max=8192`.
pub(crate) const SERVER_NOFILE: &str = "4096:8192";

/// Clients open (and, without keep-alive, churn) many connections. Their RLIMIT_NOFILE is the Docker daemon's
/// default: a limit above the daemon's own hard limit would make `docker run` fail.
pub(crate) const CLIENT_SYSCTLS: [(&str, &str); 2] = [
    ("net.ipv4.tcp_tw_reuse", "1"),
    ("net.ipv4.ip_local_port_range", "1024 65535"),
];

/// Which host CPUs (`--cpuset-cpus`) each server instance and the clients get.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Pinning {
    pub(crate) servers: Vec<Option<String>>,
    pub(crate) clients: Option<String>,
}

/// Servers and clients on separate CPUs when there are at least two: each server instance gets its own CPU
/// while there are enough (keeping at least one for the clients), they share CPUs `0..n-1` otherwise, and the
/// clients get the CPUs left. One CPU: no pinning.
pub(crate) fn pinning(ncpu: usize, servers: usize) -> Pinning {
    if ncpu < 2 {
        return Pinning {
            servers: vec![None; servers],
            clients: None,
        };
    }
    let range = |from: usize, to: usize| {
        if from == to {
            from.to_string()
        } else {
            format!("{from}-{to}")
        }
    };
    let (servers, used) = if servers < ncpu {
        (
            (0..servers).map(|i| Some(i.to_string())).collect(),
            servers.max(1),
        )
    } else {
        (vec![Some(range(0, ncpu - 2)); servers], ncpu - 1)
    };
    Pinning {
        servers,
        clients: Some(range(used, ncpu - 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_cpus_put_servers_on_0_and_clients_on_1() {
        let p = pinning(2, 3);
        assert_eq!(p.servers, vec![Some("0".to_owned()); 3]);
        assert_eq!(p.clients.as_deref(), Some("1"));
    }

    #[test]
    fn enough_cpus_give_each_server_its_own() {
        let p = pinning(8, 3);
        assert_eq!(
            p.servers,
            vec![Some("0".into()), Some("1".into()), Some("2".into())]
        );
        assert_eq!(p.clients.as_deref(), Some("3-7"));
        let crowded = pinning(4, 5);
        assert_eq!(crowded.servers[4].as_deref(), Some("0-2"));
        assert_eq!(crowded.clients.as_deref(), Some("3"));
    }

    /// containers/compose.yaml (for running by hand) sets the same limits and tunables as `run --containers`.
    #[test]
    fn the_compose_file_tunes_like_run_containers() {
        let path = crate::project_root().join("containers/compose.yaml");
        let mut compose: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        compose.apply_merge().unwrap(); // `<<: *client`, as docker-compose reads it
        let services = compose["services"].as_mapping().unwrap();
        let server = &compose["services"]["server"];
        for (k, v) in SERVER_SYSCTLS {
            assert_eq!(server["sysctls"][k].as_str(), Some(v), "server sysctl {k}");
        }
        let nofile = |s: &serde_yaml_ng::Value| {
            format!(
                "{}:{}",
                s["ulimits"]["nofile"]["soft"].as_u64().unwrap(),
                s["ulimits"]["nofile"]["hard"].as_u64().unwrap()
            )
        };
        assert_eq!(nofile(server), SERVER_NOFILE);
        let image = |s: &serde_yaml_ng::Value| {
            s["image"]
                .as_str()
                .unwrap()
                .split(':')
                .next()
                .unwrap()
                .to_owned()
        };
        assert_eq!(image(server), super::super::images::SERVER);
        let clients: Vec<_> = services
            .iter()
            .filter(|(k, _)| k.as_str().unwrap().starts_with("client-"))
            .collect();
        assert!(clients.len() >= 2, "server + N clients");
        let mut outputs = Vec::new();
        for (name, client) in clients {
            assert_eq!(image(client), super::super::images::CLIENT, "{name:?}");
            for (k, v) in CLIENT_SYSCTLS {
                assert_eq!(
                    client["sysctls"][k].as_str(),
                    Some(v),
                    "{name:?} sysctl {k}"
                );
            }
            let args: Vec<&str> = client["command"]
                .as_sequence()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            outputs.push(args[args.iter().position(|&a| a == "--json").unwrap() + 1].to_owned());
        }
        outputs.sort();
        outputs.dedup();
        assert!(
            outputs.len() >= 2,
            "each client writes its own results file"
        );
        assert_eq!(
            compose["networks"]["bench"]["internal"].as_bool(),
            Some(true),
            "a private network"
        );
    }

    #[test]
    fn one_cpu_pins_nothing() {
        assert_eq!(
            pinning(1, 2),
            Pinning {
                servers: vec![None, None],
                clients: None
            }
        );
    }
}
