//! One STOMP connection to the broker: the handshake, a frame reader over the read half (bounded by
//! `stomp::Limits`), and writes of encoded frames. Shared by the portal and the back end.

use std::time::Duration;

use bench_proto::stomp::{self, Command, Frame, Limits, StompError};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;

/// Why the broker connection could not be made or went on no longer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LinkError {
    #[error("connecting to the broker at {addr}: {source}")]
    Connect {
        addr: String,
        source: std::io::Error,
    },
    #[error("the broker at {0} did not answer within {1:?}")]
    Timeout(String, Duration),
    #[error("the broker refused: {0}")]
    Refused(String),
    #[error("the broker spoke no STOMP: {0}")]
    Protocol(#[from] StompError),
    #[error("the broker sent {0} where CONNECTED was expected")]
    Unexpected(Command),
    #[error("the broker closed the connection")]
    Closed,
    #[error("the broker connection failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Frames read from the broker, one at a time.
#[derive(Debug)]
pub(crate) struct Reader {
    half: OwnedReadHalf,
    buf: Vec<u8>,
    limits: Limits,
}

impl Reader {
    /// The next frame; `Err(Closed)` at the end of the stream.
    pub(crate) async fn next(&mut self) -> Result<Frame, LinkError> {
        loop {
            if let Some(frame) = self.buffered()? {
                return Ok(frame);
            }
            self.fill().await?;
        }
    }

    /// A frame already buffered, if there is a whole one.
    pub(crate) fn buffered(&mut self) -> Result<Option<Frame>, LinkError> {
        match stomp::decode(&self.buf, &self.limits)? {
            Some((frame, used)) => {
                self.buf.drain(..used);
                Ok(Some(frame))
            }
            None => Ok(None),
        }
    }

    /// Reads what the broker has sent (at least a byte).
    pub(crate) async fn fill(&mut self) -> Result<(), LinkError> {
        self.buf.reserve(16 * 1024);
        if self.half.read_buf(&mut self.buf).await? == 0 {
            return Err(LinkError::Closed);
        }
        Ok(())
    }
}

/// Connects to `addr`, says CONNECT (STOMP 1.2, no heart-beats) and waits for CONNECTED, all within
/// `timeout`. An ERROR frame instead is `Refused` with the broker's message.
pub(crate) async fn connect(
    addr: &str,
    timeout: Duration,
) -> Result<(Reader, OwnedWriteHalf), LinkError> {
    tokio::time::timeout(timeout, handshake(addr))
        .await
        .map_err(|_| LinkError::Timeout(addr.to_owned(), timeout))?
}

async fn handshake(addr: &str) -> Result<(Reader, OwnedWriteHalf), LinkError> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|source| LinkError::Connect {
            addr: addr.to_owned(),
            source,
        })?;
    stream.set_nodelay(true)?;
    let (read, mut write) = stream.into_split();
    let mut out = Vec::new();
    Frame::new(Command::Connect)
        .with("accept-version", "1.2")
        .with("host", "/")
        .with("heart-beat", "0,0")
        .encode(&mut out);
    write.write_all(&out).await?;
    let mut reader = Reader {
        half: read,
        buf: Vec::with_capacity(16 * 1024),
        limits: Limits::default(),
    };
    let first = reader.next().await?;
    match first.command {
        Command::Connected => Ok((reader, write)),
        Command::Error => Err(LinkError::Refused(error_text(&first))),
        other => Err(LinkError::Unexpected(other)),
    }
}

/// What an ERROR frame says: its `message` header, and the start of its body.
pub(crate) fn error_text(frame: &Frame) -> String {
    let body = String::from_utf8_lossy(&frame.body[..frame.body.len().min(200)]);
    match frame.get("message") {
        Some(m) if body.trim().is_empty() => m.to_owned(),
        Some(m) => format!("{m}: {}", body.trim()),
        None => body.trim().to_owned(),
    }
}

/// Keeps trying [`connect`] until it succeeds or `wait` has passed (a broker starting up refuses at
/// first), then returns the last error.
pub(crate) async fn connect_within(
    addr: &str,
    timeout: Duration,
    wait: Duration,
) -> Result<(Reader, OwnedWriteHalf), LinkError> {
    let give_up = tokio::time::Instant::now() + wait;
    let mut pause = Duration::from_millis(50);
    loop {
        match connect(addr, timeout).await {
            Ok(link) => return Ok(link),
            Err(e) if tokio::time::Instant::now() + pause >= give_up => return Err(e),
            Err(e) => tracing::debug!("broker not reachable yet: {e}"),
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(1));
    }
}
