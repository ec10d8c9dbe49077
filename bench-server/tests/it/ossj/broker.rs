//! The tests' own STOMP broker: queues with round-robin delivery to their subscribers (messages kept
//! until someone subscribes), receipts, and misbehaviour on demand: refusing connections, swallowing
//! orders, dropping every connection. And a back end of the tests' own that answers as told.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bench_proto::ossj;
use bench_proto::stomp::{self, Command, Frame, Limits};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use tokio::task::AbortHandle;

/// How the broker behaves (changeable while it runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Behaviour {
    Normal,
    /// Answers CONNECT with an ERROR frame and closes.
    RefuseConnect,
    /// Takes SENDs to the orders queue and never delivers them.
    SwallowOrders,
}

type Subscriber = (usize, String, UnboundedSender<Vec<u8>>);

#[derive(Default)]
struct State {
    behaviour: Mutex<Option<Behaviour>>,
    subs: Mutex<HashMap<String, Vec<Subscriber>>>,
    queued: Mutex<HashMap<String, VecDeque<Frame>>>,
    conns: Mutex<Vec<AbortHandle>>,
    next_conn: AtomicUsize,
    next_msg: AtomicUsize,
    seen: Mutex<Vec<Command>>,
}

pub(super) struct FakeBroker {
    pub addr: SocketAddr,
    state: Arc<State>,
    accept: AbortHandle,
}

impl Drop for FakeBroker {
    fn drop(&mut self) {
        self.accept.abort();
        self.drop_connections();
    }
}

impl FakeBroker {
    pub(super) async fn start(behaviour: Behaviour) -> FakeBroker {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let state = Arc::new(State::default());
        *state.behaviour.lock().unwrap() = Some(behaviour);
        let st = state.clone();
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let id = st.next_conn.fetch_add(1, Ordering::Relaxed);
                let task = tokio::spawn(connection(st.clone(), id, stream));
                st.conns.lock().unwrap().push(task.abort_handle());
            }
        })
        .abort_handle();
        FakeBroker {
            addr,
            state,
            accept,
        }
    }

    pub(super) fn address(&self) -> String {
        self.addr.to_string()
    }

    pub(super) fn set(&self, behaviour: Behaviour) {
        *self.state.behaviour.lock().unwrap() = Some(behaviour);
    }

    /// Closes every connection (as a broker that crashed would).
    pub(super) fn drop_connections(&self) {
        for c in self.state.conns.lock().unwrap().drain(..) {
            c.abort();
        }
        self.state.subs.lock().unwrap().clear();
    }

    /// How many frames of `command` the broker has received.
    pub(super) fn seen(&self, command: Command) -> usize {
        self.state
            .seen
            .lock()
            .unwrap()
            .iter()
            .filter(|&&c| c == command)
            .count()
    }

    /// Subscribers of `destination` now.
    pub(super) fn subscribers(&self, destination: &str) -> usize {
        self.state
            .subs
            .lock()
            .unwrap()
            .get(destination)
            .map_or(0, Vec::len)
    }
}

async fn connection(state: Arc<State>, id: usize, stream: TcpStream) {
    let (mut read, mut write) = stream.into_split();
    let (tx, mut rx) = unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(async move {
        while let Some(bytes) = rx.recv().await {
            if write.write_all(&bytes).await.is_err() {
                break;
            }
        }
    });
    let mut buf = Vec::new();
    'conn: loop {
        while let Ok(Some((frame, n))) = stomp::decode(&buf, &Limits::default()) {
            buf.drain(..n);
            state.seen.lock().unwrap().push(frame.command);
            if !handle(&state, id, &tx, frame) {
                break 'conn;
            }
        }
        let mut chunk = [0u8; 8192];
        match read.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    for subs in state.subs.lock().unwrap().values_mut() {
        subs.retain(|(c, _, _)| *c != id);
    }
    drop(tx);
    let _ = writer.await;
}

fn send(tx: &UnboundedSender<Vec<u8>>, frame: Frame) {
    let mut out = Vec::new();
    frame.encode(&mut out);
    let _ = tx.send(out);
}

/// Handles one frame; false to close the connection.
fn handle(state: &State, conn: usize, tx: &UnboundedSender<Vec<u8>>, frame: Frame) -> bool {
    let behaviour = state.behaviour.lock().unwrap().unwrap_or(Behaviour::Normal);
    if let Some(r) = frame.get("receipt") {
        if frame.command != Command::Connect {
            send(tx, Frame::new(Command::Receipt).with("receipt-id", r));
        }
    }
    match frame.command {
        Command::Connect | Command::Stomp if behaviour == Behaviour::RefuseConnect => {
            send(
                tx,
                Frame::new(Command::Error).with("message", "User name [] or password is invalid."),
            );
            return false;
        }
        Command::Connect | Command::Stomp => {
            send(
                tx,
                Frame::new(Command::Connected)
                    .with("version", "1.2")
                    .with("server", "fake/1"),
            );
        }
        Command::Subscribe => {
            let dest = frame.get("destination").unwrap_or_default().to_owned();
            let sub = frame.get("id").unwrap_or_default().to_owned();
            state
                .subs
                .lock()
                .unwrap()
                .entry(dest.clone())
                .or_default()
                .push((conn, sub, tx.clone()));
            let waiting: Vec<Frame> = state
                .queued
                .lock()
                .unwrap()
                .remove(&dest)
                .unwrap_or_default()
                .into();
            for f in waiting {
                route(state, f);
            }
        }
        Command::Unsubscribe => {
            let sub = frame.get("id").unwrap_or_default();
            for subs in state.subs.lock().unwrap().values_mut() {
                subs.retain(|(c, s, _)| !(*c == conn && s == sub));
            }
        }
        Command::Send
            if behaviour == Behaviour::SwallowOrders
                && frame.get("destination") == Some(ossj::ORDERS_QUEUE) => {}
        Command::Send => route(state, frame),
        Command::Disconnect => return false,
        _ => {}
    }
    true
}

/// Delivers a SEND to one subscriber of its destination (round robin), or keeps it.
fn route(state: &State, frame: Frame) {
    let dest = frame.get("destination").unwrap_or_default().to_owned();
    let n = state.next_msg.fetch_add(1, Ordering::Relaxed);
    let target = {
        let subs = state.subs.lock().unwrap();
        subs.get(&dest)
            .filter(|s| !s.is_empty())
            .map(|s| s[n % s.len()].clone())
    };
    let Some((_, sub, tx)) = target else {
        state
            .queued
            .lock()
            .unwrap()
            .entry(dest)
            .or_default()
            .push_back(frame);
        return;
    };
    let mut msg = Frame::new(Command::Message)
        .with("subscription", sub)
        .with("message-id", format!("ID:fake-{n}"));
    for (k, v) in &frame.headers {
        if k != "content-length" && k != "receipt" {
            msg = msg.with(k, v.clone());
        }
    }
    send(&tx, msg.with_body(frame.body));
}

/// A back end of the tests' own: subscribes to the orders queue and answers each order with what
/// `reply` makes of it (a frame whose destination and correlation id it then sets).
pub(super) async fn fake_backend(broker: SocketAddr, reply: fn(&Frame) -> Frame) -> AbortHandle {
    let mut stream = TcpStream::connect(broker).await.expect("connect");
    let mut out = Vec::new();
    Frame::new(Command::Connect)
        .with("accept-version", "1.2")
        .encode(&mut out);
    Frame::new(Command::Subscribe)
        .with("id", "0")
        .with("destination", ossj::ORDERS_QUEUE)
        .with("receipt", "subscribed")
        .encode(&mut out);
    stream.write_all(&out).await.expect("write");
    let mut buf = Vec::new();
    // Up to the receipt: the subscription is in place when this returns.
    let mut subscribed = false;
    while !subscribed {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.expect("read");
        assert!(n > 0, "the broker closed");
        buf.extend_from_slice(&chunk[..n]);
        while let Ok(Some((f, used))) = stomp::decode(&buf, &Limits::default()) {
            buf.drain(..used);
            subscribed |= f.command == Command::Receipt;
        }
    }
    tokio::spawn(async move {
        loop {
            while let Ok(Some((f, used))) = stomp::decode(&buf, &Limits::default()) {
                buf.drain(..used);
                if f.command != Command::Message {
                    continue;
                }
                let mut r = reply(&f);
                r.headers.insert(
                    0,
                    (
                        "destination".into(),
                        f.get("reply-to").unwrap_or_default().into(),
                    ),
                );
                r.headers.push((
                    "correlation-id".into(),
                    f.get("correlation-id").unwrap_or_default().into(),
                ));
                let mut out = Vec::new();
                r.encode(&mut out);
                if stream.write_all(&out).await.is_err() {
                    return;
                }
            }
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .abort_handle()
}
