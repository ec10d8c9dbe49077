//! The tests' own VOLANO-protocol chat servers, small and deterministic: a relay with a room lock (every
//! member sees one order, as bench-server keeps it), a relay without one (each sender's order only, as the
//! VOLANO server relays), and one misbehaviour on purpose at a chosen message ([`Misbehaviour`]). They
//! serve the subset of the protocol VolanoMark speaks; bench-client's tests and `cargo xtask test` run
//! them, never a benchmark.

mod behaviour;
mod conn;
mod room;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;

pub use behaviour::{Behaviour, Misbehaviour, Relay};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use room::Rooms;

/// Serves `listener` as `behaviour` says until `shutdown` completes (or, after
/// [`Misbehaviour::CloseAll`], until the next connection arrives: the server is dead).
pub async fn serve(
    listener: TcpListener,
    behaviour: Behaviour,
    shutdown: impl Future<Output = ()>,
) {
    serve_rooms(listener, Arc::new(Rooms::new(behaviour)), shutdown).await;
}

async fn serve_rooms(listener: TcpListener, rooms: Arc<Rooms>, shutdown: impl Future<Output = ()>) {
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => return,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                if rooms.dead() {
                    return;
                }
                tokio::spawn(conn::serve(stream, rooms.clone()));
            }
        }
    }
}

/// A server on 127.0.0.1:0 on a thread of its own (its own runtime, so a client that blocks its runtime's
/// threads cannot stop it); stopped on drop.
#[derive(Debug)]
pub struct Spawned {
    pub addr: SocketAddr,
    rooms: Arc<Rooms>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Spawned {
    pub fn start(behaviour: Behaviour) -> Spawned {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binding 127.0.0.1:0");
        let addr = listener.local_addr().expect("the listener's address");
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener");
        let (stop, stopped) = oneshot::channel::<()>();
        let rooms = Arc::new(Rooms::new(behaviour));
        let served = rooms.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            rt.block_on(async move {
                let listener = TcpListener::from_std(listener).expect("a tokio listener");
                serve_rooms(listener, served, async {
                    let _ = stopped.await;
                })
                .await;
            });
        });
        Spawned {
            addr,
            rooms,
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Spawned {
    /// When the server misbehaved (its misbehaviour's message was reached), if it has.
    pub fn misbehaved_at(&self) -> Option<std::time::Instant> {
        self.rooms.misbehaved_at()
    }

    /// Chat messages relayed so far, all rooms.
    pub fn relayed(&self) -> u64 {
        self.rooms.relayed()
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
