//! What a server does: how it relays a room's chat, and the one thing it does wrong on purpose.

use std::fmt;
use std::str::FromStr;

/// How a room's chat reaches its members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Relay {
    /// Under the room's lock, as bench-server does: every member sees the room's messages in one order.
    RoomLock,
    /// Each sender's messages relayed in the order sent, without a room lock, as the VOLANO server relays
    /// them (on the sender's own thread, to a snapshot of the room): a member that got message k early can
    /// answer, and its answer reaches a third member before k does. This server lets it happen every time
    /// it can, so a run against it always breaks the room's order and never a sender's: message k goes at
    /// once only to the member after its sender (the next to speak in VolanoMark's token ring), and to the
    /// others after the room's next message, unless that one is from the same sender.
    #[default]
    LockFree,
}

/// The one misbehaviour of a server, done at the `at`-th chat message (1-based) of the first room entered,
/// to that room's last member (the victim) or to the room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Misbehaviour {
    /// The victim's connection is closed (FIN) after the message is relayed.
    CloseUser,
    /// The room relays nothing more, from this message on (no chat, no confirm).
    StallRoom,
    /// The message is not delivered to the victim.
    DropOne,
    /// The message is delivered to the victim twice.
    DuplicateOne,
    /// The victim gets a packet of an id the protocol does not have instead of the message.
    UnknownPacket,
    /// The victim gets the message with its text not modified UTF-8 (a garbled frame).
    GarbledFrame,
    /// The victim's connection is reset (RST) after the message is relayed.
    Reset,
    /// Every connection of every room is closed after the message is relayed, and no more are accepted:
    /// the server died.
    CloseAll,
}

impl Misbehaviour {
    pub const ALL: [Misbehaviour; 8] = [
        Misbehaviour::CloseUser,
        Misbehaviour::StallRoom,
        Misbehaviour::DropOne,
        Misbehaviour::DuplicateOne,
        Misbehaviour::UnknownPacket,
        Misbehaviour::GarbledFrame,
        Misbehaviour::Reset,
        Misbehaviour::CloseAll,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Misbehaviour::CloseUser => "close-user",
            Misbehaviour::StallRoom => "stall-room",
            Misbehaviour::DropOne => "drop-one",
            Misbehaviour::DuplicateOne => "duplicate-one",
            Misbehaviour::UnknownPacket => "unknown-packet",
            Misbehaviour::GarbledFrame => "garbled-frame",
            Misbehaviour::Reset => "reset",
            Misbehaviour::CloseAll => "close-all",
        }
    }
}

impl fmt::Display for Misbehaviour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Misbehaviour {
    type Err = String;

    fn from_str(s: &str) -> Result<Misbehaviour, String> {
        Misbehaviour::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Misbehaviour::ALL.iter().map(|m| m.name()).collect();
                format!("unknown misbehaviour {s:?} (one of {})", names.join(", "))
            })
    }
}

/// Everything a server does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Behaviour {
    pub relay: Relay,
    /// The misbehaviour and the room message (1-based) it happens at.
    pub misbehaviour: Option<(Misbehaviour, u64)>,
    /// TCP_NODELAY on every connection (the VOLANO product build leaves it off: Nagle's algorithm then
    /// holds small writes for the client's delayed ACK).
    pub nodelay: bool,
}

impl Behaviour {
    /// A well-behaved server relaying as `relay` says.
    pub fn relay(relay: Relay) -> Behaviour {
        Behaviour {
            relay,
            misbehaviour: None,
            nodelay: true,
        }
    }

    /// A server with the room lock that does `m` at the room's `at`-th message.
    pub fn misbehaving(m: Misbehaviour, at: u64) -> Behaviour {
        Behaviour {
            misbehaviour: Some((m, at)),
            ..Behaviour::relay(Relay::RoomLock)
        }
    }
}
