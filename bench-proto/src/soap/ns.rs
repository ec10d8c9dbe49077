//! The namespace declarations in scope: a stack of bindings borrowed from the input, pushed by start tags and
//! popped by their end tags. The innermost default namespace is held apart; a prefix is looked up by a scan
//! from the innermost binding while few are in scope (a SOAP message declares a handful), and through a hash
//! table of the prefixed bindings (open addressing, linear probing) once more are, so that a lookup examines
//! one binding or so however many are in scope. [`Scope::resolve`] says how many it examined, which the
//! reader charges to its work budget: prefixes chosen to collide cost probes, and the budget bounds them.

use std::borrow::Cow;
use std::cell::Cell;

use super::recycle;

/// The namespace the `xml` prefix is bound to by definition.
pub(super) const XML_NS: &[u8] = b"http://www.w3.org/XML/1998/namespace";
/// The namespace of the `xmlns` attributes themselves, which nothing may be bound to.
pub(super) const XMLNS_NS: &[u8] = b"http://www.w3.org/2000/xmlns/";

/// What a prefix (or the absence of one) stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Resolved<'s> {
    /// A namespace URI.
    Bound(&'s [u8]),
    /// No namespace: an unprefixed name without a default namespace in scope (or after `xmlns=""`).
    NoNamespace,
    /// A prefix nothing declares.
    Undeclared,
}

#[derive(Debug)]
struct Binding<'a> {
    /// Empty for the default namespace.
    prefix: &'a [u8],
    uri: Cow<'a, [u8]>,
    /// Depth of the element that declared it.
    depth: usize,
    /// The binding of the same prefix (or the default namespace) this one hides, as its index + 1 (or, for
    /// a prefix, its slot in the table; 0: none): in scope again once this one goes.
    hides: u64,
}

/// The bindings in scope, innermost last.
#[derive(Debug)]
pub(super) struct Scope<'a> {
    bindings: Vec<Binding<'a>>,
    /// The innermost default namespace binding, as its index + 1 (0: none).
    default: u64,
    /// The innermost binding of each prefix, as its index + 1 in the low half and the prefix's fingerprint
    /// (the low half of its hash) in the high half (0: an empty slot), so that a probe seldom needs the
    /// binding: built once more than [`SCAN`] prefixed bindings are in scope (empty until then), a power of
    /// two long, at least twice the prefixed bindings in scope.
    slots: Vec<u64>,
    /// Prefixed bindings in scope.
    prefixed: usize,
    /// Changes whenever a binding comes or goes, so that a lookup remembered with it is known to hold.
    generation: u64,
}

/// Prefixed bindings looked up by a scan, before the table is built (more than a SOAP message declares).
const SCAN: usize = 8;

thread_local! {
    static BINDINGS: Cell<Vec<Binding<'static>>> = const { Cell::new(Vec::new()) };
}

impl Default for Scope<'_> {
    fn default() -> Self {
        // A SOAP message declares a handful: one allocation serves them, kept for the next message.
        Self {
            bindings: recycle::take(&BINDINGS, 8),
            default: 0,
            slots: Vec::new(),
            prefixed: 0,
            generation: 0,
        }
    }
}

impl Drop for Scope<'_> {
    fn drop(&mut self) {
        recycle::keep(&BINDINGS, std::mem::take(&mut self.bindings));
    }
}

/// The hash of `prefix`: its words folded by multiplication. Its high bits choose where the probes start
/// (Fibonacci hashing), its low half is the prefix's fingerprint in the table. Fixed, so prefixes can be
/// chosen to collide: the probes that costs are charged to the reader's work budget.
#[inline]
fn hash(prefix: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = prefix.len() as u64;
    let mut at = 0;
    while at + 8 <= prefix.len() {
        h = (h ^ crate::swar::word(prefix, at)).wrapping_mul(K);
        at += 8;
    }
    (h ^ crate::swar::short(&prefix[at..])).wrapping_mul(K)
}

/// Where the probes for a prefix of hash `h` start in a table of `mask + 1` slots.
#[inline]
fn home(h: u64, mask: usize) -> usize {
    let bits = (mask + 1).trailing_zeros();
    (h >> (64 - bits)) as usize & mask
}

/// The slot of binding `index` (from 0) of a prefix of hash `h`.
#[inline]
fn slot(h: u64, index: usize) -> u64 {
    (h << 32) | (index as u64 + 1)
}

impl<'a> Scope<'a> {
    pub(super) fn len(&self) -> usize {
        self.bindings.len()
    }

    pub(super) fn generation(&self) -> u64 {
        self.generation
    }

    /// Adds a declaration made by the element at `depth`: `prefix` is `None` for `xmlns="…"`. Refuses what
    /// Namespaces in XML 1.0 forbids.
    pub(super) fn declare(
        &mut self,
        prefix: Option<&'a [u8]>,
        uri: Cow<'a, [u8]>,
        depth: usize,
    ) -> Result<(), &'static str> {
        let reserved = uri.as_ref() == XML_NS || uri.as_ref() == XMLNS_NS;
        match prefix {
            Some(b"xmlns") => return Err("the prefix 'xmlns' cannot be declared"),
            Some(b"xml") if uri.as_ref() == XML_NS => return Ok(()),
            Some(b"xml") => return Err("the prefix 'xml' cannot be bound to another namespace"),
            Some(_) if reserved => {
                return Err(
                    "only the prefix 'xml' may be bound to the XML namespace, none to xmlns's",
                )
            }
            Some(_) if uri.is_empty() => {
                return Err("a namespace prefix cannot be undeclared (xmlns:p=\"\")")
            }
            None if reserved => return Err("the XML and xmlns namespaces cannot be the default"),
            _ => {}
        }
        self.generation += 1;
        let index = self.bindings.len();
        let hides = match prefix {
            None => std::mem::replace(&mut self.default, index as u64 + 1),
            Some(p) => {
                self.make_room();
                self.prefixed += 1;
                if self.slots.is_empty() {
                    // Found by a scan: what it hides is noted if the table is ever built.
                    0
                } else {
                    let (at, _, h) = self.slot_of(p);
                    std::mem::replace(&mut self.slots[at], slot(h, index))
                }
            }
        };
        self.bindings.push(Binding {
            prefix: prefix.unwrap_or_default(),
            uri,
            depth,
            hides,
        });
        Ok(())
    }

    /// The slot of the table that holds `prefix`'s innermost binding, or the empty slot where it would go,
    /// how many slots were examined to find it, and the prefix's hash.
    #[inline]
    fn slot_of(&self, prefix: &[u8]) -> (usize, usize, u64) {
        let h = hash(prefix);
        let mask = self.slots.len() - 1;
        let fingerprint = h << 32;
        let (mut at, mut probes) = (home(h, mask), 1);
        loop {
            let s = self.slots[at];
            if s == 0
                || (s >> 32 << 32 == fingerprint
                    && super::scan::same(self.bindings[s as u32 as usize - 1].prefix, prefix))
            {
                return (at, probes, h);
            }
            at = (at + 1) & mask;
            probes += 1;
        }
    }

    /// Builds or grows the table if one more prefixed binding would need it (a declaration does this first;
    /// so does a fast path that skips one, for the scope to stay as the general path leaves it).
    #[inline]
    pub(super) fn make_room(&mut self) {
        let full = if self.slots.is_empty() {
            self.prefixed + 1 > SCAN
        } else {
            2 * (self.prefixed + 1) > self.slots.len()
        };
        if full {
            self.grow();
        }
    }

    /// Builds the table (or doubles it) and puts every prefixed binding in, outermost first, each noting the
    /// binding of its prefix it hides (whose slot it takes, as when it was declared).
    #[cold]
    fn grow(&mut self) {
        let len = (2 * self.slots.len()).max(4 * SCAN);
        self.slots.clear();
        self.slots.resize(len, 0);
        for i in 0..self.bindings.len() {
            let prefix = self.bindings[i].prefix;
            if !prefix.is_empty() {
                let (at, _, h) = self.slot_of(prefix);
                self.bindings[i].hides = std::mem::replace(&mut self.slots[at], slot(h, i));
            }
        }
    }

    /// Drops the declarations of elements deeper than `depth` (their end tags have been read), innermost
    /// first: each hands its slot (or the default) back to the binding it hid. Emptying a slot is safe with
    /// linear probing because the bindings go in the reverse order of their coming: no binding still in
    /// scope was placed past a slot that was free when it came.
    #[inline]
    pub(super) fn leave(&mut self, depth: usize) {
        // Most elements declare nothing: one comparison, inline.
        if self.bindings.last().is_some_and(|b| b.depth > depth) {
            self.pop_deeper(depth);
        }
    }

    fn pop_deeper(&mut self, depth: usize) {
        while let Some(b) = self.bindings.last() {
            if b.depth <= depth {
                break;
            }
            let (prefix, hides) = (b.prefix, b.hides);
            if prefix.is_empty() {
                self.default = hides;
            } else {
                if !self.slots.is_empty() {
                    let (at, _, _) = self.slot_of(prefix);
                    self.slots[at] = hides;
                }
                self.prefixed -= 1;
            }
            self.bindings.pop();
            self.generation += 1;
        }
    }

    /// The default namespace here (what an unprefixed name is in): one step.
    #[inline]
    pub(super) fn default_namespace(&self) -> Resolved<'_> {
        match self.default {
            0 => Resolved::NoNamespace,
            i => match &self.bindings[i as usize - 1].uri {
                uri if uri.is_empty() => Resolved::NoNamespace,
                uri => Resolved::Bound(uri),
            },
        }
    }

    /// The namespace of a name with this prefix (`None`: unprefixed, so the default namespace), and how
    /// many bindings the lookup examined.
    #[inline]
    pub(super) fn resolve(&self, prefix: Option<&[u8]>) -> (Resolved<'_>, usize) {
        let key = match prefix {
            Some(b"xml") => return (Resolved::Bound(XML_NS), 0),
            Some(b"") => return (Resolved::Undeclared, 0),
            Some(p) => p,
            None => return (self.default_namespace(), 1),
        };
        if self.slots.is_empty() {
            let found = self
                .bindings
                .iter()
                .rev()
                .position(|b| super::scan::same(b.prefix, key));
            #[cfg(test)]
            super::work::scanned_bindings(found.map_or(self.bindings.len(), |i| i + 1));
            return match found {
                Some(i) => (
                    Resolved::Bound(&self.bindings[self.bindings.len() - 1 - i].uri),
                    i + 1,
                ),
                None => (Resolved::Undeclared, self.bindings.len()),
            };
        }
        let (at, probes, _) = self.slot_of(key);
        #[cfg(test)]
        super::work::scanned_bindings(probes);
        let found = match self.slots[at] {
            0 => Resolved::Undeclared,
            s => Resolved::Bound(&self.bindings[s as u32 as usize - 1].uri),
        };
        (found, probes)
    }

    /// How many bindings a lookup of `prefix` would examine, were it declared now (as the innermost binding
    /// of its prefix, the scope having made room for it first: see [`make_room`](Self::make_room)): what the
    /// general path's lookup costs after a declaration a fast path skips.
    pub(super) fn probes_once_declared(&self, prefix: &[u8]) -> usize {
        if self.slots.is_empty() {
            // The innermost binding: the first a scan examines.
            1
        } else {
            // Its slot is the one it would take: the first empty one, or the one of the binding it hides.
            self.slot_of(prefix).1
        }
    }
}

/// `count` prefixes that all start their probes at the same slot of a table of `slots` slots (and so of every
/// smaller one): the worst a message can make of the table. For the hostile corpus.
pub(crate) fn colliding_prefixes(count: usize, slots: usize) -> Vec<String> {
    let mask = slots.next_power_of_two() - 1;
    (0..)
        .map(|i| format!("c{i}"))
        .filter(|p| home(hash(p.as_bytes()), mask) == 0)
        .take(count)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(s: &Scope<'_>, p: Option<&[u8]>) -> Option<Vec<u8>> {
        match s.resolve(p).0 {
            Resolved::Bound(u) => Some(u.to_vec()),
            Resolved::NoNamespace => Some(Vec::new()),
            Resolved::Undeclared => None,
        }
    }

    #[test]
    fn inner_declarations_shadow_and_leave_with_their_element() {
        let mut s = Scope::default();
        s.declare(None, Cow::Borrowed(b"urn:d"), 1).unwrap();
        s.declare(Some(b"p"), Cow::Borrowed(b"urn:p1"), 1).unwrap();
        s.declare(Some(b"p"), Cow::Borrowed(b"urn:p2"), 2).unwrap();
        s.declare(None, Cow::Borrowed(b""), 2).unwrap();
        assert_eq!(s.resolve(Some(b"p")).0, Resolved::Bound(b"urn:p2"));
        assert_eq!(s.resolve(None).0, Resolved::NoNamespace);
        assert_eq!(s.resolve(Some(b"q")).0, Resolved::Undeclared);
        assert_eq!(s.resolve(Some(b"xml")).0, Resolved::Bound(XML_NS));
        s.leave(1);
        assert_eq!(s.len(), 2);
        assert_eq!(s.resolve(Some(b"p")).0, Resolved::Bound(b"urn:p1"));
        assert_eq!(s.resolve(None).0, Resolved::Bound(b"urn:d"));
        s.leave(0);
        assert_eq!(s.resolve(None).0, Resolved::NoNamespace);
        assert_eq!(s.resolve(Some(b"p")).0, Resolved::Undeclared);
    }

    #[test]
    fn forbidden_declarations() {
        let mut s = Scope::default();
        let ns = |u: &'static [u8]| Cow::Borrowed(u);
        assert!(s.declare(Some(b"xmlns"), ns(b"urn:x"), 1).is_err());
        assert!(s.declare(Some(b"xml"), ns(b"urn:x"), 1).is_err());
        assert!(s.declare(Some(b"xml"), ns(XML_NS), 1).is_ok());
        assert!(s.declare(Some(b"x"), ns(XML_NS), 1).is_err());
        assert!(s.declare(Some(b"x"), ns(XMLNS_NS), 1).is_err());
        assert!(s.declare(Some(b"x"), ns(b""), 1).is_err());
        assert!(s.declare(None, ns(XMLNS_NS), 1).is_err());
        assert_eq!(s.len(), 0);
    }

    /// The table against its twin, a plain list searched from the innermost binding: nested elements
    /// declaring prefixes that repeat, collide (long ones sharing their first words) and grow the table,
    /// every prefix looked up at every step, on the way in and on the way out.
    #[test]
    fn the_table_answers_as_a_list_searched_from_the_innermost() {
        let prefixes: Vec<Vec<u8>> = (0..40)
            .map(|i| match i % 4 {
                0 => format!("p{}", i % 7).into_bytes(),
                1 => format!("a_long_prefix_sharing_words_{}", i % 9).into_bytes(),
                2 => format!("q{i}").into_bytes(),
                _ => Vec::new(),
            })
            .collect();
        let uris: Vec<Vec<u8>> = (0..40).map(|i| format!("urn:{i}").into_bytes()).collect();
        let mut s = Scope::default();
        let mut list: Vec<(usize, &[u8], &[u8])> = Vec::new();
        let check = |s: &Scope<'_>, list: &[(usize, &[u8], &[u8])]| {
            for p in prefixes.iter().chain([b"zz".to_vec()].iter()) {
                let want = list
                    .iter()
                    .rev()
                    .find(|(_, q, _)| q == p)
                    .map(|(_, _, u)| u.to_vec());
                let key = (!p.is_empty()).then_some(p.as_slice());
                let got = bound(s, key);
                match (key, want) {
                    (None, None) => assert_eq!(got, Some(Vec::new())),
                    (_, want) => assert_eq!(got, want, "{}", String::from_utf8_lossy(p)),
                }
            }
        };
        for (depth, (p, u)) in prefixes.iter().zip(&uris).enumerate() {
            let prefix = (!p.is_empty()).then_some(p.as_slice());
            s.declare(prefix, Cow::Borrowed(u), depth + 1).unwrap();
            list.push((depth + 1, p, u));
            check(&s, &list);
        }
        for depth in (0..prefixes.len()).rev() {
            s.leave(depth);
            list.retain(|(d, _, _)| *d <= depth);
            check(&s, &list);
        }
        assert_eq!(s.len(), 0);
    }

    #[test]
    fn a_lookup_examines_one_binding_unless_prefixes_collide() {
        let names: Vec<String> = (0..60).map(|i| format!("p{i}")).collect();
        let mut s = Scope::default();
        for (i, n) in names.iter().enumerate() {
            s.declare(Some(n.as_bytes()), Cow::Borrowed(b"urn:x"), i + 1)
                .unwrap();
        }
        let probes: usize = names.iter().map(|n| s.resolve(Some(n.as_bytes())).1).sum();
        // Half full at most: linear probing finds a key in about 1.5 probes.
        assert!(probes <= 2 * names.len(), "{probes}");
        assert_eq!(s.resolve(None).1, 1);
        assert_eq!(s.probes_once_declared(b"p59"), s.resolve(Some(b"p59")).1);

        // Prefixes chosen to collide: the last one declared is found at the end of their run.
        let colliding = colliding_prefixes(60, 128);
        let mut s = Scope::default();
        for (i, n) in colliding.iter().enumerate() {
            s.declare(Some(n.as_bytes()), Cow::Borrowed(b"urn:x"), i + 1)
                .unwrap();
        }
        let last = colliding.last().unwrap().as_bytes();
        assert_eq!(s.resolve(Some(last)), (Resolved::Bound(b"urn:x"), 60));
        assert_eq!(s.resolve(Some(b"zz")).0, Resolved::Undeclared);
    }
}
