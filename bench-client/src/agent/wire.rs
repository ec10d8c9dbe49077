//! What the run and the agent say to each other: the messages, one JSON object per line, each line
//! bounded, and the TLS session's keying material the token's proofs are bound to ([`crate::token`]).

use serde::{Deserialize, Serialize};
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt as _, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _,
};

pub use crate::token::{BadToken, Side, Token, TOKEN_ENV};
/// The longest line either end accepts.
pub(crate) const MAX_LINE: usize = 64 * 1024;
/// The TLS exporter label both ends derive their proofs from.
const EXPORTER_LABEL: &[u8] = b"EXPORTER-wsbench-agent";
/// The name the agent's certificate is made for (not a host name: the certificate is not what is trusted).
pub(crate) const SERVER_NAME: &str = "wsbench-agent";

/// The session's exported keying material (both ends of one TLS session get the same 32 bytes).
pub(crate) fn ekm_client(conn: &rustls::ClientConnection) -> Result<[u8; 32], rustls::Error> {
    conn.export_keying_material([0u8; 32], EXPORTER_LABEL, None)
}

pub(crate) fn ekm_server(conn: &rustls::ServerConnection) -> Result<[u8; 32], rustls::Error> {
    conn.export_keying_material([0u8; 32], EXPORTER_LABEL, None)
}

/// The run's first line: its proof, and which process to watch (else the agent's own choice).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hello {
    pub proof: String,
    #[serde(default)]
    pub pid: Option<u32>,
}

/// The agent's answer: its proof and what it watches.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Welcome {
    pub proof: String,
    pub version: String,
    pub hostname: Option<String>,
    pub kernel: Option<String>,
    pub cpus: Option<u32>,
    /// The process watched (`None`: none found, the host's figures only) and its command name.
    pub pid: Option<u32>,
    pub process: Option<String>,
}

/// Every later line of the run: one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Request {
    /// A [`crate::readings::Reading`] now.
    Read,
}

/// Writes one message as a line.
pub async fn send<T: Serialize>(w: &mut (impl AsyncWrite + Unpin), msg: &T) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(msg).map_err(std::io::Error::other)?;
    line.push(b'\n');
    w.write_all(&line).await?;
    w.flush().await
}

/// Reads one message; `None` at a clean end of the stream.
pub async fn receive<T: for<'de> Deserialize<'de>>(
    r: &mut (impl AsyncBufRead + Unpin),
) -> std::io::Result<Option<T>> {
    let mut line = Vec::new();
    let n = (&mut *r)
        .take(MAX_LINE as u64 + 1)
        .read_until(b'\n', &mut line)
        .await?;
    if n == 0 {
        return Ok(None);
    }
    if line.last() != Some(&b'\n') {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a line longer than {MAX_LINE} bytes, or cut short"),
        ));
    }
    serde_json::from_slice(&line)
        .map(Some)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}
