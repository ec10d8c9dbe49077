//! `ChatConfig`: the validated settings of the chat server, with VOLANO's benchmark defaults where it has one.

use std::time::Duration;

use anyhow::ensure;

/// Settings for [`super::run`]. Build it with `ChatConfig::default()` and adjust fields; `main` fills it from
/// the command line.
#[derive(Debug, Clone)]
pub struct ChatConfig {
    /// Most connections served at once; when reached the server stops accepting until one closes (VOLANO's
    /// "turnstile").
    pub max_connections: usize,
    /// A connection that sends nothing for this long gets a `Ping`; after a second such period it is closed
    /// (VOLANO: `server.timeout`, two strikes).
    pub idle_timeout: Duration,
    /// Packets that may wait to be written to one connection. A member whose queue is full when a message
    /// for it arrives is disconnected (and counted), so a slow or dead reader never stalls its room.
    pub send_queue: usize,
    /// Largest packet accepted from a client, in bytes; a longer one closes the connection.
    pub max_packet: usize,
    /// Most members in one room (`EnterRoom` beyond it is confirmed "room full").
    pub max_room_members: usize,
    /// Most rooms one connection may be in at once.
    pub max_rooms_per_connection: usize,
    /// Longest user name, in Java characters (VOLANO `length.username`).
    pub max_user_name: usize,
    /// Longest profile (VOLANO `length.profile`).
    pub max_profile: usize,
    /// Longest chat text (VOLANO `length.chattext`).
    pub max_text: usize,
    /// Longest room name (VOLANO `length.roomname`).
    pub max_room_name: usize,
}

impl ChatConfig {
    /// Default `max_connections` (as the HTTP server's).
    pub const DEFAULT_MAX_CONNECTIONS: usize = 16_384;
    /// Default `idle_timeout`: VOLANO's benchmark configuration (`server.timeout=10` minutes).
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);
    /// Default `send_queue`: far above the one message per room a paced VolanoMark run has in flight.
    pub const DEFAULT_SEND_QUEUE: usize = 1024;
    /// Default `max_packet`: room for the largest request VolanoMark sends (its `Access`) many times over.
    pub const DEFAULT_MAX_PACKET: usize = 8 * 1024;

    /// Checks the settings make sense together.
    pub fn validate(&self) -> anyhow::Result<()> {
        ensure!(
            self.max_connections >= 1,
            "chat: max_connections must be at least 1"
        );
        ensure!(
            !self.idle_timeout.is_zero(),
            "chat: idle_timeout must be positive"
        );
        ensure!(self.send_queue >= 1, "chat: send_queue must be at least 1");
        ensure!(
            self.max_packet >= 64,
            "chat: max_packet must be at least 64 bytes"
        );
        ensure!(
            self.max_room_members >= 1,
            "chat: max_room_members must be at least 1"
        );
        ensure!(
            self.max_rooms_per_connection >= 1,
            "chat: max_rooms_per_connection must be at least 1"
        );
        Ok(())
    }
}

impl Default for ChatConfig {
    fn default() -> Self {
        Self {
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            idle_timeout: Self::DEFAULT_IDLE_TIMEOUT,
            send_queue: Self::DEFAULT_SEND_QUEUE,
            max_packet: Self::DEFAULT_MAX_PACKET,
            max_room_members: 1024,
            max_rooms_per_connection: 32,
            max_user_name: 20,
            max_profile: 200,
            max_text: 200,
            max_room_name: 100,
        }
    }
}
