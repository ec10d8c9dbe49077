//! The lean HTTP/1.1 path of the load loop: a plain TCP connection, the request written with one write from
//! bytes encoded once, the response read into the caller's reused buffer and framed by [`wire::Reader`].
//! No task besides the call's, no channel, no allocation per call once the buffer has grown to the response.
//! Keep-alive and close only; no pipelining (one request in flight per connection, as wrk); anything else
//! (TLS, HTTP/2, a request it cannot encode) goes through hyper instead.

mod head;
pub(super) mod wire;

use std::io;
use std::ops::Range;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, Interest};
use tokio::net::TcpStream;
use tokio::time::Instant;

pub(super) use wire::{Encoded, WireError};

/// The least free room a read is given (the whole of a small response in one read).
const MIN_READ: usize = 8 * 1024;
/// The most room reserved ahead for a body whose length is announced (a hostile length is not allocated).
const MAX_RESERVE: usize = 1 << 20;

/// A connection of the lean path.
#[derive(Debug)]
pub(in crate::engine) struct Link {
    stream: TcpStream,
    reusable: bool,
}

impl Link {
    pub(in crate::engine) fn new(stream: TcpStream) -> Link {
        Link {
            stream,
            reusable: true,
        }
    }

    /// The last read took less than it was offered, so the socket was empty then: forget tokio's readiness
    /// now, so that the next call's first read waits for epoll instead of failing with EAGAIN (a system call
    /// per call saved, as wrk saves it). Safe: readiness is only cleared if no event came in since the read
    /// (tokio compares its tick), and any byte arriving later is a new edge-triggered event.
    fn drained(&self) {
        let _ = self.stream.try_io(Interest::READABLE, || {
            Err::<(), _>(io::ErrorKind::WouldBlock.into())
        });
    }

    /// Whether the last response left the connection fit for another request.
    pub(in crate::engine) fn reusable(&self) -> bool {
        self.reusable
    }

    /// Sends `req` and reads its response into `buf` (cleared first): the status, where the body lies, and
    /// when the first bytes were read if more reads were needed (`None`: the whole response came at once).
    pub(in crate::engine) async fn exchange(
        &mut self,
        req: &Encoded,
        buf: &mut Vec<u8>,
    ) -> Result<(u16, Range<usize>, Option<Instant>), WireError> {
        // Until a complete response says otherwise (a call cut short by its timeout leaves it false).
        self.reusable = false;
        // One non-blocking send first: a request fits the socket buffer nearly always, and then the async
        // write path (readiness, its future) is not entered at all.
        let sent = match self.stream.try_write(&req.bytes) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
            Err(e) => return Err(e.into()),
        };
        if sent < req.bytes.len() {
            self.stream.write_all(&req.bytes[sent..]).await?;
        }
        buf.clear();
        let mut reader = wire::Reader::new(req.head);
        let mut first = None;
        loop {
            let room = reader.needed(buf.len()).clamp(MIN_READ, MAX_RESERVE);
            buf.reserve(room);
            let room = buf.capacity() - buf.len();
            let n = self.stream.read_buf(buf).await?;
            let done = if n == 0 {
                Some(reader.eof(buf)?)
            } else {
                reader.advance(buf)?
            };
            if let Some(resp) = done {
                self.reusable = resp.reusable;
                if n < room {
                    self.drained();
                }
                return Ok((resp.status, resp.body, first));
            }
            if first.is_none() && n > 0 {
                first = Some(Instant::now());
            }
        }
    }
}
