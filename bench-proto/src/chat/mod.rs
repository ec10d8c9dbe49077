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
