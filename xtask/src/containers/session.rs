//! One container run: images, a private network, server containers (pinned, tuned, waited for until READY),
//! client containers per step with their results merged exactly. Dropping the session removes every container
//! and network it created, also when the run failed or was interrupted.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context as _};
use serde::Serialize;
use xshell::{cmd, Shell};

use super::images::{self, Image};
use super::shaping::{self, Shaped};
use super::tuning::{self, Pinning};
use super::{clients, docker, interrupt, ContainerArgs};
use crate::build::{self, Arch, Dist};
use crate::scenario::{ServerSpec, Step};

const HTTP_PORT: u16 = 8080;
const CHAT_PORT: u16 = 8081;
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// Where client containers write their results (a host directory is mounted there).
const OUT: &str = "/out";

/// A server container that printed READY.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ServerEndpoint {
    pub(crate) name: String,
    pub(crate) ip: String,
    /// `http://<ip>:8080` when HTTP is served.
    pub(crate) http_url: Option<String>,
    /// `<ip>:8081` when chat is served.
    pub(crate) chat_addr: Option<String>,
    /// Its main process as the host sees it.
    #[serde(skip)]
    pub(crate) host_pid: u32,
    pub(crate) ready: String,
    pub(crate) cpuset: Option<String>,
    pub(crate) command: Vec<String>,
    pub(crate) shaped: Option<Shaped>,
}

/// What the client containers of one step did.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ClientRun {
    pub(crate) containers: usize,
    pub(crate) exit_codes: Vec<i32>,
    pub(crate) commands: Vec<Vec<String>>,
}

/// Everything created for one `cargo xtask run … --containers`; Drop removes it.
#[derive(Debug)]
pub(crate) struct Session {
    sh: Shell,
    id: String,
    network: String,
    out_dir: PathBuf,
    dist: Dist,
    images: Vec<Image>,
    ncpu: usize,
    clients_containers: usize,
    link: Option<shaping::Rate>,
    pinning: Option<Pinning>,
    servers: Vec<ServerEndpoint>,
    started: usize,
    history: Vec<serde_json::Value>,
}

impl Session {
    /// Builds the static binaries and images, creates the private network.
    pub(crate) fn start(sh: &Shell, args: &ContainerArgs) -> anyhow::Result<Session> {
        interrupt::install()?;
        ensure!(
            args.clients_containers >= 1,
            "--clients-containers must be ≥ 1"
        );
        if !build::docker_answers(sh) {
            bail!(
                "--containers needs a running Docker daemon and `docker info` failed: install Docker \
                 (`apt-get install docker.io`) and start it"
            );
        }
        let link = args.link.as_deref().map(shaping::parse_rate).transpose()?;
        if link.is_some() {
            shaping::preflight(sh)?;
        }
        let arch =
            Arch::host().context("container runs need an x86_64 or ppc64le Linux Docker host")?;
        let dist = build::ensure(sh, arch)?;
        let images = images::build_all(sh, &dist)?;
        interrupt::check()?;
        let id = session_id();
        let out_dir = std::env::temp_dir().join(format!("wsbench-{id}"));
        let session = Session {
            sh: Shell::new()?,
            network: format!("wsbench-{id}"),
            id,
            out_dir,
            dist,
            images,
            ncpu: docker::ncpu(sh)?,
            clients_containers: args.clients_containers,
            link,
            pinning: None,
            servers: Vec::new(),
            started: 0,
            history: Vec::new(),
        };
        create_out_dir(&session.out_dir)?;
        docker::create_network(sh, &session.network, &session.id)?;
        Ok(session)
    }

    /// Starts `instances` server containers and waits for each one's READY line.
    pub(crate) fn start_servers(
        &mut self,
        spec: &ServerSpec,
        workers: Option<u32>,
        instances: usize,
    ) -> anyhow::Result<&[ServerEndpoint]> {
        ensure!(
            self.servers.is_empty(),
            "servers are already running: stop them first"
        );
        ensure!(instances >= 1, "at least one server instance is needed");
        let pinning = tuning::pinning(self.ncpu, instances);
        for cpuset in pinning.servers.clone() {
            interrupt::check()?;
            self.started += 1;
            let name = format!("wsbench-{}-server-{}", self.id, self.started);
            let command = server_args(spec, workers);
            let mut args = vec![
                "--name".to_owned(),
                name.clone(),
                "--label".into(),
                docker::label(&self.id),
            ];
            args.extend(["--network".into(), self.network.clone()]);
            if let Some(cpus) = &cpuset {
                args.extend(["--cpuset-cpus".into(), cpus.clone()]);
            }
            args.extend([
                "--ulimit".into(),
                format!("nofile={}", tuning::SERVER_NOFILE),
            ]);
            for (k, v) in tuning::SERVER_SYSCTLS {
                args.extend(["--sysctl".into(), format!("{k}={v}")]);
            }
            args.push(self.images[0].tag.clone());
            args.extend(command.iter().cloned());
            docker::run_detached(&self.sh, &args)?;
            let ready = wait_ready(&self.sh, &name)?;
            let ip = docker::ip(&self.sh, &name, &self.network)?;
            let host_pid = docker::pid(&self.sh, &name)?;
            let shaped = match &self.link {
                Some(rate) => Some(shaping::apply(&self.sh, host_pid, rate)?),
                None => None,
            };
            eprintln!("server container {name} at {ip}: {ready}");
            self.servers.push(ServerEndpoint {
                http_url: spec.http().then(|| format!("http://{ip}:{HTTP_PORT}")),
                chat_addr: spec.chat().then(|| format!("{ip}:{CHAT_PORT}")),
                name,
                ip,
                host_pid,
                ready,
                cpuset,
                command: std::iter::once("docker run -d".to_owned())
                    .chain(args)
                    .collect(),
                shaped,
            });
        }
        self.pinning = Some(pinning);
        Ok(&self.servers)
    }

    /// Runs one step in client containers (at least one per server, spreading the load across them), writes
    /// the step's results document to `json_out` (merged exactly when there are several).
    pub(crate) fn run_step(&mut self, step: &Step, json_out: &Path) -> anyhow::Result<ClientRun> {
        ensure!(!self.servers.is_empty(), "no server container is running");
        let k = self.clients_containers.max(self.servers.len());
        let shares =
            clients::split(&step.client, k).with_context(|| format!("step {}", step.id))?;
        let client_cpus = self.pinning.as_ref().and_then(|p| p.clients.clone());
        let mut children = Vec::new();
        let mut commands = Vec::new();
        let mut files = Vec::new();
        for (i, share) in shares.iter().enumerate() {
            interrupt::check()?;
            let server = &self.servers[i % self.servers.len()];
            let target = if share.chat.is_some() {
                server.chat_addr.clone()
            } else {
                server.http_url.clone()
            }
            .with_context(|| {
                format!(
                    "step {} needs a listener the server does not serve",
                    step.id
                )
            })?;
            let file = format!("{}.{}.json", step.id, i + 1);
            let name = format!("wsbench-{}-{}-client-{}", self.id, step.id, i + 1);
            let mut args = vec![
                "--name".to_owned(),
                name,
                "--label".into(),
                docker::label(&self.id),
            ];
            args.extend(["--network".into(), self.network.clone()]);
            if let Some(cpus) = &client_cpus {
                args.extend(["--cpuset-cpus".into(), cpus.clone()]);
            }
            for (k, v) in tuning::CLIENT_SYSCTLS {
                args.extend(["--sysctl".into(), format!("{k}={v}")]);
            }
            // Joining the server's PID namespace makes the server PID 1 for --monitor-pid (RSS sampling).
            args.extend(["--pid".into(), format!("container:{}", server.name)]);
            args.extend([
                "--volume".into(),
                format!("{}:{OUT}", self.out_dir.display()),
            ]);
            args.push(self.images[1].tag.clone());
            args.extend(share.args(&target, &Path::new(OUT).join(&file), 1, &step.label));
            let child = Command::new("docker")
                .arg("run")
                .args(&args)
                .stdin(Stdio::null())
                .spawn()
                .context("starting a client container")?;
            children.push(child);
            commands.push(
                std::iter::once("docker run".to_owned())
                    .chain(args)
                    .collect(),
            );
            files.push(self.out_dir.join(file));
        }
        let mut exit_codes = Vec::new();
        for mut child in children {
            let status = child.wait().context("waiting for a client container")?;
            exit_codes.push(status.code().unwrap_or(-1));
        }
        // Interrupted clients still write what they measured (marked partial): keep it, the caller stops after.
        self.remove_containers_matching(&format!("{}-client-", step.id));
        let missing: Vec<_> = files.iter().filter(|f| !f.exists()).collect();
        if !missing.is_empty() {
            bail!(
                "step {}: client containers exited {exit_codes:?} without writing {missing:?}",
                step.id
            );
        }
        if let Some(dir) = json_out.parent() {
            std::fs::create_dir_all(dir)?;
        }
        if files.len() == 1 {
            std::fs::copy(&files[0], json_out)
                .with_context(|| format!("copying results to {}", json_out.display()))?;
        } else {
            let (client, parts) = (self.dist.client(), &files);
            cmd!(self.sh, "{client} merge {parts...} --json {json_out}")
                .quiet()
                .run()
                .with_context(|| format!("merging the results of step {}", step.id))?;
        }
        for f in &files {
            let _ = std::fs::remove_file(f);
        }
        let run = ClientRun {
            containers: files.len(),
            exit_codes,
            commands,
        };
        self.history
            .push(serde_json::json!({ "step": step.id, "clients": run }));
        Ok(run)
    }

    /// Stops the servers gracefully (SIGTERM), appends their stderr (and shaping statistics) to `log`, removes
    /// them; fails if one did not exit cleanly.
    pub(crate) fn stop_servers(&mut self, log: &Path) -> anyhow::Result<()> {
        let mut text = String::new();
        let mut failures = Vec::new();
        for server in std::mem::take(&mut self.servers) {
            if let Some(shaped) = &server.shaped {
                text.push_str(&format!("== {}: link shaping ==\n", server.name));
                text.push_str(&shaping::stats(&self.sh, server.host_pid, shaped));
            }
            let stopped = docker::stop(&self.sh, &server.name, 10);
            let code = docker::exit_code(&self.sh, &server.name);
            let (_, stderr) = docker::logs(&server.name).unwrap_or_default();
            text.push_str(&format!(
                "== {} ({}) ==\n{stderr}",
                server.name, server.ready
            ));
            match (stopped, code) {
                (Ok(()), Ok(0)) => {}
                (Err(e), _) => failures.push(format!("{}: {e:#}", server.name)),
                (_, Ok(c)) => failures.push(format!(
                    "{} exited with status {c}, not a clean shutdown",
                    server.name
                )),
                (_, Err(e)) => failures.push(format!("{}: {e:#}", server.name)),
            }
            let name = &server.name;
            let _ = cmd!(self.sh, "docker rm -f {name}")
                .quiet()
                .ignore_stdout()
                .ignore_stderr()
                .run();
            self.history.push(serde_json::json!({ "server": server }));
        }
        append(log, &text)?;
        if !failures.is_empty() {
            bail!("server containers: {}", failures.join("; "));
        }
        Ok(())
    }

    /// How the binaries in the images were built.
    pub(crate) fn build_info(&self) -> &build::BuildInfo {
        &self.dist.info
    }

    /// The last placement of servers and clients on CPUs, in provenance's terms.
    pub(crate) fn pinning(&self) -> Option<crate::pinning::Pinning> {
        let p = self.pinning.as_ref()?;
        let cpus = |list: Option<&String>| {
            list.and_then(|l| crate::pinning::parse_cpu_list(l).ok())
                .unwrap_or_default()
        };
        let mut server_cpus: Vec<usize> = p.servers.iter().flat_map(|s| cpus(s.as_ref())).collect();
        server_cpus.sort_unstable();
        server_cpus.dedup();
        let enabled = p.clients.is_some();
        Some(crate::pinning::Pinning {
            enabled,
            reason: (!enabled).then(|| format!("only {} CPU on the Docker host", self.ncpu)),
            server_cpus,
            client_cpus: cpus(p.clients.as_ref()),
            tool: enabled.then(|| "docker run --cpuset-cpus".to_owned()),
        })
    }

    /// How the containers were built, placed and tuned, for provenance.json.
    pub(crate) fn provenance(&self) -> serde_json::Value {
        serde_json::json!({
            "engine": "docker",
            "engine_version": docker::server_version(&self.sh),
            "network": { "name": self.network, "driver": "bridge", "internal": true },
            "images": self.images,
            "build": self.dist.info,
            "host_cpus": self.ncpu,
            "pinning": self.pinning,
            "server": {
                "ulimit_nofile": tuning::SERVER_NOFILE,
                "sysctls": tuning::SERVER_SYSCTLS.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
            },
            "client": {
                "containers_per_step": self.clients_containers,
                "ulimit_nofile": "the Docker daemon's default",
                "sysctls": tuning::CLIENT_SYSCTLS.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
            },
            "link": self.link,
            "history": self.history,
        })
    }

    fn remove_containers_matching(&self, part: &str) {
        let filter = format!("name=wsbench-{}-{part}", self.id);
        let ids = cmd!(self.sh, "docker ps -aq --filter {filter}")
            .quiet()
            .ignore_stderr()
            .read()
            .unwrap_or_default();
        let ids: Vec<&str> = ids.split_whitespace().collect();
        if !ids.is_empty() {
            let _ = cmd!(self.sh, "docker rm -f {ids...}")
                .quiet()
                .ignore_stdout()
                .ignore_stderr()
                .run();
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let failures = docker::remove_session(&self.sh, &self.id);
        let _ = std::fs::remove_dir_all(&self.out_dir);
        if !failures.is_empty() {
            eprintln!(
                "could not remove {}; by hand: docker rm -f $(docker ps -aq --filter label={}) && \
                 docker network rm {}",
                failures.join(", "),
                docker::label(&self.id),
                self.network
            );
        }
    }
}

/// bench-server's flags inside a container: listen on every address of the private network.
fn server_args(spec: &ServerSpec, workers: Option<u32>) -> Vec<String> {
    let mut a = vec!["--http".to_owned()];
    a.push(if spec.http() {
        format!("0.0.0.0:{HTTP_PORT}")
    } else {
        "off".to_owned()
    });
    if spec.chat() {
        a.extend(["--chat".to_owned(), format!("0.0.0.0:{CHAT_PORT}")]);
    }
    if let Some(w) = workers.or(spec.workers) {
        a.extend(["--workers".to_owned(), w.to_string()]);
    }
    a.extend(spec.extra_args());
    a
}

/// Follows the container's stdout until its READY line (contract: exactly one line, flushed).
fn wait_ready(sh: &Shell, name: &str) -> anyhow::Result<String> {
    let mut logs = Command::new("docker")
        .args(["logs", "--follow", name])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("docker logs --follow")?;
    let stdout = logs.stdout.take().context("docker logs has no stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + READY_TIMEOUT;
    let outcome = loop {
        if interrupt::interrupted() {
            break Err(anyhow::anyhow!("interrupted"));
        }
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(line) if line.starts_with("READY ") => break Ok(line),
            Ok(_) => {}
            Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
            Err(mpsc::RecvTimeoutError::Timeout) => {
                break Err(anyhow::anyhow!(
                    "{name} printed no READY line within {READY_TIMEOUT:?}"
                ))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let code =
                    docker::exit_code(sh, name).map_or_else(|e| e.to_string(), |c| c.to_string());
                let (_, stderr) = docker::logs(name).unwrap_or_default();
                break Err(anyhow::anyhow!(
                    "{name} exited (status {code}) before READY:\n{}",
                    tail(&stderr, 20)
                ));
            }
        }
    };
    let _ = logs.kill();
    let _ = logs.wait();
    if outcome.is_ok() && !docker::running(sh, name) {
        bail!("{name} stopped right after READY");
    }
    outcome
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The mounted results directory: client containers run as a non-root user of their own, so anyone may write.
fn create_out_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777))?;
    Ok(())
}

fn append(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    f.write_all(text.as_bytes())?;
    Ok(())
}

/// Unique enough on one host: the process id and the sub-second clock.
fn session_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{:x}{:04x}", std::process::id(), nanos & 0xffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_listens_on_the_private_network() {
        let spec = ServerSpec {
            chat: Some(true),
            ..ServerSpec::default()
        };
        assert_eq!(
            server_args(&spec, Some(2)).join(" "),
            "--http 0.0.0.0:8080 --chat 0.0.0.0:8081 --workers 2"
        );
        let chat_only = ServerSpec {
            http: Some(false),
            chat: Some(true),
            ..ServerSpec::default()
        };
        assert_eq!(
            server_args(&chat_only, None).join(" "),
            "--http off --chat 0.0.0.0:8081"
        );
    }

    #[test]
    fn ids_are_docker_name_safe() {
        let id = session_id();
        assert!(
            !id.is_empty() && id.chars().all(|c| c.is_ascii_hexdigit()),
            "{id}"
        );
    }
}
