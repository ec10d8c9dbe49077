//! The Customer service's in-memory store: a fixed-capacity ring of customers, pre-filled deterministically.
//!
//! Capacity is fixed at start (`HttpConfig::store_cap`): once full, each add overwrites the oldest slots, so
//! memory never grows past the cap. There is no store-wide lock: an add reserves its slots with one atomic
//! add, and every slot has its own tiny mutex, so concurrent adds and gets only meet on the same slot.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use bench_proto::customer::{self, AddSummary, Customer};

/// Seed of the start-up data set (also what `bench_proto::customer::generate` callers may use to predict it).
pub const PREFILL_SEED: u64 = 0x5753_4245_4e43_4821;
/// Id of the first pre-filled customer; the rest follow consecutively.
pub const PREFILL_FIRST_ID: u64 = 1;

type Slot = Mutex<Option<Box<Customer>>>;

#[derive(Debug)]
pub(crate) struct CustomerStore {
    slots: Box<[Slot]>,
    /// Customers ever inserted; the next add writes slot `inserted % cap` onwards.
    inserted: AtomicU64,
}

impl CustomerStore {
    /// A store of `cap` slots (at least one) holding `prefill` generated customers (clamped to `cap`).
    pub(crate) fn new(cap: usize, prefill: usize) -> Self {
        let cap = cap.max(1);
        let prefill = prefill.min(cap);
        let mut slots: Vec<Slot> = Vec::with_capacity(cap);
        slots.extend(
            customer::generate(prefill, PREFILL_SEED, PREFILL_FIRST_ID)
                .into_iter()
                .map(|c| Mutex::new(Some(Box::new(c)))),
        );
        slots.resize_with(cap, || Mutex::new(None));
        Self {
            slots: slots.into_boxed_slice(),
            inserted: AtomicU64::new(prefill as u64),
        }
    }

    fn cap(&self) -> u64 {
        self.slots.len() as u64
    }

    /// Customers held now (at most the capacity).
    pub(crate) fn len(&self) -> u64 {
        self.inserted.load(Ordering::Relaxed).min(self.cap())
    }

    /// Stores `customers` (overwriting the oldest when full) and summarises the add.
    pub(crate) fn add(&self, customers: Vec<Customer>) -> AddSummary {
        let count = customers.len();
        let first_id = customers.first().map_or(0, |c| c.id);
        let last_id = customers.last().map_or(0, |c| c.id);
        let start = self.inserted.fetch_add(count as u64, Ordering::Relaxed);
        let cap = self.cap();
        for (i, c) in customers.into_iter().enumerate() {
            let slot = ((start + i as u64) % cap) as usize;
            *self.slots[slot]
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(Box::new(c));
        }
        let stored = (start + count as u64).min(cap);
        AddSummary {
            count: u32::try_from(count).unwrap_or(u32::MAX),
            first_id,
            last_id,
            stored,
        }
    }

    /// Where a `get` of `count` customers from position `offset` starts (see [`CustomerStore::write_get`]).
    pub(crate) fn get_cursor(&self, count: u32, offset: u64) -> GetCursor {
        let len = self.len();
        GetCursor {
            len,
            pos: if len == 0 { 0 } else { offset % len },
            left: if len == 0 { 0 } else { count },
            skips: len,
        }
    }

    /// Serialises the customers of a `get` from `cursor` on, as `<customer>` elements appended to `out`,
    /// until `out` holds at least `until` bytes or the get is complete; returns true once it is. Positions
    /// wrap around modulo the store's size, so any offset and any count is answered in full once the store
    /// holds anything. Each customer is written under its slot's lock (no copy), so a long `get` that
    /// streams in pieces sees adds made meanwhile, customer by customer.
    pub(crate) fn write_get(
        &self,
        cursor: &mut GetCursor,
        out: &mut Vec<u8>,
        until: usize,
    ) -> bool {
        while cursor.left > 0 && out.len() < until {
            if let Some(c) = &*self.slots[cursor.pos as usize]
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
            {
                customer::write_customer(out, c);
                cursor.left -= 1;
            } else if cursor.skips == 0 {
                // Only slots reserved by a concurrent first-time add are empty, and at most `len` of those.
                cursor.left = 0;
            } else {
                cursor.skips -= 1;
            }
            cursor.pos = (cursor.pos + 1) % cursor.len;
        }
        cursor.left == 0
    }

    /// `count` customers starting at position `offset` (modulo the store's size), wrapping around, so any
    /// offset and any count up to the caller's bound is answered in full once the store holds anything.
    #[cfg(test)]
    pub(crate) fn get(&self, count: u32, offset: u64) -> Vec<Customer> {
        let len = self.len();
        let mut out = Vec::with_capacity(count as usize);
        if len == 0 {
            return out;
        }
        // A slot reserved by a concurrent first-time add may still be empty: skip it. Bounded, because at
        // most `len` slots exist to skip.
        let mut pos = offset % len;
        let mut budget = u64::from(count) + len;
        while out.len() < count as usize && budget > 0 {
            if let Some(c) = &*self.slots[pos as usize]
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
            {
                out.push(Customer::clone(c));
            }
            pos = (pos + 1) % len;
            budget -= 1;
        }
        out
    }
}

/// Progress of one `get` through the store.
#[derive(Debug)]
pub(crate) struct GetCursor {
    /// The store's size when the get began: positions wrap modulo this.
    len: u64,
    pos: u64,
    /// Customers still to write.
    left: u32,
    /// Empty slots that may still be skipped.
    skips: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefilled_store_answers_get_deterministically() {
        let a = CustomerStore::new(10, 5);
        let b = CustomerStore::new(10, 5);
        assert_eq!(a.len(), 5);
        let got = a.get(7, 3);
        assert_eq!(got.len(), 7);
        let ids: Vec<u64> = got.iter().map(|c| c.id).collect();
        assert_eq!(ids, [4, 5, 1, 2, 3, 4, 5]);
        assert_eq!(got, b.get(7, 3));
    }

    #[test]
    fn adds_are_bounded_by_the_cap() {
        let store = CustomerStore::new(4, 2);
        let summary = store.add(customer::generate(3, 9, 100));
        assert_eq!(
            (
                summary.count,
                summary.first_id,
                summary.last_id,
                summary.stored
            ),
            (3, 100, 102, 4)
        );
        assert_eq!(store.len(), 4);
        // Slots 2, 3, 0 got ids 100, 101, 102: the oldest pre-filled customer (id 1) was overwritten.
        let ids: Vec<u64> = store.get(4, 0).iter().map(|c| c.id).collect();
        assert_eq!(ids, [102, 2, 100, 101]);
    }

    #[test]
    fn written_gets_match_the_customers_in_any_number_of_pieces() {
        let store = CustomerStore::new(10, 5);
        let mut whole = Vec::new();
        for c in store.get(12, 3) {
            customer::write_customer(&mut whole, &c);
        }
        let mut cursor = store.get_cursor(12, 3);
        let mut pieces = Vec::new();
        let mut calls = 0;
        loop {
            let until = pieces.len() + 1;
            if store.write_get(&mut cursor, &mut pieces, until) {
                break;
            }
            calls += 1;
        }
        assert_eq!(calls, 11, "one customer per call");
        assert_eq!(pieces, whole);
        let mut empty = CustomerStore::new(3, 0).get_cursor(5, 0);
        let mut out = Vec::new();
        assert!(CustomerStore::new(3, 0).write_get(&mut empty, &mut out, usize::MAX));
        assert!(out.is_empty());
    }

    #[test]
    fn empty_store_returns_nothing() {
        let store = CustomerStore::new(3, 0);
        assert!(store.get(5, 0).is_empty());
        assert_eq!(store.add(Vec::new()).count, 0);
    }
}
