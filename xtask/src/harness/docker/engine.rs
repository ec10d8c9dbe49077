//! Thin wrappers over the docker CLI (through xshell). Every object created carries the session's label, so
//! cleanup finds it even when creation was interrupted half-way.

use std::process::{Command, Stdio};

use anyhow::{bail, Context as _};
use xshell::{cmd, Shell};

/// The label key; its value is the session id.
pub(crate) const LABEL: &str = "wsbench.session";

pub(crate) fn label(session: &str) -> String {
    format!("{LABEL}={session}")
}

/// A session id, unique enough on one engine or swarm manager: the process id and the sub-second clock, in hex
/// (safe in container, service and network names).
pub(crate) fn session_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{:x}{:04x}", std::process::id(), nanos & 0xffff)
}

/// Appends `text` to a session's log file (what containers and services printed).
pub(crate) fn append(path: &std::path::Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    f.write_all(text.as_bytes())?;
    Ok(())
}

/// A private bridge network: `--internal`, so nothing in it reaches beyond this machine.
pub(crate) fn create_network(sh: &Shell, name: &str, session: &str) -> anyhow::Result<()> {
    let label = label(session);
    cmd!(
        sh,
        "docker network create --internal --driver bridge --label {label} {name}"
    )
    .quiet()
    .ignore_stdout()
    .run()
    .with_context(|| format!("creating docker network {name}"))
}

/// `docker run -d …`; returns the container id.
pub(crate) fn run_detached(sh: &Shell, args: &[String]) -> anyhow::Result<String> {
    let id = cmd!(sh, "docker run -d {args...}")
        .quiet()
        .read()
        .context("starting a container")?;
    Ok(id.trim().to_owned())
}

pub(crate) fn inspect(sh: &Shell, name: &str, format: &str) -> anyhow::Result<String> {
    let out = cmd!(sh, "docker inspect --format {format} {name}")
        .quiet()
        .ignore_stderr()
        .read()?;
    Ok(out.trim().to_owned())
}

/// The container's address on `network`.
pub(crate) fn ip(sh: &Shell, name: &str, network: &str) -> anyhow::Result<String> {
    let format = format!("{{{{(index .NetworkSettings.Networks \"{network}\").IPAddress}}}}");
    let ip = inspect(sh, name, &format)?;
    if ip.parse::<std::net::Ipv4Addr>().is_err() {
        bail!("container {name} has no IPv4 address on {network} (got `{ip}`)");
    }
    Ok(ip)
}

/// The container's main process as the host sees it (for nsenter), 0 once it has stopped.
pub(crate) fn pid(sh: &Shell, name: &str) -> anyhow::Result<u32> {
    inspect(sh, name, "{{.State.Pid}}")?
        .parse()
        .with_context(|| format!("pid of container {name}"))
}

pub(crate) fn exit_code(sh: &Shell, name: &str) -> anyhow::Result<i64> {
    inspect(sh, name, "{{.State.ExitCode}}")?
        .parse()
        .with_context(|| format!("exit code of container {name}"))
}

pub(crate) fn running(sh: &Shell, name: &str) -> bool {
    inspect(sh, name, "{{.State.Running}}").is_ok_and(|s| s == "true")
}

/// The container's stdout and stderr so far, kept apart (no TTY).
pub(crate) fn logs(name: &str) -> anyhow::Result<(String, String)> {
    let out = Command::new("docker")
        .args(["logs", name])
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("docker logs {name}"))?;
    Ok((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// `docker stop` (SIGTERM, then SIGKILL after `grace_s`).
pub(crate) fn stop(sh: &Shell, name: &str, grace_s: u32) -> anyhow::Result<()> {
    let t = grace_s.to_string();
    cmd!(sh, "docker stop --time {t} {name}")
        .quiet()
        .ignore_stdout()
        .run()
        .with_context(|| format!("stopping {name}"))
}

/// Removes every container and network of the session; returns what could not be removed.
pub(crate) fn remove_session(sh: &Shell, session: &str) -> Vec<String> {
    let mut failures = Vec::new();
    let filter = format!("label={}", label(session));
    let containers = cmd!(sh, "docker ps -aq --filter {filter}")
        .quiet()
        .ignore_stderr()
        .read()
        .unwrap_or_default();
    let containers: Vec<&str> = containers.split_whitespace().collect();
    let ids = &containers;
    if !ids.is_empty()
        && cmd!(sh, "docker rm -f {ids...}")
            .quiet()
            .ignore_stdout()
            .run()
            .is_err()
    {
        failures.push(format!("containers {}", containers.join(" ")));
    }
    let networks = cmd!(sh, "docker network ls -q --filter {filter}")
        .quiet()
        .ignore_stderr()
        .read()
        .unwrap_or_default();
    for net in networks.split_whitespace() {
        if cmd!(sh, "docker network rm {net}")
            .quiet()
            .ignore_stdout()
            .run()
            .is_err()
        {
            failures.push(format!("network {net}"));
        }
    }
    failures
}

/// CPUs the Docker host has (pinning plans against these, not against this process's affinity).
pub(crate) fn ncpu(sh: &Shell) -> anyhow::Result<usize> {
    let format = "{{.NCPU}}";
    let n = cmd!(sh, "docker info --format {format}")
        .quiet()
        .read()
        .context("docker info")?;
    n.trim()
        .parse()
        .with_context(|| format!("docker info NCPU `{n}`"))
}

/// `docker version`'s server version, for provenance.
pub(crate) fn server_version(sh: &Shell) -> String {
    let format = "{{.Server.Version}}";
    cmd!(sh, "docker version --format {format}")
        .quiet()
        .ignore_stderr()
        .read()
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// `docker image inspect`'s id of a tag, if the tag exists.
pub(crate) fn image_id(sh: &Shell, tag: &str) -> Option<String> {
    let format = "{{.Id}}";
    cmd!(sh, "docker image inspect --format {format} {tag}")
        .quiet()
        .ignore_stderr()
        .read()
        .ok()
        .map(|s| s.trim().to_owned())
}
