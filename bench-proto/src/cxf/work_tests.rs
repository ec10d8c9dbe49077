//! The work budget bounds the scans, whatever the message: random messages built from everything that makes
//! the attribute and namespace scans work (attributes by the dozen, declarations, prefixes chosen to collide
//! in the table, header blocks marked `mustUnderstand`, prefixed elements, QNames), read within random
//! budgets. Every attribute the reader reads and every binding a lookup examines is counted as it happens
//! (test builds count them); each is charged, and a message is refused soon after its charges pass its budget.
//! The messages are CXF requests, so the test lives with the CXF reader (soap is the layer below it).

use crate::cxf;
use crate::soap::work::{last_spent, take_scanned, ATTRIBUTE, DECLARATION, PROBE};
use crate::soap::{colliding_prefixes, Limit, Limits, SoapError};

/// A small random number generator (xorshift*), so that every run reads the same messages.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n.max(1)
    }
}

/// The prefixes a message may use: short ones, long ones sharing their first words, and ones chosen to
/// collide in the reader's table.
fn prefixes() -> Vec<String> {
    let mut all: Vec<String> = (0..8).map(|i| format!("p{i}")).collect();
    all.extend((0..8).map(|i| format!("a_long_prefix_sharing_its_words_{i}")));
    all.extend(colliding_prefixes(24, 128));
    all
}

/// ` name=""` attributes, no two alike: plain ones, and `prefix:mustUnderstand` / `prefix:actor` ones.
fn attributes(rng: &mut Rng, bound: &[&str], max: usize) -> String {
    let mut names = std::collections::HashSet::new();
    (0..rng.below(max + 1))
        .filter_map(|i| {
            let (name, value) = match (rng.below(4), bound.get(rng.below(bound.len()))) {
                (0, Some(p)) => (format!("{p}:mustUnderstand"), format!("{}", rng.below(2))),
                (1, Some(p)) => (format!("{p}:actor"), format!("urn:a{i}")),
                (2, Some(p)) => (format!("{p}:a{i}"), "v".to_owned()),
                _ => (format!("a{i}"), String::new()),
            };
            names
                .insert(name.clone())
                .then(|| format!(" {name}=\"{value}\""))
        })
        .collect()
}

/// Declarations of `count` of the prefixes (to `urn:` URIs, the last to the CXF types namespace), and their
/// names.
fn declarations<'p>(rng: &mut Rng, all: &'p [String], count: usize) -> (String, Vec<&'p str>) {
    let names: Vec<&str> = (0..count)
        .map(|_| all[rng.below(all.len())].as_str())
        .collect();
    let mut unique: Vec<&str> = Vec::new();
    for n in names {
        if !unique.contains(&n) {
            unique.push(n);
        }
    }
    let text = unique
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let uri = if i + 1 == unique.len() {
                cxf::TYPES_NS.to_owned()
            } else {
                format!("urn:{p}")
            };
            format!(" xmlns:{p}=\"{uri}\"")
        })
        .collect();
    (text, unique)
}

/// A random message: the reference request, with declarations on the Envelope and the Body, a Header of
/// blocks with attributes, and the item's elements written with the last declared prefix (bound to the
/// types namespace) and given attributes.
fn message(rng: &mut Rng, all: &[String]) -> String {
    let mut text = Vec::new();
    cxf::write_request(&cxf::echo_complex_request(1 + rng.below(3), 1), &mut text);
    let text = String::from_utf8(text).expect("UTF-8");
    let (env_count, body_count) = (rng.below(31), rng.below(30));
    let (env, env_names) = declarations(rng, all, env_count);
    let (body, body_names) = declarations(rng, all, body_count);
    let mut bound: Vec<&str> = env_names.iter().chain(&body_names).copied().collect();
    bound.push("soap");
    let blocks: String = (0..rng.below(40))
        .map(|_| format!("<h:b{}/>", attributes(rng, &bound, 64)))
        .collect();
    let mut out = text
        .replacen(
            "<soap:Envelope xmlns:soap",
            &format!("<soap:Envelope{env} xmlns:soap"),
            1,
        )
        .replacen(
            "<soap:Body>",
            &format!("<soap:Header xmlns:h=\"urn:h\">{blocks}</soap:Header><soap:Body{body}>"),
            1,
        );
    if let Some(t) = body_names.last().filter(|_| rng.below(2) == 0) {
        out = out
            .replace("<var", &format!("<{t}:var"))
            .replace("</var", &format!("</{t}:var"));
    }
    for _ in 0..rng.below(20) {
        let attrs = attributes(rng, &bound, 63);
        out = out.replacen("<varEnum>", &format!("<varEnum{attrs}>"), 1);
    }
    out
}

/// How far past its budget a refused message may have charged: the budget is checked at every start tag the
/// general path reads and at the end, so past it come at most one tag's attributes, a header block's
/// lookups, an element's and a QName's lookup, and what the fast paths charge for what they read (under a
/// unit for 16 bytes).
fn overrun(limits: &Limits, len: usize) -> u64 {
    let attrs = limits.max_attributes as u64;
    let scope = limits.max_namespaces_in_scope as u64 + 1;
    attrs * (ATTRIBUTE + DECLARATION) + (attrs + 2) * scope * PROBE + len as u64 / 16
}

#[test]
fn the_budget_bounds_the_scans_of_any_message() {
    let all = prefixes();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut accepted, mut refused) = (0, 0);
    for _ in 0..400 {
        let doc = message(&mut rng, &all);
        let limits = Limits {
            max_work: [8192, 4096, 2048, 1024, 256, 32][rng.below(6)],
            ..Limits::default()
        };
        let budget = (doc.len() as u64 + 4096) * limits.max_work as u64 / 1024;
        take_scanned();
        let read = cxf::parse_request_with(doc.as_bytes(), &limits);
        let (attributes, bindings) = take_scanned();
        let spent = last_spent();
        // Every scan is charged: an attribute may be read twice (once more by a service that wants its
        // value) for its charge, a binding examined once.
        assert!(
            attributes * ATTRIBUTE / 2 + bindings * PROBE <= spent,
            "{attributes} attributes and {bindings} bindings scanned for {spent} units\n{doc}"
        );
        match read {
            Ok(_) => {
                accepted += 1;
                assert!(spent <= budget, "accepted at {spent} of {budget}\n{doc}");
            }
            Err(e) => {
                refused += u32::from(matches!(
                    e,
                    SoapError::Limit {
                        limit: Limit::Work,
                        ..
                    }
                ));
                let bound = budget + overrun(&limits, doc.len());
                assert!(spent <= bound, "{e}: {spent} units, past {bound}\n{doc}");
            }
        }
    }
    // Both outcomes are exercised.
    assert!(
        accepted > 50 && refused > 50,
        "{accepted} accepted, {refused} refused for work"
    );
}
