//! Verified before measured, for chat: `bench-client chat --verify-only` (two users enter a room, exchange a
//! message each way and leave) passes a server that relays, and names what went wrong with one that does
//! not — no answer, the wrong packet, a refused room; a run against such a server loads nothing.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::process::Output;

use bench_proto::chat::{
    access_result, decode, enter_result, Access, EnterRoom, Kind, Packet, RoomList,
};
use misbehaving_chat::{Behaviour, Misbehaviour, Relay, Spawned};

use crate::support::{bin, tmp};

/// A chat server on a thread of its own that answers each packet of a connection with what `answer` says
/// (nothing: keeps reading; `None` from the start: closes at once).
fn scripted(answer: fn(&Packet<'_>) -> Option<Vec<u8>>) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream, answer));
        }
    });
    addr
}

fn serve(mut stream: TcpStream, answer: fn(&Packet<'_>) -> Option<Vec<u8>>) {
    let mut buf = Vec::new();
    let mut chunk = [0; 4096];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        while let Ok(Some((packet, n))) = decode(&buf, 1 << 16) {
            if let Some(bytes) = answer(&packet) {
                if bytes.is_empty() {
                    return;
                }
                let _ = stream.write_all(&bytes);
            }
            buf.drain(..n);
        }
    }
}

fn encoded(p: Packet<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    p.encode(&mut out);
    out
}

fn access_ok() -> Vec<u8> {
    encoded(Packet::Access(Access {
        kind: Kind::Confirm,
        result: access_result::OKAY,
        ..Access::default()
    }))
}

fn verify_only(addr: std::net::SocketAddr, extra: &[&str]) -> Output {
    bin()
        .args([
            "chat",
            "--addr",
            &addr.to_string(),
            "--timeout",
            "1s",
            "--verify-only",
        ])
        .args(extra)
        .output()
        .expect("bench-client runs")
}

#[test]
fn a_server_that_relays_is_verified() {
    for relay in [Relay::RoomLock, Relay::LockFree] {
        let server = Spawned::start(Behaviour::relay(relay));
        let out = verify_only(server.addr, &[]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains("two users entered Room1, exchanged a message each way and left"),
            "{stdout}"
        );
    }
}

#[test]
fn what_went_wrong_is_said_no_answer_the_wrong_packet_or_a_refused_room() {
    let dropped = Spawned::start(Behaviour::misbehaving(Misbehaviour::DropOne, 1));
    let garbled = Spawned::start(Behaviour::misbehaving(Misbehaviour::GarbledFrame, 1));
    let cases: [(&str, std::net::SocketAddr, &str); 6] = [
        (
            "silent",
            scripted(|_| None),
            "no answer: Mark1 waited 1s for the Access confirm",
        ),
        (
            "hangs up",
            scripted(|_| Some(Vec::new())),
            "no answer: the server closed Mark1's connection while it waited for the Access confirm",
        ),
        (
            "room full",
            scripted(|p| match p {
                Packet::Access(_) => Some(access_ok()),
                Packet::EnterRoom(_) => Some(encoded(Packet::EnterRoom(EnterRoom {
                    kind: Kind::Confirm,
                    result: enter_result::ROOM_FULL,
                    ..EnterRoom::default()
                }))),
                _ => None,
            }),
            "a refused room: Mark1 could not enter Room1 (EnterRoom result 2: room full)",
        ),
        (
            "room list for access",
            scripted(|_| {
                Some(encoded(Packet::RoomList(RoomList {
                    kind: Kind::Confirm,
                    ..RoomList::default()
                })))
            }),
            "the wrong packet: Mark1, waiting for the Access confirm, got a RoomList Confirm",
        ),
        (
            "message dropped",
            dropped.addr,
            "no answer: Mark2 waited 1s for the Chat indication of Mark1's message",
        ),
        (
            "message garbled",
            garbled.addr,
            "the wrong packet: Mark2, waiting for the Chat indication of Mark1's message, got bytes that are \
             not the protocol",
        ),
    ];
    for (name, addr, said) in cases {
        let out = verify_only(addr, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(
            stderr.contains("bench-client: verification failed at ") && stderr.contains(said),
            "{name}: wanted {said:?} in\n{stderr}"
        );
        println!("{name}: {}", stderr.trim());
    }
}

#[test]
fn a_run_against_a_server_that_fails_verification_loads_nothing() {
    let server = Spawned::start(Behaviour::misbehaving(Misbehaviour::DropOne, 1));
    let json = tmp("chat-unverified.json");
    let out = bin()
        .args([
            "chat",
            "--addr",
            &server.addr.to_string(),
            "--timeout",
            "1s",
        ])
        .args(["--rooms", "2", "--users", "3", "--count", "5", "--json"])
        .arg(&json)
        .output()
        .expect("bench-client runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("verification failed"), "{stderr}");
    assert!(!json.exists(), "nothing measured, no document");
    assert_eq!(server.relayed(), 1, "only the verification's first message");
}

/// Verifying the same server again says the same: the tests' server frees a member's name however its
/// connection ended (bench-client resets a connection it stops reading, and the server once kept the name
/// of a member whose read failed: the second verification was "a refused room … name taken").
#[test]
fn a_second_verification_of_a_misbehaving_server_says_the_same() {
    let server = Spawned::start(Behaviour::misbehaving(Misbehaviour::UnknownPacket, 1));
    for attempt in 1..=2 {
        let out = verify_only(server.addr, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "attempt {attempt}: {stderr}");
        assert!(
            stderr.contains(
                "the wrong packet: Mark2, waiting for the Chat indication of Mark1's message"
            ),
            "attempt {attempt}: {stderr}"
        );
    }
}
