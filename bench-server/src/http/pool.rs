//! Reused byte buffers: a small per-thread pool of `Vec<u8>` so request bodies and serialised responses do
//! not pay for allocation and growth on every request.
//!
//! A `PooledBuf` goes back to the pool of whichever thread drops it; tasks may move between worker threads,
//! which only moves buffers between pools. No locks: each pool is thread-local.

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};

use hyper::body::Buf;

/// Buffers kept per thread; more are freed.
const MAX_POOLED: usize = 16;
/// Buffers that grew beyond this are freed rather than kept (a rare 10 MB response must not pin 10 MB):
/// a pool holds at most 2 MiB per thread, whatever the traffic was.
const MAX_POOLED_CAPACITY: usize = 128 * 1024;

thread_local! {
    static POOL: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// A byte buffer from the pool; returns to it on drop. Also a [`Buf`] (reading from `pos`), so a response
/// can hand it to hyper without copying, and hyper's drop after writing recycles it.
#[derive(Debug)]
pub(crate) struct PooledBuf {
    buf: Vec<u8>,
    pos: usize,
}

impl PooledBuf {
    /// An empty buffer, reused if the pool has one.
    pub(crate) fn take() -> Self {
        let buf = POOL.with(|p| p.borrow_mut().pop()).unwrap_or_default();
        Self { buf, pos: 0 }
    }
}

impl Deref for PooledBuf {
    type Target = Vec<u8>;
    fn deref(&self) -> &Vec<u8> {
        &self.buf
    }
}

impl DerefMut for PooledBuf {
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }
}

impl Buf for PooledBuf {
    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn chunk(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    fn advance(&mut self, cnt: usize) {
        assert!(
            cnt <= self.remaining(),
            "advance past the end of a PooledBuf"
        );
        self.pos += cnt;
    }
}

impl Drop for PooledBuf {
    fn drop(&mut self) {
        let mut buf = std::mem::take(&mut self.buf);
        if buf.capacity() == 0 || buf.capacity() > MAX_POOLED_CAPACITY {
            return;
        }
        buf.clear();
        // `try_with`: during thread teardown the pool may already be gone; then the buffer is just freed.
        let _ = POOL.try_with(|p| {
            if let Ok(mut p) = p.try_borrow_mut() {
                if p.len() < MAX_POOLED {
                    p.push(buf);
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_reused_and_cleared() {
        let mut a = PooledBuf::take();
        a.extend_from_slice(b"hello");
        let ptr = a.as_ptr();
        drop(a);
        let b = PooledBuf::take();
        assert!(b.is_empty());
        assert_eq!(b.as_ptr(), ptr);
    }

    #[test]
    fn buf_reads_from_position() {
        let mut a = PooledBuf::take();
        a.extend_from_slice(b"abcdef");
        a.advance(2);
        assert_eq!(a.remaining(), 4);
        assert_eq!(a.chunk(), b"cdef");
    }

    #[test]
    fn huge_buffers_are_not_kept() {
        let mut a = PooledBuf::take();
        a.reserve(MAX_POOLED_CAPACITY + 1);
        let ptr = a.as_ptr();
        drop(a);
        let b = PooledBuf::take();
        assert!(b.capacity() == 0 || b.as_ptr() != ptr);
    }
}
