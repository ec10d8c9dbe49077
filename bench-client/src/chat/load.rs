//! The validated chat workload that `bench-client chat`'s flags (`crate::flags::ChatArgs`) describe.

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use crate::flags::{ChatArgs, UsageError};

/// What one chat benchmark does, validated.
#[derive(Debug, Clone)]
pub struct ChatLoad {
    pub addr: SocketAddr,
    pub rooms: u32,
    pub users: u32,
    pub count: u32,
    /// Zero: paced (token ring).
    pub pause: Duration,
    pub runs: u32,
    pub start: u32,
    /// Each expected packet (and connecting, and entering) within this.
    pub timeout: Duration,
    /// Each run ends by this, cut short if it has not.
    pub deadline: Duration,
    /// Check that every member sees the room's messages in one order (paced runs only).
    pub check_room_order: bool,
}

impl ChatLoad {
    /// A paced VolanoMark run of one pass, for tests and benches.
    pub fn new(addr: SocketAddr, rooms: u32, users: u32, count: u32) -> ChatLoad {
        ChatLoad {
            addr,
            rooms,
            users,
            count,
            pause: Duration::ZERO,
            runs: 1,
            start: 1,
            timeout: Duration::from_secs(30),
            deadline: Duration::from_secs(30 * 60),
            check_room_order: false,
        }
    }

    pub fn from_args(args: &ChatArgs) -> anyhow::Result<ChatLoad> {
        let addr = args
            .addr
            .to_socket_addrs()
            .map_err(|e| UsageError(format!("--addr {}: {e} (expected HOST:PORT)", args.addr)))?
            .next()
            .ok_or_else(|| UsageError(format!("--addr {}: resolves to no address", args.addr)))?;
        let load = ChatLoad {
            addr,
            rooms: args.rooms,
            users: args.users,
            count: args.count,
            pause: args.pause,
            runs: args.runs,
            start: args.start,
            timeout: args.timeout,
            deadline: args.deadline,
            check_room_order: args.check_room_order,
        };
        load.validate()?;
        Ok(load)
    }

    pub fn validate(&self) -> anyhow::Result<()> {
        let usage = |m: &str| Err(UsageError(m.to_owned()).into());
        if self.rooms == 0 || self.count == 0 || self.runs == 0 {
            return usage("--rooms, --count and --runs must be at least 1");
        }
        if self.users < 2 {
            return usage("--users must be at least 2");
        }
        if self.start.checked_add(self.rooms).is_none() {
            return usage("--start + --rooms is too large");
        }
        if self.timeout.is_zero() || self.deadline.is_zero() {
            return usage("--timeout and --deadline must be positive");
        }
        if self.check_room_order && !self.paced() {
            return usage(
                "--check-room-order checks the room's order through VolanoMark's token ring (paced runs, \
                 --pause 0s); with a pause, each sender's order is checked",
            );
        }
        if self.count > 999_999_999 {
            return usage("--count is at most 999999999 (each message's number is in its text)");
        }
        Ok(())
    }

    pub fn paced(&self) -> bool {
        self.pause.is_zero()
    }

    /// Connections (users) in one run.
    pub fn connections(&self) -> u64 {
        u64::from(self.rooms) * u64::from(self.users)
    }

    /// Messages one run sends.
    pub fn messages(&self) -> u64 {
        self.connections() * u64::from(self.count)
    }
}
