//! The OSS/J portal as processes on this machine, on loopback: Debian's ActiveMQ (started once per run: its
//! JVM takes seconds to start, and the tiers around it are what a scale-out step changes), the back ends,
//! the application instances and the front end (HAProxy or Apache httpd), every one pinned to the server's
//! CPUs. The first application instance is the local backend's server (what its faults reach); the others
//! and the fixed tiers are held here.

use std::fs::File;
use std::io::Write as _;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use wsbench_tools::process::Process;
use wsbench_tools::{activemq, apache, haproxy, setpriv};

use super::process::ServerProcess;
use crate::argv;
use crate::backend::{Endpoint, Servers};
use crate::clock;
use crate::portal::{self, Front, Portal, Tier};
use crate::scenario::{Instance, Plan};
use crate::sut::Sampler;

/// How long the broker may take to listen (8.8 s measured on a loaded 2-core machine; its JVM loads Spring).
const BROKER_TIMEOUT: Duration = Duration::from_secs(90);
/// How long a front end may take to listen.
const FRONT_TIMEOUT: Duration = Duration::from_secs(20);
/// How long a front end, broker or back end may take to exit after SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(20);
/// The broker's heap: non-persistent queues of small orders need little.
const BROKER_HEAP_MB: u32 = 256;

/// A free port on loopback, as the kernel picks one (for programs that cannot be given port 0 and tell
/// which port they got: the broker, the front ends).
pub(super) fn free_port() -> Result<u16> {
    let l = TcpListener::bind("127.0.0.1:0").context("picking a free port")?;
    Ok(l.local_addr()?.port())
}

/// A program that does not print READY (the broker, a front end): started with its output to `log`, ready
/// once it accepts connections on `port`.
#[derive(Debug)]
pub(super) struct Listener {
    process: Process,
    pub(super) port: u16,
    /// Its pid (that of the JVM or the front end's master process).
    pub(super) pid: u32,
    /// How long it took to accept connections.
    pub(super) started_in: Duration,
    pub(super) what: &'static str,
}

impl Listener {
    fn start(
        what: &'static str,
        argv: &[String],
        log: &File,
        port: u16,
        timeout: Duration,
    ) -> Result<Listener> {
        let t0 = Instant::now();
        let (mut process, mut stdout) = Process::piped(argv, Some(log.try_clone()?))
            .with_context(|| format!("starting the {what}"))?;
        let mut out = log.try_clone()?;
        // Its stdout goes to the log as it comes: a full pipe would stop it.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut out));
        let pid = process.id().context("no pid")?;
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        loop {
            if let Some(status) = process.exited()? {
                bail!("the {what} exited ({status}) before listening on {addr} (see server.log)");
            }
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                break;
            }
            if t0.elapsed() > timeout || crate::interrupt::interrupted() {
                bail!("the {what} did not listen on {addr} within {timeout:?} (see server.log)");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(Listener {
            process,
            port,
            pid,
            started_in: t0.elapsed(),
            what,
        })
    }

    /// Why it is not running any more, if it is not.
    pub(super) fn gone(&mut self) -> Option<String> {
        let status = self.process.exited().ok().flatten()?;
        Some(format!("the {} exited ({status})", self.what))
    }

    /// SIGTERM, SIGKILL after a grace: Err when it had to be killed.
    pub(super) fn stop(self) -> Result<()> {
        let what = self.what;
        self.process
            .stop(STOP_GRACE)
            .map(drop)
            .with_context(|| format!("stopping the {what}"))
    }
}

/// Starts Debian's ActiveMQ with the project's configuration, its data under `dir/activemq`.
pub(super) fn start_broker(
    root: &Path,
    dir: &Path,
    pin: &[String],
    log: &File,
) -> Result<Listener> {
    if !activemq::installed() {
        bail!(
            "Debian's ActiveMQ is not installed ({}/bin/activemq.jar): {}",
            activemq::HOME,
            activemq::ACTIVEMQ.install
        );
    }
    let base = dir.join("activemq");
    for sub in ["data", "tmp"] {
        std::fs::create_dir_all(base.join(sub))
            .with_context(|| format!("creating {}", base.join(sub).display()))?;
    }
    let port = free_port()?;
    let mut argv = pin.to_vec();
    argv.extend(activemq::broker(
        &portal::broker_config(root),
        &base,
        port,
        BROKER_HEAP_MB,
    ));
    Listener::start("broker (ActiveMQ)", &argv, log, port, BROKER_TIMEOUT)
}

/// Writes `front`'s configuration for `apps` into `dir` and starts it on a free port.
pub(super) fn start_front(
    front: Front,
    root: &Path,
    dir: &Path,
    apps: &[String],
    pin: &[String],
    log: &File,
) -> Result<Listener> {
    let port = free_port()?;
    let config = dir.join(front.config_name());
    let text = front.config(root, &format!("127.0.0.1:{port}"), apps)?;
    std::fs::write(&config, text).with_context(|| format!("writing {}", config.display()))?;
    let mut argv = pin.to_vec();
    let what = match front {
        Front::Haproxy => {
            argv.extend(haproxy::foreground(&config));
            "front end (HAProxy)"
        }
        Front::Apache => {
            let run = dir.join("apache2");
            std::fs::create_dir_all(&run)?;
            argv.extend(apache::foreground(&config, &run));
            "front end (Apache httpd)"
        }
    };
    Listener::start(what, &argv, log, port, FRONT_TIMEOUT)
}

/// The tiers of one step's instance other than the broker and the first application instance.
#[derive(Debug, Default)]
pub(super) struct Tiers {
    pub(super) front: Option<Listener>,
    /// Application instances 2 … R.
    pub(super) apps: Vec<ServerProcess>,
    pub(super) backends: Vec<ServerProcess>,
    /// The back ends' command lines (a drain-backend fault starts them again).
    pub(super) backend_commands: Vec<Vec<String>>,
}

impl Tiers {
    /// Why one of them is not running any more, if one is not.
    pub(super) fn gone(&mut self) -> Option<String> {
        if let Some(why) = self.front.as_mut().and_then(Listener::gone) {
            return Some(why);
        }
        for (i, b) in self.backends.iter_mut().enumerate() {
            if let Some(status) = b.exited() {
                return Some(format!("back end {} exited ({status})", i + 1));
            }
        }
        None
    }

    /// Stops the front end first (no new requests), then the application instances, then the back ends
    /// (which drain what the broker handed them): every error, joined.
    pub(super) fn stop(&mut self) -> Result<()> {
        let mut errors = Vec::new();
        if let Some(front) = self.front.take() {
            if let Err(e) = front.stop() {
                errors.push(format!("{e:#}"));
            }
        }
        self.backend_commands.clear();
        let servers = self.apps.drain(..).chain(self.backends.drain(..));
        for s in servers {
            match s.stop(STOP_GRACE) {
                Ok(status) if status.success() => {}
                Ok(status) => errors.push(format!("a portal tier exited with {status} on SIGTERM")),
                Err(e) => errors.push(format!("{e:#}")),
            }
        }
        match errors.is_empty() {
            true => Ok(()),
            false => bail!("{}", errors.join("; ")),
        }
    }

    /// The pids of the tiers held here, each with its tier.
    pub(super) fn pids(&self) -> Vec<(Tier, u32)> {
        let mut out: Vec<(Tier, u32)> = self.apps.iter().map(|a| (Tier::App, a.pid)).collect();
        out.extend(self.backends.iter().map(|b| (Tier::Backend, b.pid)));
        out.extend(self.front.iter().map(|f| (Tier::Front, f.pid)));
        out
    }
}

/// Where the portal's generated files go: `dir/portal`.
pub(super) fn files_dir(dir: &Path) -> Result<PathBuf> {
    let d = dir.join("portal");
    std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
    Ok(d)
}

impl super::Local {
    /// Starts the portal for `instance`: the broker if it is not running yet, `portal.backends` back ends,
    /// `instance.servers` application instances and the front end over them; the clients' endpoint is the
    /// front end's.
    pub(super) fn start_portal(
        &mut self,
        plan: &Plan,
        instance: &Instance,
        portal: Portal,
    ) -> Result<Servers> {
        let root = crate::paths::project_root();
        let files = files_dir(&self.dir)?;
        let mut pin = setpriv::tied_to_parent();
        pin.extend(self.pinning.prefix(&self.pinning.server_cpus));
        let mut commands = Vec::new();
        if let Some(why) = self.broker.as_mut().and_then(Listener::gone) {
            self.note(&format!("{why}: started again"))?;
            self.broker = None;
        }
        if self.broker.is_none() {
            let broker = start_broker(&root, &files, &pin, &self.log)?;
            self.note(&format!("broker listening after {:.1?}", broker.started_in))?;
            self.broker_started.push(broker.started_in);
            self.broker = Some(broker);
        }
        let broker = format!("127.0.0.1:{}", self.broker.as_ref().map_or(0, |b| b.port));
        let workers = instance.workers.or(Some(1));
        for _ in 0..portal.backends {
            let mut cmd = pin.clone();
            cmd.push(self.bins.server.display().to_string());
            cmd.extend(argv::portal_backend(workers, &broker));
            let backend = self.start_server(&cmd)?;
            self.tiers.backends.push(backend);
            self.tiers.backend_commands.push(cmd.clone());
            commands.push(cmd);
        }
        let mut apps = Vec::new();
        for n in 1..=instance.servers {
            let mut cmd = pin.clone();
            cmd.push(self.bins.server.display().to_string());
            let name = format!("app{n}");
            cmd.extend(argv::portal_app(
                &plan.server,
                workers,
                "127.0.0.1:0",
                &broker,
                &name,
            ));
            let app = self.start_server(&cmd)?;
            let http = app.ready.http.context("an app instance without HTTP")?;
            apps.push(http.to_string());
            if n == 1 {
                // The first instance is the server the faults reach (kill-server, pause-server).
                self.restart = super::on_bound_addresses(&cmd, &app.ready);
                self.server = Some(app);
            } else {
                self.tiers.apps.push(app);
            }
            commands.push(cmd);
        }
        let front = start_front(portal.front, &root, &files, &apps, &pin, &self.log)?;
        let url = format!("http://127.0.0.1:{}", front.port);
        self.tiers.front = Some(front);
        self.monitor = self
            .server
            .as_ref()
            .map_or(Sampler::None, |s| Sampler::Pid(s.pid));
        self.external = false;
        Ok(Servers {
            endpoints: vec![Endpoint {
                http: Some(url.clone()),
                chat: None,
                ready: format!(
                    "portal at {url}: {} over {} app instance(s) ({}), broker {broker}, {} back end(s)",
                    portal.front,
                    apps.len(),
                    apps.join(", "),
                    portal.backends
                ),
            }],
            workers,
            commands,
        })
    }

    /// Starts one bench-server of the portal, its stderr to the log, and waits for its READY line.
    fn start_server(&mut self, cmd: &[String]) -> Result<ServerProcess> {
        writeln!(
            self.log,
            "==== wsbench {}: {}",
            clock::timestamp(),
            cmd.join(" ")
        )?;
        ServerProcess::start(cmd, self.log.try_clone()?, super::READY_TIMEOUT)
            .with_context(|| format!("`{}` did not start", cmd.join(" ")))
    }

    /// Every portal process's pid with its tier (none when no portal runs), for a step's [`Meter`].
    pub(super) fn portal_pids(&self) -> Vec<(Tier, u32)> {
        if self.tiers.front.is_none() {
            return Vec::new();
        }
        let mut out = self.tiers.pids();
        out.extend(self.server.as_ref().map(|s| (Tier::App, s.pid)));
        out.extend(self.broker.as_ref().map(|b| (Tier::Broker, b.pid)));
        out
    }

    /// A line in server.log, from wsbench.
    fn note(&mut self, line: &str) -> Result<()> {
        writeln!(self.log, "==== wsbench {}: {line}", clock::timestamp())?;
        Ok(())
    }
}
