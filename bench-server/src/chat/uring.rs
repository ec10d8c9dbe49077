//! The io_uring fan-out: one `io_uring_enter` sends a packet to every member of a room (one `send` SQE per
//! member whose socket nothing waits on), instead of one `write` system call per member; and the probe
//! that finds out at startup whether the kernel (or a seccomp profile, as Docker's default one) allows
//! io_uring at all.
//!
//! Each worker thread has its own ring, made on its first fan-out and reused: nothing is allocated per
//! message, and no lock is shared between threads. Sends are non-blocking (`MSG_DONTWAIT`), so the kernel
//! completes each inline within the submission: a socket that takes all of the packet is done, and what a
//! socket refuses (`EAGAIN`, or a short send) is queued in the member's outbox ahead of anything queued
//! meanwhile, for its writer, exactly as on the `write` path (see `peer`).

use std::cell::RefCell;
use std::io;

use io_uring::{opcode, types, IoUring};

use super::peer::{Direct, Peer, QueueError};

/// Submission queue entries per ring: a room of up to this many members takes one submission; a bigger
/// room takes one per this many.
const ENTRIES: u32 = 64;

thread_local! {
    /// This thread's ring (None until its first fan-out, or if it could not be made).
    static RING: RefCell<Option<IoUring>> = const { RefCell::new(None) };
}

/// Why io_uring cannot be used here, as the READY line and provenance name it (one word).
pub(super) fn probe() -> Result<(), String> {
    // 2: disabled for everyone; 1: only for a group (the attempt below decides); 0: allowed.
    if let Ok(s) = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled") {
        if s.trim() == "2" {
            return Err("disabled-by-sysctl".to_owned());
        }
    }
    IoUring::new(2).map(drop).map_err(|e| errno_name(&e))
}

fn errno_name(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EPERM) => "EPERM".to_owned(),
        Some(libc::ENOSYS) => "ENOSYS".to_owned(),
        Some(libc::EACCES) => "EACCES".to_owned(),
        Some(libc::ENOMEM) => "ENOMEM".to_owned(),
        Some(n) => format!("errno-{n}"),
        None => "unknown".to_owned(),
    }
}

/// Sends `packet` to the peers `order` yields (indices for `peer`), calling `done` with each one's outcome
/// (in completion order). Returns false, having sent nothing, if this thread has no ring: the caller then
/// uses the `write` path.
pub(crate) fn fan_out<'p>(
    order: impl Iterator<Item = usize>,
    peer: impl Fn(usize) -> &'p Peer,
    packet: &[u8],
    mut done: impl FnMut(&'p Peer, Result<(), QueueError>),
) -> bool {
    let Ok(len) = u32::try_from(packet.len()) else {
        return false;
    };
    RING.with(|cell| {
        // A fan-out within a fan-out (none today) would find the ring borrowed: it takes the `write` path.
        let Ok(mut slot) = cell.try_borrow_mut() else {
            return false;
        };
        if slot.is_none() {
            *slot = IoUring::new(ENTRIES).ok();
        }
        let Some(ring) = slot.as_mut() else {
            return false;
        };
        let mut order = order.peekable();
        // The peers whose send is in the submission now, for a ring that fails.
        let mut begun = [0usize; ENTRIES as usize];
        while order.peek().is_some() {
            let mut submitted = 0;
            {
                let mut sq = ring.submission();
                while !sq.is_full() {
                    let Some(i) = order.next() else { break };
                    let p = peer(i);
                    match p.begin_direct() {
                        Direct::Fd(fd) => {
                            let send = opcode::Send::new(types::Fd(fd), packet.as_ptr(), len)
                                .flags(libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL)
                                .build()
                                .user_data(i as u64);
                            // SAFETY: `packet` outlives the send: every submitted entry is completed
                            // before this function returns (`complete`). Cannot fail: not full.
                            #[allow(unsafe_code)]
                            let _ = unsafe { sq.push(&send) };
                            begun[submitted] = i;
                            submitted += 1;
                        }
                        Direct::Queue => done(p, p.send(packet)),
                        Direct::Closed => done(p, Err(QueueError::Closed)),
                    }
                }
            }
            if !complete(ring, &begun[..submitted], &peer, packet, &mut done) {
                // The ring failed: this thread uses the `write` path from now on.
                *slot = None;
                order.for_each(|i| {
                    let p = peer(i);
                    done(p, p.send(packet));
                });
                return true;
            }
        }
        true
    })
}

/// Submits the sends to `begun` and reaps their completions. False if the ring failed: every send it did
/// not take is then ended as refused, so its packet is queued whole for the writer.
fn complete<'p>(
    ring: &mut IoUring,
    begun: &[usize],
    peer: &impl Fn(usize) -> &'p Peer,
    packet: &[u8],
    done: &mut impl FnMut(&'p Peer, Result<(), QueueError>),
) -> bool {
    let mut left = begun.len();
    while left > 0 {
        match ring.submit_and_wait(left) {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)
                ) => {}
            Err(_) => break,
        }
        for cqe in ring.completion() {
            let p = peer(cqe.user_data() as usize);
            done(p, p.end_direct(packet, cqe.result()));
            left -= 1;
        }
    }
    if left == 0 {
        return true;
    }
    // io_uring_enter failed, having taken none of the entries still queued: the last of `begun`. (Those
    // it took complete within it, as the sends do not block.)
    let untaken = ring.submission().len().min(left);
    for &i in &begun[begun.len() - untaken..] {
        let p = peer(i);
        done(p, p.end_direct(packet, -libc::EAGAIN));
    }
    false
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use tokio::io::AsyncReadExt;
    use tokio::net::{TcpListener, TcpStream};

    use super::super::peer::Limits;
    use super::super::stats::ChatStats;
    use super::*;

    const PACKET: usize = 100;

    fn packet(n: u32) -> Vec<u8> {
        n.to_be_bytes().repeat(PACKET / 4)
    }

    /// A peer over a real socket (its writer running), and the reading end.
    async fn peer(per_connection: usize) -> (Arc<Peer>, Arc<Limits>, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let reader = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (socket, _) = listener.accept().await.unwrap();
        let (_rd, wr) = socket.into_split();
        let limits = Arc::new(Limits {
            per_connection,
            total: 1 << 20,
            queued: AtomicUsize::new(0),
        });
        let stats = Arc::new(ChatStats::default());
        let peer = Arc::new(Peer::new(1, limits.clone(), stats, Some(wr)));
        tokio::spawn(peer.clone().write_loop());
        (peer, limits, reader)
    }

    fn send(peer: &Peer, packet: &[u8]) -> Result<(), QueueError> {
        let mut outcome = None;
        let by_uring = fan_out(
            std::iter::once(0),
            |_| peer,
            packet,
            |_, r| outcome = Some(r),
        );
        assert!(by_uring, "this kernel refuses io_uring");
        outcome.expect("one outcome per peer")
    }

    #[tokio::test]
    async fn what_the_socket_refuses_is_queued_in_order_within_the_bound() {
        if probe().is_err() {
            return; // io_uring refused here: the `write` path's own test covers the fallback
        }
        let (peer, limits, mut reader) = peer(4096).await;
        // Nobody reads yet: sends complete until the socket's buffers are full (EAGAIN, or short), then
        // the outbox holds what it refuses, up to the bound, and the next packet finds it full.
        let mut sent = 0;
        let full = loop {
            match send(&peer, &packet(sent)) {
                Ok(()) => sent += 1,
                Err(e) => break e,
            }
            assert!(sent < 10_000_000, "the socket never filled");
        };
        assert_eq!(full, QueueError::Full);
        let queued = limits.queued.load(Ordering::Relaxed);
        assert!(queued > 0 && queued <= 4096, "{queued} bytes queued");
        let mut got = vec![0; PACKET];
        for n in 0..sent {
            reader.read_exact(&mut got).await.unwrap();
            assert_eq!(got, packet(n), "packet {n}");
        }
        peer.kill.kill();
    }

    #[tokio::test]
    async fn a_send_in_flight_keeps_its_place_before_what_is_queued_meanwhile() {
        let (peer, _, mut reader) = peer(4096).await;
        let Direct::Fd(_) = peer.begin_direct() else {
            panic!("an idle peer's socket is free");
        };
        // While the fan-out's send is in flight, another packet for this peer (another room, a reply)
        // must wait behind it, not go to the socket first.
        assert_eq!(peer.begin_direct(), Direct::Queue);
        peer.send(&packet(2)).unwrap();
        // The socket took none of the first: it goes out before the second.
        peer.end_direct(&packet(1), -libc::EAGAIN).unwrap();
        let mut got = vec![0; 2 * PACKET];
        reader.read_exact(&mut got).await.unwrap();
        assert_eq!(got, [packet(1), packet(2)].concat());
        peer.kill.kill();
    }
}
