//! Primitive reads and writes of Java's `DataInput`/`DataOutput`: big-endian integers, booleans, `writeUTF`
//! strings and `i32`-counted lists, with the decoder's two outcomes kept apart: "not all here yet" and "bad".

use bytes::BufMut;

use super::error::ChatError;
use super::jstr::JStr;

/// Why a read stopped.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The buffer ends inside the packet: wait for more bytes.
    Incomplete,
    /// The bytes are not a valid packet.
    Bad(ChatError),
}

impl From<ChatError> for Stop {
    fn from(e: ChatError) -> Stop {
        Stop::Bad(e)
    }
}

/// A cursor over one packet's bytes that refuses to grow the packet past `limit` bytes.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    limit: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], limit: usize) -> Reader<'a> {
        Reader { buf, pos: 0, limit }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// The next `n` bytes. A length field that points past the limit fails at once, without waiting for
    /// the bytes to arrive.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], Stop> {
        let end = self.pos + n;
        if end > self.limit {
            return Err(Stop::Bad(ChatError::TooLarge { limit: self.limit }));
        }
        let bytes = self.buf.get(self.pos..end).ok_or(Stop::Incomplete)?;
        self.pos = end;
        Ok(bytes)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, Stop> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn bool(&mut self) -> Result<bool, Stop> {
        Ok(self.u8()? != 0)
    }

    pub(crate) fn u16(&mut self) -> Result<u16, Stop> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    pub(crate) fn i32(&mut self) -> Result<i32, Stop> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn utf(&mut self) -> Result<JStr<'a>, Stop> {
        let len = usize::from(self.u16()?);
        Ok(JStr::new(self.take(len)?)?)
    }

    /// An `i32` count of elements each at least `min_size` bytes long, refused when negative, and refused
    /// at once (not when the bytes fail to come) when that many cannot fit in the packet's limit: a peer
    /// announcing 2^31-1 elements must not hold the connection until a timeout. Callers must not
    /// preallocate from it beyond what the limit allows.
    pub(crate) fn count(&mut self, min_size: usize) -> Result<usize, Stop> {
        let n = self.i32()?;
        let n = usize::try_from(n).map_err(|_| Stop::Bad(ChatError::BadLength(n)))?;
        if n.saturating_mul(min_size) > self.limit - self.pos {
            return Err(Stop::Bad(ChatError::TooLarge { limit: self.limit }));
        }
        Ok(n)
    }

    /// A list of `count` strings (each at least its two-byte length).
    pub(crate) fn utf_list(&mut self) -> Result<Vec<JStr<'a>>, Stop> {
        let n = self.count(2)?;
        let mut out = Vec::with_capacity(n.min((self.limit - self.pos) / 2));
        for _ in 0..n {
            out.push(self.utf()?);
        }
        Ok(out)
    }
}

pub(crate) fn put_utf(out: &mut impl BufMut, s: JStr<'_>) {
    let bytes = s.as_bytes();
    // JStr holds at most 65 535 bytes, so the length always fits.
    out.put_u16(bytes.len() as u16);
    out.put_slice(bytes);
}

pub(crate) fn put_utf_list(out: &mut impl BufMut, list: &[JStr<'_>]) {
    out.put_i32(list.len() as i32);
    for s in list {
        put_utf(out, *s);
    }
}

pub(crate) fn put_bool(out: &mut impl BufMut, b: bool) {
    out.put_u8(u8::from(b));
}
