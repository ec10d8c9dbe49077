//! The OSS/J portal as containers on the run's private network (`oss-scale-out --containers`): each tier a
//! container of its own — the broker (Debian's ActiveMQ), the back ends and the application instances
//! (bench-server's image in its `backend` and `app` roles), the front end (HAProxy or Apache httpd from
//! Debian) — and the clients reach the front end only. The broker's and the front end's images are Debian
//! runtimes built here as the peers' are (`artifacts::peer_images::ensure_runtime`: debootstrap, the
//! packages below, `docker import`); no image is pulled. Their configuration files (the project's
//! templates, the front end's with the step's instances written in) are mounted from the session's
//! directory. The broker is started once per run and kept across the steps (its JVM takes seconds to
//! start); the application instances are the session's servers, what its faults reach.

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};

use super::{Session, HTTP_PORT};
use crate::argv;
use crate::artifacts::peer_images;
use crate::interrupt;
use crate::portal::{self, Front, Portal, Tier};
use crate::scenario::ServerSpec;
use wsbench_tools::{activemq, apache, docker, haproxy};

/// The broker image's Debian packages (its JRE comes as a dependency).
pub(super) const BROKER_PACKAGES: &[&str] = &["activemq"];
/// The front-end image's Debian packages: both front ends in one image.
pub(super) const FRONT_PACKAGES: &[&str] = &["haproxy", "apache2"];
/// The broker's STOMP port in its container.
const STOMP_PORT: u16 = 61613;
/// The broker's heap, as in a local run.
const BROKER_HEAP_MB: u32 = 256;
/// How long the broker may take to listen (its JVM loads Spring; 8.8 s by hand on a loaded machine).
const BROKER_TIMEOUT: Duration = Duration::from_secs(90);
/// How long a front end may take to listen.
const FRONT_TIMEOUT: Duration = Duration::from_secs(20);
/// Where the session's portal directory is mounted in the broker and front-end containers.
const MOUNT: &str = "/wsbench";
/// The runtime images' user: not root, by number.
const USER: &str = "65532:65532";
/// The front end's RLIMIT_NOFILE: HAProxy sizes its descriptors from its `maxconn` (two per connection, 8192
/// in haproxy.cfg) and, not being root, refuses to start under the seed's hard limit of 8192.
const FRONT_NOFILE: &str = "nofile=20000:20000";

/// A tier's container other than the application instances (which are the session's servers).
#[derive(Debug, Clone)]
pub(super) struct TierContainer {
    pub(super) name: String,
    pub(super) ip: String,
    pub(super) host_pid: u32,
    pub(super) tier: Tier,
    pub(super) command: Vec<String>,
}

/// The portal's containers around the application instances.
#[derive(Debug, Default)]
pub(super) struct Tiers {
    /// The broker's and the front end's images, once built or found.
    images: Option<(String, String)>,
    pub(super) broker: Option<TierContainer>,
    pub(super) front: Option<TierContainer>,
    pub(super) backends: Vec<TierContainer>,
    /// How long the broker took to listen, each time it was started.
    broker_started: Vec<Duration>,
}

/// A directory anyone may write (the containers run as a user of their own).
fn open_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777))?;
    Ok(())
}

/// Waits until `ip:port` accepts connections, while container `name` runs.
fn wait_listening(name: &str, ip: &str, port: u16, timeout: Duration) -> Result<Duration> {
    let t0 = Instant::now();
    let addr: SocketAddr = format!("{ip}:{port}").parse()?;
    let sh = xshell::Shell::new()?;
    loop {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(t0.elapsed());
        }
        if !docker::running(&sh, name) {
            let (_, stderr) = docker::logs(name).unwrap_or_default();
            bail!(
                "{name} stopped before listening on {addr}:\n{}",
                super::tail(&stderr, 20)
            );
        }
        if t0.elapsed() > timeout || interrupt::interrupted() {
            bail!("{name} did not listen on {addr} within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Session {
    /// The session's portal directory (mounted in the broker and front end), made on first use.
    fn portal_dir(&self) -> Result<PathBuf> {
        let dir = self.out_dir.join("portal");
        open_dir(&dir)?;
        Ok(dir)
    }

    /// Starts the portal: the broker unless it runs, `portal.backends` back ends, `apps` application
    /// instances and the front end over them. The clients' URL (the front end's) and every container's
    /// command line.
    pub(crate) fn start_portal(
        &mut self,
        spec: &ServerSpec,
        workers: Option<u32>,
        portal: Portal,
        apps: usize,
    ) -> Result<(String, Vec<Vec<String>>)> {
        anyhow::ensure!(
            self.servers.is_empty(),
            "servers are already running: stop them first"
        );
        let (broker_image, front_image) = self.ensure_portal_images()?;
        let dir = self.portal_dir()?;
        let cpus = crate::pinning::for_containers(self.ncpu, apps);
        // The fixed tiers share the first instance's CPUs: the clients keep theirs.
        let fixed = cpus.servers.first().cloned().flatten();
        if self.portal.broker.is_none() {
            self.start_broker(&broker_image, &dir, fixed.as_ref())?;
        }
        let broker = self.portal.broker.as_ref().context("no broker")?;
        let broker = format!("{}:{STOMP_PORT}", broker.name);
        for n in 1..=portal.backends {
            interrupt::check()?;
            self.start_backend(n, workers, &broker, fixed.as_ref())?;
        }
        for (n, cpuset) in cpus.servers.iter().enumerate() {
            interrupt::check()?;
            let name = format!("wsbench-{}-app{}", self.id, n + 1);
            let listen = format!("0.0.0.0:{HTTP_PORT}");
            let command =
                argv::portal_app(spec, workers, &listen, &broker, &format!("app{}", n + 1));
            let image = self.server.image.tag.clone();
            self.launch(spec, name, cpuset.clone(), &image, &command)?;
        }
        self.pinning = Some(cpus);
        let apps: Vec<String> = self
            .servers
            .iter()
            .map(|s| format!("{}:{HTTP_PORT}", s.ip))
            .collect();
        let front = self.start_front(portal.front, &front_image, &dir, &apps, fixed.as_ref())?;
        let fixed = self.portal.broker.iter().chain(&self.portal.backends);
        let commands = std::iter::once(&front)
            .chain(fixed)
            .map(|c| c.command.clone())
            .chain(self.servers.iter().map(|s| s.command.clone()))
            .collect();
        Ok((format!("http://{}:{HTTP_PORT}", front.ip), commands))
    }

    /// The broker's and the front end's images, built from Debian's packages unless the engine has them.
    fn ensure_portal_images(&mut self) -> Result<(String, String)> {
        if let Some(i) = &self.portal.images {
            return Ok(i.clone());
        }
        let owned = |p: &[&str]| p.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let broker = peer_images::ensure_runtime(&self.sh, &owned(BROKER_PACKAGES))
            .context("the broker's image (Debian's activemq)")?;
        let front = peer_images::ensure_runtime(&self.sh, &owned(FRONT_PACKAGES))
            .context("the front end's image (Debian's haproxy and apache2)")?;
        self.portal.images = Some((broker.clone(), front.clone()));
        Ok((broker, front))
    }

    /// Runs a tier's container `name` (`image`, `command`, as [`USER`], the portal directory mounted) and
    /// records it.
    fn run_tier(
        &mut self,
        tier: Tier,
        name: String,
        image: &str,
        command: Vec<String>,
        cpuset: Option<&String>,
        mount: Option<&Path>,
    ) -> Result<TierContainer> {
        let mut args = self.server_args(&name, cpuset);
        if tier == Tier::Front {
            if let Some(limit) = args.iter_mut().find(|a| a.starts_with("nofile=")) {
                FRONT_NOFILE.clone_into(limit);
            }
        }
        if let Some(dir) = mount {
            args.extend([
                "--user".into(),
                USER.into(),
                "--volume".into(),
                format!("{}:{MOUNT}", dir.display()),
            ]);
        }
        args.push(image.to_owned());
        args.extend(command);
        docker::run_detached(&self.sh, &args)
            .with_context(|| format!("starting the {}", tier.name()))?;
        Ok(TierContainer {
            ip: docker::ip(&self.sh, &name, &self.network)?,
            host_pid: docker::pid(&self.sh, &name)?,
            name,
            tier,
            command: std::iter::once("docker run -d".to_owned())
                .chain(args)
                .collect(),
        })
    }

    fn start_broker(&mut self, image: &str, dir: &Path, cpuset: Option<&String>) -> Result<()> {
        let config = dir.join("activemq.xml");
        let root = crate::paths::project_root();
        std::fs::copy(portal::broker_config(&root), &config)
            .with_context(|| format!("copying the broker's configuration to {}", dir.display()))?;
        let base = dir.join("broker");
        for d in [base.clone(), base.join("data"), base.join("tmp")] {
            open_dir(&d)?;
        }
        let mount = Path::new(MOUNT);
        let command = activemq::broker(
            &mount.join("activemq.xml"),
            &mount.join("broker"),
            STOMP_PORT,
            BROKER_HEAP_MB,
        );
        let name = format!("wsbench-{}-broker", self.id);
        let broker = self.run_tier(Tier::Broker, name, image, command, cpuset, Some(dir))?;
        let took = wait_listening(&broker.name, &broker.ip, STOMP_PORT, BROKER_TIMEOUT)?;
        eprintln!(
            "broker container {} listening after {took:.1?}",
            broker.name
        );
        self.portal.broker_started.push(took);
        self.portal.broker = Some(broker);
        Ok(())
    }

    fn start_backend(
        &mut self,
        n: u32,
        workers: Option<u32>,
        broker: &str,
        cpuset: Option<&String>,
    ) -> Result<()> {
        let name = format!("wsbench-{}-backend{n}-{}", self.id, self.started);
        self.started += 1;
        let image = self.server.image.tag.clone();
        let command = argv::portal_backend(workers, broker);
        let backend = self.run_tier(Tier::Backend, name, &image, command, cpuset, None)?;
        super::wait_ready(&self.sh, &backend.name)?;
        self.portal.backends.push(backend);
        Ok(())
    }

    fn start_front(
        &mut self,
        front: Front,
        image: &str,
        dir: &Path,
        apps: &[String],
        cpuset: Option<&String>,
    ) -> Result<TierContainer> {
        let root = crate::paths::project_root();
        let text = front.config(&root, &format!("0.0.0.0:{HTTP_PORT}"), apps)?;
        let file = dir.join(front.config_name());
        std::fs::write(&file, text).with_context(|| format!("writing {}", file.display()))?;
        let config = Path::new(MOUNT).join(front.config_name());
        let command = match front {
            Front::Haproxy => haproxy::foreground(&config),
            Front::Apache => {
                open_dir(&dir.join("apache2"))?;
                apache::foreground(&config, &Path::new(MOUNT).join("apache2"))
            }
        };
        let name = format!("wsbench-{}-front-{}", self.id, self.started);
        self.started += 1;
        let c = self.run_tier(Tier::Front, name, image, command, cpuset, Some(dir))?;
        wait_listening(&c.name, &c.ip, HTTP_PORT, FRONT_TIMEOUT)?;
        eprintln!("front end ({front}) container {} at {}", c.name, c.ip);
        self.portal.front = Some(c.clone());
        Ok(c)
    }

    /// Every portal container's host pid with its tier (none when no portal runs), for a step's meter.
    pub(crate) fn portal_pids(&self) -> Vec<(Tier, u32)> {
        if self.portal.front.is_none() {
            return Vec::new();
        }
        let mut out: Vec<(Tier, u32)> = self
            .servers
            .iter()
            .map(|s| (Tier::App, s.host_pid))
            .collect();
        let fixed = self
            .portal
            .front
            .iter()
            .chain(&self.portal.broker)
            .chain(&self.portal.backends);
        out.extend(fixed.map(|c| (c.tier, c.host_pid)));
        out
    }

    /// Stops the front end and the back ends (the broker stays for the next step), their logs to `text`.
    pub(super) fn stop_portal(&mut self, text: &mut String, failures: &mut Vec<String>) {
        let tiers: Vec<TierContainer> = self
            .portal
            .front
            .take()
            .into_iter()
            .chain(self.portal.backends.drain(..))
            .collect();
        for c in tiers {
            self.stop_tier(c, text, failures);
        }
    }

    /// At the run's end: stops the broker, appends its log to `log`.
    pub(crate) fn stop_broker(&mut self, log: &Path) -> Result<()> {
        let (mut text, mut failures) = (String::new(), Vec::new());
        if let Some(b) = self.portal.broker.take() {
            self.stop_tier(b, &mut text, &mut failures);
        }
        crate::containers::append(log, &text)?;
        match failures.is_empty() {
            true => Ok(()),
            false => bail!("{}", failures.join("; ")),
        }
    }

    /// The broker's and the front end's image tags, once built or found.
    pub(crate) fn portal_images(&self) -> Option<&(String, String)> {
        self.portal.images.as_ref()
    }

    /// How long the broker took to listen, each time it was started.
    pub(crate) fn broker_started(&self) -> &[Duration] {
        &self.portal.broker_started
    }

    fn stop_tier(&mut self, c: TierContainer, text: &mut String, failures: &mut Vec<String>) {
        let stopped = docker::stop(&self.sh, &c.name, 20);
        let (_, stderr) = docker::logs(&c.name).unwrap_or_default();
        text.push_str(&format!("== {} ({}) ==\n{stderr}", c.name, c.tier.name()));
        if let Err(e) = stopped {
            failures.push(format!("{}: {e:#}", c.name));
        }
        let _ = docker::remove(&self.sh, std::slice::from_ref(&c.name));
    }

    /// Why a tier's container is no longer running, if one is not.
    pub(super) fn portal_gone(&self) -> Option<String> {
        let fixed = self
            .portal
            .front
            .iter()
            .chain(&self.portal.broker)
            .chain(&self.portal.backends);
        fixed
            .filter(|c| !docker::running(&self.sh, &c.name))
            .map(|c| format!("the {} container {} stopped", c.tier.name(), c.name))
            .next()
    }
}
