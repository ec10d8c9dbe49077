//! Container limits and kernel tunables, set the way the OSS/J seed tuned its hosts.

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

#[cfg(test)]
mod tests {
    use super::*;

    /// containers/compose.yaml (for running by hand) sets the same limits and tunables as `run --containers`.
    #[test]
    fn the_compose_file_tunes_like_run_containers() {
        let path = crate::paths::project_root().join("containers/compose.yaml");
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
        assert_eq!(image(server), crate::artifacts::images::SERVER);
        let clients: Vec<_> = services
            .iter()
            .filter(|(k, _)| k.as_str().unwrap().starts_with("client-"))
            .collect();
        assert!(clients.len() >= 2, "server + N clients");
        let mut outputs = Vec::new();
        for (name, client) in clients {
            assert_eq!(image(client), crate::artifacts::images::CLIENT, "{name:?}");
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
}
