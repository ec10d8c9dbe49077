//! The VOLANO chat protocol, the subset the VolanoMark client (`COM.volano.chat.test.Mark`) speaks: framing,
//! packets and Java strings. No I/O: [`decode`] takes bytes, `encode` appends bytes.
//!
//! Facts of the wire format (from the public VOLANO sources, reimplemented here):
//! - A connection carries a stream of packets in both directions, with no preamble and no length prefix:
//!   each packet is its `u16` id, its `i32` [`Kind`], then its fields, all big-endian (Java `DataOutputStream`).
//!   Where a packet ends is known only by parsing its fields, so [`decode`] says "incomplete" until a whole
//!   packet is buffered, and bounds how much it waits for (`max_packet`).
//! - Strings are Java `writeUTF`: a `u16` byte length, then modified UTF-8 ([`JStr`]).
//! - The client opens with an `Access` request; the server answers with an `Access` confirm. Requests go
//!   client → server; a *confirm* answers the requester; an *indication* tells the other members of a room
//!   what someone did (entered, chatted, left). A `Ping` request from the server is a keep-alive; clients
//!   answer with a `Ping` response.

mod error;
pub mod id;
mod jstr;
mod packet;
mod wire;

pub use error::ChatError;
pub use jstr::{JStr, JString};
pub use packet::{
    decode, Access, Chat, EnterRoom, ErrorPacket, ExitRoom, Kind, Packet, RoomList, UserInfo,
};

/// The text every VolanoMark user sends: 60 characters. The receiving side's decoder trims it (as Java's
/// does), so a delivered message reads [`MARK_TEXT_TRIMMED`].
pub const MARK_TEXT: &str = "123456789 123456789 123456789 123456789 123456789 123456789 ";

/// [`MARK_TEXT`] as a receiver sees it, after Java's `String.trim()` (59 characters).
pub const MARK_TEXT_TRIMMED: &str = "123456789 123456789 123456789 123456789 123456789 123456789";

/// Digits of the message number at the start of a [`numbered_text`].
pub const NUMBER_DIGITS: usize = 9;

/// The text bench-client sends as a user's `n`-th message (from 1; at most 999,999,999): [`MARK_TEXT`] with
/// its first nine characters the number, zero-padded. The same 60 characters as VolanoMark's, so the load
/// is the same, but each receiver can tell a sender's messages apart (VolanoMark's text never changes).
pub fn numbered_text(n: u32) -> [u8; MARK_TEXT.len()] {
    let mut text = [0; MARK_TEXT.len()];
    text.copy_from_slice(MARK_TEXT.as_bytes());
    write_number(&mut text[..NUMBER_DIGITS], n);
    text
}

/// Writes `n` into `digits` as zero-padded decimal (its low digits, when it has more).
pub fn write_number(digits: &mut [u8], mut n: u32) {
    for d in digits.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// The number of a text [`numbered_text`] wrote, as a receiver sees it (trimmed, [`MARK_TEXT_TRIMMED`]'s
/// length); `None` for any other text.
pub fn text_number(text: &[u8]) -> Option<u32> {
    let (digits, rest) = text.split_at_checked(NUMBER_DIGITS)?;
    if rest != &MARK_TEXT_TRIMMED.as_bytes()[NUMBER_DIGITS..] {
        return None;
    }
    digits.iter().try_fold(0u32, |n, &d| {
        d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
    })
}

/// The applet version VolanoMark 2.13 sends in its `Access` request.
pub const APPLET_VERSION: &str = "2.13.4";

/// `Access` confirm results.
pub mod access_result {
    pub const OKAY: i32 = 1;
    pub const HOST_DENIED: i32 = 2;
    pub const DOCUMENT_DENIED: i32 = 3;
    pub const VERSION_DENIED: i32 = 4;
}

/// `EnterRoom` confirm results.
pub mod enter_result {
    pub const OKAY: i32 = 1;
    pub const ROOM_FULL: i32 = 2;
    pub const NAME_TAKEN: i32 = 3;
    pub const NO_SUCH_ROOM: i32 = 5;
}

/// The room type of an ordinary public room, in an `EnterRoom` confirm.
pub const ROOM_TYPE_NORMAL: i32 = 1;

#[cfg(test)]
mod numbered {
    use super::*;

    #[test]
    fn a_numbered_text_is_marks_length_and_reads_back() {
        for n in [1, 42, 999_999_999] {
            let text = numbered_text(n);
            assert_eq!(text.len(), MARK_TEXT.len());
            let trimmed = std::str::from_utf8(&text).unwrap().trim();
            assert_eq!(trimmed.len(), MARK_TEXT_TRIMMED.len());
            assert_eq!(text_number(trimmed.as_bytes()), Some(n));
        }
        assert_eq!(&numbered_text(42)[..10], b"000000042 ");
        assert_eq!(text_number(MARK_TEXT_TRIMMED.as_bytes()), Some(123_456_789));
        assert_eq!(text_number(b"00000004x 123"), None);
        assert_eq!(text_number(b"000000042"), None);
        let mut changed = numbered_text(7);
        changed[30] = b'x';
        assert_eq!(
            text_number(std::str::from_utf8(&changed).unwrap().trim().as_bytes()),
            None
        );
    }
}
