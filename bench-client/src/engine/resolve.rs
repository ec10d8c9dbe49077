//! The server's address, followed when it moves: the URL's host is resolved once before the run, and after a
//! connect to that address fails (or is abandoned by a timeout) the next connect of the worker looks the name
//! up again first. A swarm service's task gets a new address when it is rescheduled (its node drained, then
//! active again): without this the client would call the old one until the run ends. An address given as a
//! literal is never looked up.
//!
//! Per worker (each clone is its own, on the worker's one thread): no lock, no allocation on the way to a
//! connect that succeeds; a lookup only after a failed connect, one at a time per worker.

use std::cell::Cell;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use crate::config::{Family, Target};

/// Where the worker's connections go.
#[derive(Debug)]
pub(super) struct Address {
    /// The name and port to look up again; `None` for an address literal.
    name: Option<(Arc<str>, u16)>,
    family: Option<Family>,
    current: Cell<SocketAddr>,
    /// A connect to `current` failed since it was last looked up.
    stale: Cell<bool>,
    /// A lookup is in flight (the worker's other connections use `current` meanwhile).
    looking: Cell<bool>,
}

impl Clone for Address {
    /// A fresh address for another worker, at the same place.
    fn clone(&self) -> Address {
        Address {
            name: self.name.clone(),
            family: self.family,
            current: Cell::new(self.current.get()),
            stale: Cell::new(self.stale.get()),
            looking: Cell::new(false),
        }
    }
}

impl Address {
    pub(super) fn of(target: &Target) -> Address {
        Address {
            name: target
                .name
                .as_deref()
                .map(|n| (Arc::from(n), target.addr.port())),
            family: target.family,
            current: Cell::new(target.addr),
            stale: Cell::new(false),
            looking: Cell::new(false),
        }
    }

    /// The address to connect to now: the name looked up again first when a connect to the current one
    /// failed (the current one kept when the lookup finds nothing).
    pub(super) async fn get(&self) -> SocketAddr {
        let Some((name, port)) = &self.name else {
            return self.current.get();
        };
        if !self.stale.get() || self.looking.get() {
            return self.current.get();
        }
        self.stale.set(false);
        self.looking.set(true);
        let _done = Reset(&self.looking);
        if let Ok(found) = tokio::net::lookup_host((&**name, *port)).await {
            let found: Vec<SocketAddr> = found.collect();
            if let Some(next) = next_address(self.current.get(), &found, self.family) {
                self.current.set(next);
            }
        }
        self.current.get()
    }

    /// Runs `connect` (a connect to the address [`Address::get`] gave); marks that address stale unless it
    /// succeeds, also when the connect is dropped unfinished (the call's timeout).
    pub(super) async fn watch<T, E>(
        &self,
        connect: impl Future<Output = Result<T, E>>,
    ) -> Result<T, E> {
        let mut failed = Stale {
            stale: &self.stale,
            armed: true,
        };
        let r = connect.await;
        failed.armed = r.is_err();
        r
    }
}

/// Marks the address stale when dropped armed.
struct Stale<'a> {
    stale: &'a Cell<bool>,
    armed: bool,
}

impl Drop for Stale<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.stale.set(true);
        }
    }
}

/// Clears the in-flight flag of a lookup, also when the lookup is dropped unfinished.
struct Reset<'a>(&'a Cell<bool>);

impl Drop for Reset<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}

/// What a lookup that found `found` moves the connections to from `current`, which just failed: the address
/// after it in the answer (a name of several addresses is tried in turn), else the answer's first one, of
/// the run's family; `None` when the answer has none of that family.
fn next_address(
    current: SocketAddr,
    found: &[SocketAddr],
    family: Option<Family>,
) -> Option<SocketAddr> {
    let usable: Vec<SocketAddr> = found
        .iter()
        .copied()
        .filter(|a| Family::admits(family, a))
        .collect();
    let after = usable
        .iter()
        .position(|a| *a == current)
        .map_or(0, |i| (i + 1) % usable.len());
    usable.get(after).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_failed_address_moves_to_the_next_one_of_the_answer() {
        let (old, one, two) = (a("10.0.0.5:80"), a("10.0.0.9:80"), a("[::1]:80"));
        // The task moved: its one new address.
        assert_eq!(next_address(old, &[one], None), Some(one));
        // Several: the one after the failed one, in turn.
        assert_eq!(next_address(one, &[one, two], None), Some(two));
        assert_eq!(next_address(two, &[one, two], None), Some(one));
        // Only the run's family; none of it: stay.
        assert_eq!(next_address(old, &[two, one], Some(Family::V4)), Some(one));
        assert_eq!(next_address(old, &[two], Some(Family::V4)), None);
        assert_eq!(next_address(old, &[], None), None);
    }

    fn target(name: Option<&str>, addr: SocketAddr) -> Target {
        Target {
            url: String::new(),
            tls: None,
            addr,
            name: name.map(str::to_owned),
            family: Some(Family::V4),
            host: http::HeaderValue::from_static("x"),
            path: http::uri::PathAndQuery::from_static("/"),
            own_path: false,
        }
    }

    fn block_on<F: Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn a_name_is_looked_up_again_only_after_a_failed_connect() {
        // As if localhost's task had moved away from 127.0.0.9: the address the client resolved is gone.
        let gone = a("127.0.0.9:4000");
        let addr = Address::of(&target(Some("localhost"), gone));
        block_on(async {
            assert_eq!(addr.get().await, gone, "not looked up before a failure");
            let ok: Result<(), ()> = addr.watch(async { Ok(()) }).await;
            assert!(ok.is_ok());
            assert_eq!(addr.get().await, gone, "a connect that succeeded keeps it");
            let _ = addr.watch(async { Err::<(), ()>(()) }).await;
            assert_eq!(addr.get().await, a("127.0.0.1:4000"), "looked up again");
            // An abandoned connect (dropped by a timeout) counts as failed.
            addr.current.set(gone);
            let pending = tokio::time::timeout(
                std::time::Duration::from_millis(1),
                addr.watch(std::future::pending::<Result<(), ()>>()),
            );
            assert!(pending.await.is_err());
            assert_eq!(addr.get().await, a("127.0.0.1:4000"));
        });
    }

    #[test]
    fn an_address_literal_is_never_looked_up() {
        let at = a("127.0.0.9:4000");
        let addr = Address::of(&target(None, at));
        block_on(async {
            let _ = addr.watch(async { Err::<(), ()>(()) }).await;
            assert_eq!(addr.get().await, at);
        });
    }
}
