//! The lean path's wire code alone, for the instruction-count benchmark (`benches/icount.rs`): encoding a
//! request and reading a response from a buffer, without sockets. Not part of the client's API.

pub use super::lean::wire::{Encoded, Reader, Response, WireError, MAX_BODY, MAX_HEAD};
