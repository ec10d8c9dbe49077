//! Packet ids on the wire (VolanoChat numbering, no VolanoMark id offset).

/// `Access`: the first packet of a connection.
pub(crate) const ACCESS: u16 = 1;
/// `StreamableError`: an error report (text).
pub const ERROR: u16 = 102;
/// `Chat`: a message to a room.
pub const CHAT: u16 = 203;
/// `EnterRoom`.
pub const ENTER_ROOM: u16 = 206;
/// `ExitRoom`.
pub const EXIT_ROOM: u16 = 208;
/// `Ping`: keep-alive.
pub(crate) const PING: u16 = 213;
/// `RoomList`: the names of the rooms, optionally filtered.
pub(crate) const ROOM_LIST: u16 = 215;
