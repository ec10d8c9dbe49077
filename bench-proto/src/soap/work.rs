//! The reader's work budget: what the attribute and namespace scans may cost one message, in proportion to its
//! size. Everything else the reader does is linear in the bytes it reads, at a cost per byte the hostile
//! corpus measures (`bench_proto::hostile`, the gate's hostile tier). These scans are not: an attribute costs
//! the same whether it is `a=""` or long (its syntax, the limits, the duplicate check, a declaration's scope
//! entry and exit), and a namespace lookup costs one probe of the prefix table or, for prefixes chosen to
//! collide, up to one per binding in scope. Each is charged here, and a message that needs more than its
//! budget is refused with a fault naming `xml-max-work`.
//!
//! The bound: a unit stands for about ten instructions. An attribute read and checked costs ~150–280 (24
//! units), a declaration about as much again (24 more: its scope entry and exit, the lookups it makes
//! miss), a probe of the prefix table ~5, or ~20 for prefixes that collide in their first words too (2
//! units). A message of `n` bytes may spend `(n + 4 KiB) × max_work / 1 KiB` units, one a byte by default:
//! so these scans add at most about ten instructions a byte of the message, whatever its shape, to what
//! reading its bytes costs. The valid CXF echo costs ~11 a byte; the hostile corpus holds every shape, at
//! the edge of the budget or past it, to 3× that (`cargo xtask gate --tier hostile`). The 4 KiB are for
//! small messages with a header: 170 attributes.
//!
//! Every path charges the same: the fast paths (`usual.rs`, `run.rs`) charge what the general path would for
//! the attributes and lookups they skip, so that a message is accepted or refused the same either way (the
//! twin tests compare the totals). The budget is checked at each start tag the general path reads and when
//! the message is finished: past it, a message is refused at the next of those, having done at most a tag's
//! attributes, a header block's lookups and what the fast paths charge for what they read in between (under
//! a unit for 16 bytes) beyond it (`work/tests.rs` reads random messages to hold the reader to that).

use std::cell::Cell;

/// An attribute read: its syntax, the limits, its part in the tag's duplicate check.
pub(crate) const ATTRIBUTE: u64 = 24;
/// A namespace declaration, on top of its attribute: the binding brought into scope, and out again.
pub(crate) const DECLARATION: u64 = 24;
/// A binding examined by a lookup of a prefixed name (an element's, an attribute's, a QName's).
pub(crate) const PROBE: u64 = 2;
/// Bytes every message is credited on top of its own, so that small messages with a header pass.
const BASE_BYTES: u64 = 4096;

/// Units spent and the budget of one message.
#[derive(Debug)]
pub(super) struct Work {
    spent: Cell<u64>,
    budget: u64,
}

impl Work {
    /// The budget of a message of `len` bytes, at `per_kib` units per KiB.
    pub(super) fn new(len: usize, per_kib: usize) -> Self {
        let budget = (len as u64)
            .saturating_add(BASE_BYTES)
            .saturating_mul(per_kib as u64)
            / 1024;
        Self {
            spent: Cell::new(0),
            budget,
        }
    }

    #[inline]
    pub(super) fn charge(&self, units: u64) {
        self.spent.set(self.spent.get() + units);
    }

    /// Whether what was spent is within the budget.
    #[inline]
    pub(super) fn within(&self) -> bool {
        self.spent.get() <= self.budget
    }

    /// Units spent so far.
    pub(super) fn spent(&self) -> u64 {
        self.spent.get()
    }

    /// Gives back what was spent since [`spent`](Self::spent) said `units`: a fast path that reads on and
    /// then gives its reading back to the general path (which charges it again).
    pub(super) fn rewind(&self, units: u64) {
        self.spent.set(units);
    }
}

#[cfg(test)]
thread_local! {
    static LAST_SPENT: Cell<u64> = const { Cell::new(0) };
    /// Attributes read and bindings examined by lookups, as they happen (test builds count them).
    static SCANNED: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// Counts an attribute read (test builds).
#[cfg(test)]
pub(super) fn scanned_attribute() {
    SCANNED.with(|c| c.set((c.get().0 + 1, c.get().1)));
}

/// Counts `n` bindings examined by a lookup (test builds).
#[cfg(test)]
pub(super) fn scanned_bindings(n: usize) {
    SCANNED.with(|c| c.set((c.get().0, c.get().1 + n as u64)));
}

/// The attributes read and bindings examined on this thread since the last call, and resets them.
#[cfg(test)]
pub(crate) fn take_scanned() -> (u64, u64) {
    SCANNED.with(|c| c.replace((0, 0)))
}

/// Notes what the reader being dropped spent, for [`last_spent`].
#[cfg(test)]
pub(super) fn note_spent(units: u64) {
    LAST_SPENT.with(|l| l.set(units));
}

/// What the last reader dropped on this thread spent: the twin tests compare the fast paths' charges with
/// the general path's.
#[cfg(test)]
pub(crate) fn last_spent() -> u64 {
    LAST_SPENT.with(Cell::get)
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn the_budget_is_one_unit_a_byte_and_four_kib_by_default() {
        let w = Work::new(60_000, 1024);
        assert_eq!(w.budget, 64_096);
        w.charge(64_096);
        assert!(w.within());
        w.charge(1);
        assert!(!w.within());
        assert_eq!(w.spent(), 64_097);
        assert_eq!(Work::new(0, 512).budget, 2048);
        assert_eq!(Work::new(usize::MAX, usize::MAX).budget, u64::MAX / 1024);
    }
}
