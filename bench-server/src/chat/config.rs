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
    /// Bytes that may wait to be written to one connection. A member whose outbox would overflow when a
    /// packet for it arrives is disconnected (and counted), so a slow or dead reader never stalls its room.
    /// A single packet to an empty outbox always fits (the largest is an `EnterRoom` confirm listing the
    /// room: at most `max_room_members` entries).
    pub send_buffer: usize,
    /// Bytes that may wait to be written to all connections together. When it is spent, a member that
    /// already has bytes waiting (or a packet over 4 KiB coming) is disconnected as a slow reader; a
    /// member with an empty outbox still gets small packets, so the total may exceed this by up to
    /// 4 KiB per connection.
    pub send_memory: usize,
    /// Largest packet accepted from a client, in bytes; a longer one closes the connection.
    pub max_packet: usize,
    /// A packet begun must be complete within this long (bytes trickling in do not extend it), or the
    /// connection is closed: a slowloris cannot hold a connection slot with a packet that never ends.
    pub packet_timeout: Duration,
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
    /// How a room sends each chat message to its members.
    pub fanout: Fanout,
}

/// How a room sends a chat message to its members (`--fanout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fanout {
    /// io_uring where the kernel allows it (see [`Fanout::resolve`]), else `Writes`.
    Auto,
    /// One io_uring submission per message: a `send` per member, all in one system call.
    Uring,
    /// One `write` system call per member: the default, as io_uring measured no faster (on 6.18 over
    /// loopback it saves 18 of 22 system calls per message but not CPU: entering the kernel was 2.6 % of the
    /// server's time, the TCP path per delivery nearly all the rest).
    #[default]
    Writes,
}

/// What [`Fanout::resolve`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// `Uring` or `Writes`.
    pub fanout: Fanout,
    /// Whether this process may use io_uring: `Ok`, or why not in one word (`EPERM`: refused, as Docker's
    /// default seccomp profile does; `ENOSYS`: no io_uring in this kernel; `disabled-by-sysctl`).
    pub io_uring: Result<(), String>,
}

impl Fanout {
    /// Tries io_uring (whatever the choice, so that the READY line says whether it was allowed) and picks
    /// the path: `Auto` falls back to `Writes` when io_uring is refused; `Uring` then fails.
    pub fn resolve(self) -> anyhow::Result<Resolved> {
        let io_uring = super::uring::probe();
        let fanout = match (self, &io_uring) {
            (Fanout::Writes, _) | (Fanout::Auto, Err(_)) => Fanout::Writes,
            (Fanout::Uring | Fanout::Auto, Ok(())) => Fanout::Uring,
            (Fanout::Uring, Err(why)) => {
                anyhow::bail!("--fanout uring: this kernel refuses io_uring ({why})")
            }
        };
        Ok(Resolved { fanout, io_uring })
    }

    /// The name `--fanout` takes.
    pub fn name(self) -> &'static str {
        match self {
            Fanout::Auto => "auto",
            Fanout::Uring => "uring",
            Fanout::Writes => "writes",
        }
    }
}

impl std::str::FromStr for Fanout {
    type Err = String;

    fn from_str(s: &str) -> Result<Fanout, String> {
        match s {
            "auto" => Ok(Fanout::Auto),
            "uring" => Ok(Fanout::Uring),
            "writes" => Ok(Fanout::Writes),
            _ => Err(format!("{s}: expected auto, uring or writes")),
        }
    }
}

impl Resolved {
    /// The READY line's fan-out words for it: (`uring`, `ok`), (`writes`, `EPERM`).
    pub fn ready_words(&self) -> (Option<String>, Option<String>) {
        let allowed = match &self.io_uring {
            Ok(()) => "ok",
            Err(why) => why,
        };
        (
            Some(self.fanout.name().to_owned()),
            Some(allowed.to_owned()),
        )
    }
}

impl ChatConfig {
    /// Default `max_connections` (as the HTTP server's).
    pub const DEFAULT_MAX_CONNECTIONS: usize = 16_384;
    /// Default `idle_timeout`: VOLANO's benchmark configuration (`server.timeout=10` minutes).
    pub(crate) const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);
    /// Default `send_buffer`: hundreds of VolanoMark messages, far above the one per room a paced run
    /// has in flight.
    pub const DEFAULT_SEND_BUFFER: usize = 64 * 1024;
    /// Default `send_memory`.
    pub const DEFAULT_SEND_MEMORY: usize = 32 * 1024 * 1024;
    /// Default `packet_timeout`.
    pub(crate) const DEFAULT_PACKET_TIMEOUT: Duration = Duration::from_secs(30);
    /// Default `max_packet`: room for the largest request VolanoMark sends (its `Access`) many times over.
    pub(crate) const DEFAULT_MAX_PACKET: usize = 8 * 1024;

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
        ensure!(
            self.send_buffer >= 1024,
            "chat: send_buffer must be at least 1024 bytes"
        );
        ensure!(
            self.send_memory >= self.send_buffer,
            "chat: send_memory must be at least send_buffer"
        );
        ensure!(
            !self.packet_timeout.is_zero(),
            "chat: packet_timeout must be positive"
        );
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
            send_buffer: Self::DEFAULT_SEND_BUFFER,
            send_memory: Self::DEFAULT_SEND_MEMORY,
            max_packet: Self::DEFAULT_MAX_PACKET,
            packet_timeout: Self::DEFAULT_PACKET_TIMEOUT,
            max_room_members: 1024,
            max_rooms_per_connection: 32,
            max_user_name: 20,
            max_profile: 200,
            max_text: 200,
            max_room_name: 100,
            fanout: Fanout::default(),
        }
    }
}
