//! The arena that parsed messages borrow from: values that need no unescaping point into the request body,
//! and the rest (decoded binaries, text with references expanded, the item slices) go into a [`Bump`] the
//! caller owns and resets, so that a call allocates nothing on the heap once the arena has grown to fit.

use std::cell::Cell;

pub use bumpalo::Bump;

/// An arena that grew past this many bytes (a big or hostile request) is freed after its call rather than
/// kept for the next one, so that one large request does not pin its memory on the thread.
pub const KEEP_BYTES: usize = 256 * 1024;

thread_local! {
    static SCRATCH: Cell<Option<Bump>> = const { Cell::new(None) };
}

/// Runs `work` with this thread's scratch arena, then empties it (keeping its memory for the next call unless it
/// grew past [`KEEP_BYTES`]). A nested call gets an arena of its own.
pub fn with_scratch<R>(work: impl FnOnce(&Bump) -> R) -> R {
    let mut arena = SCRATCH.take().unwrap_or_default();
    let result = work(&arena);
    if arena.allocated_bytes() <= KEEP_BYTES {
        arena.reset();
        SCRATCH.set(Some(arena));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What one call puts in the arena is gone by the next, whose memory is the same; a big call's is freed.
    #[test]
    fn the_scratch_arena_is_reset_and_kept_unless_it_grew_big() {
        let first = with_scratch(|a| a.alloc_str("abc").as_ptr() as usize);
        let again = with_scratch(|a| a.alloc_str("xyz").as_ptr() as usize);
        assert_eq!(first, again);
        with_scratch(|a| {
            a.alloc_slice_fill_copy(2 * KEEP_BYTES, 0u8);
        });
        assert!(SCRATCH.take().is_none());
        let nested = with_scratch(|a| {
            let outer = a.alloc(1u8) as *const u8 as usize;
            let inner = with_scratch(|b| b.alloc(2u8) as *const u8 as usize);
            outer != inner
        });
        assert!(nested);
    }
}
