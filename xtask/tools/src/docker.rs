//! The docker CLI: containers, networks, images and services on this machine's engine or another's
//! (`docker -H ADDR …`, [`EngineAddr`]). Thin wrappers over the commands wsbench runs, each parsing what the
//! CLI prints; what is created and how it is labelled is the caller's business.

use std::path::Path;
use std::process::{Child, ChildStdout, Command, Output, Stdio};

use anyhow::{bail, Context as _};
use serde::{Deserialize, Serialize};
use xshell::{cmd, Shell};

use crate::process::ProcessError;
use crate::Program;

/// The docker CLI.
pub const DOCKER: Program = Program {
    name: "docker",
    version_args: &["--version"],
    install: "apt-get install docker.io",
    used_for: "container and swarm runs (--containers, --swarm) and the cross builder images",
};

/// A Docker engine: `None` is the one the docker CLI reaches by default (DOCKER_HOST or the local socket).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineAddr(pub Option<String>);

impl EngineAddr {
    pub fn at(addr: &str) -> EngineAddr {
        EngineAddr(Some(addr.to_owned()))
    }

    /// `-H ADDR`, or nothing for the default engine.
    pub fn args(&self) -> Vec<String> {
        self.0
            .iter()
            .flat_map(|a| ["-H".to_owned(), a.clone()])
            .collect()
    }

    /// For messages: the address, or `this machine's engine`.
    pub fn describe(&self) -> String {
        self.0
            .clone()
            .unwrap_or_else(|| "this machine's engine".to_owned())
    }

    /// `docker [-H ADDR] ARGS…`, quiet, stderr kept for the error.
    pub fn read(&self, sh: &Shell, args: &[&str]) -> anyhow::Result<String> {
        let h = self.args();
        let out = cmd!(sh, "docker {h...} {args...}")
            .quiet()
            .ignore_status()
            .output()
            .context("running docker")?;
        if !out.status.success() {
            bail!(
                "docker {} ({}) failed: {}",
                args.join(" "),
                self.describe(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// `docker [-H ADDR] secret create --label LABEL NAME -`: a swarm secret of `value`, given on stdin so that
    /// it never appears on a command line.
    pub fn create_secret(
        &self,
        sh: &Shell,
        name: &str,
        label: &str,
        value: &str,
    ) -> anyhow::Result<()> {
        let h = self.args();
        let out = cmd!(sh, "docker {h...} secret create --label {label} {name} -")
            .quiet()
            .ignore_status()
            .stdin(value)
            .output()
            .context("running docker")?;
        if !out.status.success() {
            bail!(
                "docker secret create {name} ({}) failed: {}",
                self.describe(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(())
    }

    /// `docker [-H ADDR] run --rm ARGS…`, a throwaway container run to its end: its output, or
    /// [`ProcessError::Failed`] with it when the container (or docker) failed.
    pub fn run_once(&self, args: &[String]) -> Result<Output, ProcessError> {
        let mut argv = vec!["docker".to_owned()];
        argv.extend(self.args());
        argv.extend(["run".to_owned(), "--rm".to_owned()]);
        argv.extend(args.iter().cloned());
        crate::process::output(&argv)
    }

    /// `docker … info` answers.
    pub fn answers(&self, sh: &Shell) -> bool {
        self.read(sh, &["info", "--format", "{{.ID}}"]).is_ok()
    }

    /// `docker save TAG | docker -H ADDR load`: two processes joined by a pipe, no shell.
    pub fn load_from_local(&self, tag: &str) -> anyhow::Result<()> {
        let mut save = Command::new("docker")
            .args(["save", tag])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .context("docker save")?;
        let pipe = save.stdout.take().context("docker save has no stdout")?;
        let load = Command::new("docker")
            .args(self.args())
            .args(["load", "--quiet"])
            .stdin(pipe)
            .stdout(Stdio::null())
            .output()
            .context("docker load")?;
        let saved = save.wait().context("docker save")?;
        if !saved.success() || !load.status.success() {
            bail!(
                "docker save {tag} | docker {} load failed: {}",
                self.args().join(" "),
                String::from_utf8_lossy(&load.stderr).trim()
            );
        }
        Ok(())
    }
}

/// The daemon answers (not just the client is installed): `docker info`'s server version is not empty.
pub fn daemon_answers(sh: &Shell) -> bool {
    let format = "{{.ServerVersion}}";
    cmd!(sh, "docker info --format {format}")
        .quiet()
        .ignore_stderr()
        .read()
        .is_ok_and(|v| !v.trim().is_empty())
}

/// A private bridge network: `--internal`, so nothing in it reaches beyond this machine.
pub fn create_network(sh: &Shell, name: &str, label: &str) -> anyhow::Result<()> {
    cmd!(
        sh,
        "docker network create --internal --driver bridge --label {label} {name}"
    )
    .quiet()
    .ignore_stdout()
    .run()
    .with_context(|| format!("creating docker network {name}"))
}

/// `docker network disconnect NETWORK CONTAINER` (`--force`: also when the container is paused or gone).
pub fn network_disconnect(sh: &Shell, network: &str, container: &str) -> anyhow::Result<()> {
    cmd!(sh, "docker network disconnect {network} {container}")
        .quiet()
        .run()
        .with_context(|| format!("disconnecting {container} from {network}"))
}

/// `docker network connect NETWORK CONTAINER`.
pub fn network_connect(sh: &Shell, network: &str, container: &str) -> anyhow::Result<()> {
    cmd!(sh, "docker network connect {network} {container}")
        .quiet()
        .run()
        .with_context(|| format!("connecting {container} to {network}"))
}

/// `docker run -d …`; returns the container id.
pub fn run_detached(sh: &Shell, args: &[String]) -> anyhow::Result<String> {
    let id = cmd!(sh, "docker run -d {args...}")
        .quiet()
        .read()
        .context("starting a container")?;
    Ok(id.trim().to_owned())
}

/// `docker run …` in the foreground, its output on this terminal; the caller waits for it.
pub fn run_attached(args: &[String]) -> anyhow::Result<Child> {
    Command::new("docker")
        .arg("run")
        .args(args)
        .stdin(Stdio::null())
        .spawn()
        .context("starting a container")
}

pub fn inspect(sh: &Shell, name: &str, format: &str) -> anyhow::Result<String> {
    let out = cmd!(sh, "docker inspect --format {format} {name}")
        .quiet()
        .ignore_stderr()
        .read()?;
    Ok(out.trim().to_owned())
}

/// The container's address on `network`.
pub fn ip(sh: &Shell, name: &str, network: &str) -> anyhow::Result<String> {
    let format = format!("{{{{(index .NetworkSettings.Networks \"{network}\").IPAddress}}}}");
    let ip = inspect(sh, name, &format)?;
    if ip.parse::<std::net::Ipv4Addr>().is_err() {
        bail!("container {name} has no IPv4 address on {network} (got `{ip}`)");
    }
    Ok(ip)
}

/// The container's main process as the host sees it (for nsenter), 0 once it has stopped.
pub fn pid(sh: &Shell, name: &str) -> anyhow::Result<u32> {
    inspect(sh, name, "{{.State.Pid}}")?
        .parse()
        .with_context(|| format!("pid of container {name}"))
}

pub fn exit_code(sh: &Shell, name: &str) -> anyhow::Result<i64> {
    inspect(sh, name, "{{.State.ExitCode}}")?
        .parse()
        .with_context(|| format!("exit code of container {name}"))
}

pub fn running(sh: &Shell, name: &str) -> bool {
    inspect(sh, name, "{{.State.Running}}").is_ok_and(|s| s == "true")
}

/// The container's stdout and stderr so far, kept apart (no TTY).
pub fn logs(name: &str) -> anyhow::Result<(String, String)> {
    let out = Command::new("docker")
        .args(["logs", name])
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("docker logs {name}"))?;
    Ok(texts(&out))
}

/// A service's output so far (`docker service logs --raw`), stdout and stderr.
pub fn service_logs(service: &str) -> anyhow::Result<(String, String)> {
    let out = Command::new("docker")
        .args(["service", "logs", "--raw", service])
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("docker service logs {service}"))?;
    Ok(texts(&out))
}

fn texts(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `docker logs --follow` of a container, or `docker service logs --follow --raw` of a service: the stream of
/// its stdout, ended (the follower killed) when dropped.
#[derive(Debug)]
pub struct Follow {
    child: Child,
}

impl Follow {
    pub fn container(name: &str) -> anyhow::Result<(Follow, ChildStdout)> {
        Follow::spawn(&["logs", "--follow", name])
    }

    pub fn service(name: &str) -> anyhow::Result<(Follow, ChildStdout)> {
        Follow::spawn(&["service", "logs", "--follow", "--raw", name])
    }

    fn spawn(args: &[&str]) -> anyhow::Result<(Follow, ChildStdout)> {
        let mut child = Command::new("docker")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("docker {}", args.join(" ")))?;
        let stdout = child.stdout.take().context("docker logs has no stdout")?;
        Ok((Follow { child }, stdout))
    }
}

impl Drop for Follow {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `docker stop` (SIGTERM, then SIGKILL after `grace_s`).
pub fn stop(sh: &Shell, name: &str, grace_s: u32) -> anyhow::Result<()> {
    let t = grace_s.to_string();
    cmd!(sh, "docker stop --time {t} {name}")
        .quiet()
        .ignore_stdout()
        .run()
        .with_context(|| format!("stopping {name}"))
}

/// The ids of the containers `docker ps -a` lists with `filter` (`label=…`, `name=…`).
pub fn containers(sh: &Shell, filter: &str) -> Vec<String> {
    words(cmd!(sh, "docker ps -aq --filter {filter}"))
}

/// `docker rm -f` of the containers; Err when one could not be removed.
pub fn remove(sh: &Shell, ids: &[String]) -> anyhow::Result<()> {
    if ids.is_empty() {
        return Ok(());
    }
    cmd!(sh, "docker rm -f {ids...}")
        .quiet()
        .ignore_stdout()
        .ignore_stderr()
        .run()
        .context("docker rm -f")
}

/// Removes every container and network carrying `label` (`key=value`); returns what could not be removed.
pub fn remove_labelled(sh: &Shell, label: &str) -> Vec<String> {
    let mut failures = Vec::new();
    let filter = format!("label={label}");
    let ids = containers(sh, &filter);
    if remove(sh, &ids).is_err() {
        failures.push(format!("containers {}", ids.join(" ")));
    }
    for net in words(cmd!(sh, "docker network ls -q --filter {filter}")) {
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

/// Every container id, network id and image (`repository:tag id`) of the engine (`--no-trunc`): what a test
/// compares before and after.
pub fn inventory(sh: &Shell) -> anyhow::Result<[Vec<String>; 3]> {
    let fmt = "{{.Repository}}:{{.Tag}} {{.ID}}";
    let read = |c: xshell::Cmd<'_>| -> anyhow::Result<Vec<String>> {
        Ok(c.quiet().read()?.lines().map(str::to_owned).collect())
    };
    Ok([
        read(cmd!(sh, "docker ps -aq --no-trunc"))?,
        read(cmd!(sh, "docker network ls -q --no-trunc"))?,
        read(cmd!(sh, "docker image ls --format {fmt}"))?,
    ])
}

fn words(c: xshell::Cmd<'_>) -> Vec<String> {
    c.quiet()
        .ignore_stderr()
        .read()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// CPUs the Docker host has (pinning plans against these, not against this process's affinity).
pub fn ncpu(sh: &Shell) -> anyhow::Result<usize> {
    let format = "{{.NCPU}}";
    let n = cmd!(sh, "docker info --format {format}")
        .quiet()
        .read()
        .context("docker info")?;
    n.trim()
        .parse()
        .with_context(|| format!("docker info NCPU `{n}`"))
}

/// `docker version`'s server version, for provenance (empty when the daemon does not answer).
pub fn server_version(sh: &Shell) -> String {
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
pub fn image_id(sh: &Shell, tag: &str) -> Option<String> {
    let format = "{{.Id}}";
    cmd!(sh, "docker image inspect --format {format} {tag}")
        .quiet()
        .ignore_stderr()
        .read()
        .ok()
        .map(|s| s.trim().to_owned())
}

/// The image is in the local engine, or its registry answers for it (bounded: an unreachable registry fails
/// within seconds, a silent one within 15 s).
pub fn image_available(sh: &Shell, image: &str) -> bool {
    image_id(sh, image).is_some()
        || cmd!(sh, "timeout 15 docker manifest inspect {image}")
            .quiet()
            .ignore_stdout()
            .ignore_stderr()
            .run()
            .is_ok()
}

/// `docker image rm`, best effort: an image still used by a container stays (harmless).
pub fn remove_image(sh: &Shell, image: &str) {
    let _ = cmd!(sh, "docker image rm {image}")
        .quiet()
        .ignore_stdout()
        .ignore_stderr()
        .run();
}

/// The `repository:tag` of every image of `repository`.
pub fn tags(sh: &Shell, repository: &str) -> Vec<String> {
    let format = "{{.Repository}}:{{.Tag}}";
    words(cmd!(sh, "docker image ls {repository} --format {format}"))
}

/// `docker build --quiet` of `context` with `dockerfile`, tagged `tag`, with build args and labels
/// (`KEY=VALUE` each).
pub fn build(
    sh: &Shell,
    dockerfile: &str,
    context: &Path,
    tag: &str,
    build_args: &[String],
    labels: &[String],
) -> anyhow::Result<()> {
    let mut args = vec!["--file".to_owned(), dockerfile.to_owned()];
    for a in build_args {
        args.extend(["--build-arg".to_owned(), a.clone()]);
    }
    for l in labels {
        args.extend(["--label".to_owned(), l.clone()]);
    }
    let out = cmd!(sh, "docker build --quiet {args...} --tag {tag} {context}")
        .quiet()
        .ignore_status()
        .output()
        .with_context(|| format!("running docker build for {tag}"))?;
    if !out.status.success() {
        bail!(
            "docker build of {tag} failed:\n{}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// `docker import --change CHANGE TAR TAG`: an image from a root file system.
pub fn import(sh: &Shell, change: &str, tar: &Path, tag: &str) -> anyhow::Result<()> {
    cmd!(sh, "docker import --change {change} {tar} {tag}")
        .quiet()
        .ignore_stdout()
        .run()
        .with_context(|| format!("docker import {tag}"))
}

/// `docker save` of `tags` into the tar file `out`.
pub fn save(sh: &Shell, tags: &[String], out: &Path) -> anyhow::Result<()> {
    let names = tags.join(" ");
    cmd!(sh, "docker save -o {out} {tags...}")
        .quiet()
        .run()
        .with_context(|| format!("docker save {names} to {}", out.display()))
}
