//! What can be wrong with bytes that claim to be VOLANO chat packets.

/// A decoding or encoding failure. Every variant means "this peer does not speak the protocol": the caller
/// closes that connection (and only that one).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChatError {
    /// A packet id this codec does not know (or a VOLANO packet VolanoMark never sends).
    #[error("unknown or unsupported packet id {0}")]
    UnknownPacket(u16),
    /// The `i32` after the id is not request (1), indication (2), response (3) or confirm (4).
    #[error("packet kind {0} is not request, indication, response or confirm")]
    BadKind(i32),
    /// The packet would be longer than the decoder's `max_packet` bytes.
    #[error("packet longer than the {limit}-byte limit")]
    TooLarge { limit: usize },
    /// A string that is not Java modified UTF-8 (a stray continuation byte, a 4-byte lead, a truncated
    /// character).
    #[error("string is not valid modified UTF-8")]
    BadString,
    /// A list with a negative element count.
    #[error("negative list length {0}")]
    BadLength(i32),
    /// A string too long for `writeUTF` (more than 65 535 bytes once encoded).
    #[error("string of {0} bytes is longer than writeUTF's 65535")]
    StringTooLong(usize),
}

impl ChatError {
    /// True for size-limit violations (counted apart from other malformed input).
    pub fn is_too_large(&self) -> bool {
        matches!(
            self,
            ChatError::TooLarge { .. } | ChatError::StringTooLong(_)
        )
    }
}
