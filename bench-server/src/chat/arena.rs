//! Where a connection encodes outgoing packets: one large buffer carved into frozen `Bytes`, so encoding a
//! packet (then sharing it with every member of a room) allocates only when a block runs out.

use bytes::{Bytes, BytesMut};

/// Size of a fresh block: about 600 VolanoMark chat indications.
const BLOCK: usize = 64 * 1024;
/// A packet is started in a fresh block when less than this is left (it may still grow past the end).
const MIN_SPARE: usize = 1024;

#[derive(Debug, Default)]
pub(crate) struct Arena {
    buf: BytesMut,
}

impl Arena {
    /// Runs `write` on the spare end of the block and returns what it wrote, frozen.
    pub(crate) fn encode(&mut self, write: impl FnOnce(&mut BytesMut)) -> Bytes {
        if self.buf.capacity() < MIN_SPARE {
            self.buf = BytesMut::with_capacity(BLOCK);
        }
        write(&mut self.buf);
        self.buf.split().freeze()
    }
}
