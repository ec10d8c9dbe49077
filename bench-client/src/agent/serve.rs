//! The agent's side: a TLS listener that answers authenticated runs with readings of its host's /proc.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::io::{AsyncWriteExt as _, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tokio_rustls::TlsAcceptor;

use super::wire::{self, Hello, Request, Side, Token, Welcome};
use crate::cpu::CpuTime;
use crate::readings::Proc;

/// The time a run has to connect and prove itself.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// Runs served at once; more wait for a slot (a run holds one for its whole measured interval).
const MAX_SESSIONS: usize = 32;

/// Which process the agent watches when a run does not name one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// None: the host's figures only.
    Nothing,
    Pid(u32),
    /// The process listening on this TCP port (looked up at each run, so a restarted server is found).
    Port(u16),
}

#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub token: Token,
    pub target: Target,
    /// The /proc to read (`/proc`, or the host's mounted into a container).
    pub proc: Proc,
}

/// Serves runs on `listener` until `shutdown` turns true.
pub async fn serve(
    listener: TcpListener,
    config: AgentConfig,
    mut shutdown: watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let acceptor = acceptor()?;
    let config = Arc::new(config);
    let slots = Arc::new(Semaphore::new(MAX_SESSIONS));
    loop {
        let (tcp, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!("agent: accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = shutdown.changed() => return Ok(()),
        };
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return Ok(());
        };
        let (acceptor, config) = (acceptor.clone(), config.clone());
        tokio::spawn(async move {
            if let Err(e) = session(tcp, &acceptor, &config).await {
                tracing::warn!("agent: {peer}: {e:#}");
            }
            drop(slot);
        });
    }
}

/// A certificate of its own, made now: it only keeps the session private; the token proves who is who.
fn acceptor() -> anyhow::Result<TlsAcceptor> {
    let made = rcgen::generate_simple_self_signed(vec![wire::SERVER_NAME.to_owned()])
        .context("making the agent's certificate")?;
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(made.key_pair.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .context("TLS protocol versions")?
        .with_no_client_auth()
        .with_single_cert(vec![made.cert.der().clone()], key)
        .context("the agent's certificate")?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

async fn session(
    tcp: TcpStream,
    acceptor: &TlsAcceptor,
    config: &AgentConfig,
) -> anyhow::Result<()> {
    let _ = tcp.set_nodelay(true);
    let (mut tls, hello) = tokio::time::timeout(HELLO_TIMEOUT, async {
        let tls = acceptor.accept(tcp).await.context("TLS")?;
        let mut tls = BufReader::new(tls);
        let hello: Option<Hello> = wire::receive(&mut tls).await?;
        anyhow::Ok((tls, hello))
    })
    .await
    .context("no hello within 10 s")??;
    let ekm = wire::ekm_server(tls.get_ref().get_ref().1)?;
    let Some(hello) = hello.filter(|h| config.token.verify(Side::Run, &ekm, &h.proof)) else {
        // Not a word to a peer that cannot prove it holds the token: the session ends.
        let _ = tls.get_mut().shutdown().await;
        anyhow::bail!("refused: no valid proof of the token");
    };
    let proc = config.proc.clone();
    let target = config.target;
    let pid = match hello.pid {
        Some(pid) => Some(pid),
        None => {
            tokio::task::spawn_blocking(move || match target {
                Target::Nothing => None,
                Target::Pid(pid) => Some(pid),
                Target::Port(port) => proc.listener(port),
            })
            .await?
        }
    };
    let welcome = welcome(config, pid, config.token.proof(Side::Agent, &ekm));
    wire::send(&mut tls, &welcome).await?;
    while let Some(Request::Read) = wire::receive(&mut tls).await? {
        let proc = config.proc.clone();
        let reading = tokio::task::spawn_blocking(move || {
            let own = CpuTime::now();
            proc.reading(pid, own.user_s + own.sys_s)
        })
        .await?;
        wire::send(&mut tls, &reading).await?;
    }
    Ok(())
}

fn welcome(config: &AgentConfig, pid: Option<u32>, proof: String) -> Welcome {
    let proc = &config.proc;
    Welcome {
        proof,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        hostname: proc.sys("kernel/hostname"),
        kernel: proc.sys("kernel/osrelease"),
        cpus: proc.cpus(),
        pid,
        process: pid.and_then(|p| proc.comm(p)),
    }
}
