//! Where a connection encodes outgoing packets: a buffer carved into frozen `Bytes`, so encoding a packet
//! (then sharing it with every member of a room) allocates only when a block runs out. Blocks start small,
//! since most connections send little, and double for the busy ones.

use bytes::{Bytes, BytesMut};

/// The first block: a connection that only enters and listens never needs more.
const FIRST_BLOCK: usize = 2 * 1024;
/// Blocks double up to this (about 600 VolanoMark chat indications).
const MAX_BLOCK: usize = 64 * 1024;
/// A packet is started in a fresh block when less than this is left (it may still grow past the end).
const MIN_SPARE: usize = 512;

#[derive(Debug, Default)]
pub(crate) struct Arena {
    buf: BytesMut,
    /// Size of the next block.
    next: usize,
}

impl Arena {
    /// Runs `write` on the spare end of the block and returns what it wrote, frozen.
    pub(crate) fn encode(&mut self, write: impl FnOnce(&mut BytesMut)) -> Bytes {
        if self.buf.capacity() < MIN_SPARE {
            let size = self.next.clamp(FIRST_BLOCK, MAX_BLOCK);
            self.buf = BytesMut::with_capacity(size);
            self.next = size * 2;
        }
        write(&mut self.buf);
        self.buf.split().freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_share_blocks_that_grow() {
        let mut arena = Arena::default();
        let a = arena.encode(|b| b.extend_from_slice(&[1; 100]));
        let b = arena.encode(|b| b.extend_from_slice(&[2; 100]));
        assert_eq!((&a[..], &b[..]), (&[1; 100][..], &[2; 100][..]));
        // Same block: b starts where a ended.
        assert_eq!(a.as_ptr().wrapping_add(100), b.as_ptr());
        let big = arena.encode(|b| b.extend_from_slice(&[3; 10_000]));
        assert_eq!(big.len(), 10_000);
        for _ in 0..100 {
            assert_eq!(arena.encode(|b| b.extend_from_slice(&[4; 100])).len(), 100);
        }
        assert!(arena.next > 2 * FIRST_BLOCK);
    }
}
