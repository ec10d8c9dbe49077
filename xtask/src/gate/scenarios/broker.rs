//! The broker of a counted OSS/J order: Debian's ActiveMQ, run natively while one side's portal calls are
//! counted. It is not counted: it is a JVM of its own that the project does not build, and its cost does not
//! change with base or head. Started once per side (its JVM takes seconds to listen), stopped when dropped.

use std::fs::File;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};

use wsbench_harness::portal;
use wsbench_tools::activemq;
use wsbench_tools::process::Process;

/// How long the broker may take to listen (8.8 s was measured on a loaded 2-core machine).
const LISTEN_TIMEOUT: Duration = Duration::from_secs(90);
/// Non-persistent queues of small orders need little heap.
const HEAP_MB: u32 = 256;

/// A running broker; stopped (SIGTERM, then SIGKILL) when dropped.
pub(crate) struct Broker {
    process: Option<Process>,
    /// Its STOMP address, `127.0.0.1:PORT`.
    pub(crate) addr: String,
}

impl Broker {
    /// Starts the broker with the project's configuration, its data and log under `dir`.
    pub(crate) fn start(dir: &Path) -> Result<Broker> {
        anyhow::ensure!(
            activemq::installed(),
            "Debian's ActiveMQ is not installed: {}",
            activemq::ACTIVEMQ.install
        );
        let base = dir.join("activemq");
        for sub in ["data", "tmp"] {
            std::fs::create_dir_all(base.join(sub))?;
        }
        // The broker cannot be given port 0 and say which port it took: the kernel picks one here.
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let root = wsbench_harness::paths::project_root();
        let argv = activemq::broker(&portal::broker_config(&root), &base, port, HEAP_MB);
        let log = File::create(dir.join("broker.log"))?;
        let (process, mut stdout) = Process::piped(&argv, Some(log.try_clone()?))?;
        let mut out = log;
        // Its stdout goes to the log as it comes: a full pipe would stop it.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut out));
        let mut broker = Broker {
            process: Some(process),
            addr: format!("127.0.0.1:{port}"),
        };
        broker.wait(SocketAddr::from(([127, 0, 0, 1], port)), dir)?;
        Ok(broker)
    }

    fn wait(&mut self, addr: SocketAddr, dir: &Path) -> Result<()> {
        let started = Instant::now();
        let log = dir.join("broker.log");
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            let process = self.process.as_mut().context("the broker is gone")?;
            if let Some(status) = process.exited()? {
                bail!(
                    "the broker exited ({status}) before listening (see {})",
                    log.display()
                );
            }
            if started.elapsed() > LISTEN_TIMEOUT {
                bail!(
                    "the broker did not listen within {LISTEN_TIMEOUT:?} (see {})",
                    log.display()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        if let Some(p) = self.process.take() {
            if let Err(e) = p.stop(Duration::from_secs(20)) {
                eprintln!("gate --scenarios: stopping the broker: {e}");
            }
        }
    }
}
