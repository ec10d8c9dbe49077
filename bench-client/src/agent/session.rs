//! The run's side: one authenticated connection to an agent, asked for readings.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use rustls::pki_types::ServerName;
use tokio::io::BufReader;
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use super::wire::{self, Hello, Request, Side, Token, Welcome};
use crate::readings::Reading;

/// How long connecting and the proofs may take, and then each reading.
const TIMEOUT: Duration = Duration::from_secs(10);

/// A connection to an agent, its proof checked.
#[derive(Debug)]
pub struct Session {
    stream: BufReader<TlsStream<TcpStream>>,
    /// The agent's address as given.
    pub addr: String,
    pub welcome: Welcome,
}

impl Session {
    /// Connects to the agent at `addr` (`HOST:PORT`), proves the token and checks the agent's proof;
    /// `pid`: the process to watch, else the agent's own choice.
    pub async fn connect(addr: &str, token: &Token, pid: Option<u32>) -> anyhow::Result<Session> {
        tokio::time::timeout(TIMEOUT, Session::open(addr, token, pid))
            .await
            .with_context(|| format!("the agent at {addr} did not answer within 10 s"))?
            .with_context(|| format!("the agent at {addr}"))
    }

    async fn open(addr: &str, token: &Token, pid: Option<u32>) -> anyhow::Result<Session> {
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host(addr)
            .await
            .with_context(|| format!("{addr:?} is not HOST:PORT, or the name is unknown"))?
            .collect();
        let tcp = TcpStream::connect(&addrs[..]).await.context("connecting")?;
        let _ = tcp.set_nodelay(true);
        let tls = connector()?
            .connect(ServerName::try_from(wire::SERVER_NAME)?, tcp)
            .await
            .context("TLS")?;
        let ekm = wire::ekm_client(tls.get_ref().1)?;
        let mut stream = BufReader::new(tls);
        let hello = Hello {
            proof: token.proof(Side::Run, &ekm),
            pid,
        };
        wire::send(&mut stream, &hello).await?;
        let refused = "it closed the connection: it holds another token (WSBENCH_AGENT_TOKEN)";
        let welcome: Welcome = match wire::receive(&mut stream).await {
            Ok(Some(w)) => w,
            Ok(None) => anyhow::bail!(refused),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => anyhow::bail!(refused),
            Err(e) => return Err(e.into()),
        };
        anyhow::ensure!(
            token.verify(Side::Agent, &ekm, &welcome.proof),
            "it could not prove it holds the token: not the agent started for this run"
        );
        Ok(Session {
            stream,
            addr: addr.to_owned(),
            welcome,
        })
    }

    /// A reading now.
    pub async fn read(&mut self) -> anyhow::Result<Reading> {
        tokio::time::timeout(TIMEOUT, async {
            wire::send(&mut self.stream, &Request::Read).await?;
            wire::receive(&mut self.stream)
                .await?
                .context("the agent closed the connection")
        })
        .await
        .context("the agent did not answer within 10 s")?
    }
}

/// TLS 1.3 accepting the agent's certificate, whatever it is (the token's proofs say who is who), but
/// checking the handshake's signatures.
fn connector() -> anyhow::Result<TlsConnector> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .context("TLS protocol versions")?
        .dangerous()
        .with_custom_certificate_verifier(crate::engine::any_certificate(provider))
        .with_no_client_auth();
    Ok(TlsConnector::from(Arc::new(config)))
}
