//! Deterministic customer data: the same (seed, id) always gives the same record, whatever batch it is
//! generated in, so a store pre-filled by the server and a client's expectations agree.

use super::{write_request, Address, Customer, Request};
use crate::xsd::{DateTime, Decimal};

/// SplitMix64 (Steele, Lea, Flood 2014). Kept here rather than taken from `rand` because the generated data
/// must stay byte-identical across dependency upgrades, and these few lines are the whole algorithm.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (the modulo bias is irrelevant for test data).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const FIRST: &[&str] = &[
    "James",
    "Mary",
    "Robert",
    "Patricia",
    "Michael",
    "Jennifer",
    "William",
    "Linda",
    "David",
    "Elizabeth",
    "José",
    "María",
    "Søren",
    "Zoë",
    "Chloé",
    "Lars",
    "Ingrid",
    "Hiroshi",
    "Yuki",
    "Priya",
    "Arjun",
    "Fatima",
    "Omar",
    "Olga",
    "Dmitri",
    "Aoife",
    "Seán",
    "Lucía",
    "Mateo",
    "Emma",
    "Noah",
    "Amélie",
];
const LAST: &[&str] = &[
    "Smith",
    "Johnson",
    "Williams",
    "Brown",
    "Jones",
    "Garcia",
    "Miller",
    "Davis",
    "Rodriguez",
    "Martinez",
    "Müller",
    "Schmidt",
    "O'Brien",
    "Nguyen",
    "Kowalski",
    "Rossi",
    "Dubois",
    "Jensen",
    "Tanaka",
    "Sato",
    "Patel",
    "Kumar",
    "Haddad",
    "Ivanova",
    "Petrov",
    "Murphy",
    "Fernández",
    "López",
    "Andersson",
    "Novak",
];
const COMPANY_NOUN: &[&str] = &[
    "Logistics",
    "Industrial Supply",
    "Software",
    "Consulting",
    "Hardware",
    "Foods",
    "Textiles",
    "Analytics",
    "Marine",
    "Energy",
    "Printing",
    "Instruments",
    "Healthcare",
    "Outfitters",
];
const STREET: &[&str] = &[
    "Maple", "Oak", "Station", "High", "Church", "Mill", "Park", "Bridge", "Harbour", "Victoria",
    "King", "Elm", "Lake", "Hill", "Market", "Garden",
];
const STREET_KIND: &[&str] = &[
    "Street",
    "Avenue",
    "Road",
    "Lane",
    "Way",
    "Boulevard",
    "Drive",
    "Court",
];
const TAGS: &[&str] = &[
    "vip",
    "wholesale",
    "retail",
    "newsletter",
    "priority",
    "net-30",
    "eu",
    "apac",
    "churn-risk",
    "partner",
    "reseller",
    "trial",
];
const NOTES: &[&str] = &[
    "Prefers email contact.",
    "Invoices go to accounts payable, not the buyer.",
    "Asked for a call back about volume pricing.",
    "Ships to a loading dock: no deliveries before 8am.",
    "Net 30 terms approved by finance.",
];
/// Filler for padding a record's notes to reach an exact document size.
const NOTE_WORDS: &[&str] = &[
    "follow",
    "up",
    "on",
    "renewal",
    "quote",
    "sent",
    "pending",
    "approval",
    "meeting",
    "scheduled",
    "next",
    "quarter",
    "discount",
    "agreed",
    "delivery",
    "schedule",
    "confirmed",
    "contact",
    "changed",
    "billing",
];

/// (city, region, country, calling code, postal code pattern: `9` digit, `A` letter).
const CITIES: &[(&str, &str, &str, &str, &str)] = &[
    ("Springfield", "IL", "US", "+1", "99999"),
    ("Portland", "OR", "US", "+1", "99999"),
    ("Austin", "TX", "US", "+1", "99999"),
    ("Toronto", "ON", "CA", "+1", "A9A 9A9"),
    ("Manchester", "Greater Manchester", "GB", "+44", "AA9 9AA"),
    ("Edinburgh", "", "GB", "+44", "AA9 9AA"),
    ("München", "Bayern", "DE", "+49", "99999"),
    ("Lyon", "Auvergne-Rhône-Alpes", "FR", "+33", "99999"),
    ("Aarhus", "", "DK", "+45", "9999"),
    ("Kraków", "Małopolskie", "PL", "+48", "99-999"),
    ("Osaka", "Osaka", "JP", "+81", "999-9999"),
    ("Pune", "Maharashtra", "IN", "+91", "999999"),
    ("São Paulo", "SP", "BR", "+55", "99999-999"),
    ("Melbourne", "VIC", "AU", "+61", "9999"),
];

/// Lower-case ASCII for an e-mail local part or domain.
fn ascii_slug(s: &str) -> String {
    s.chars()
        .filter_map(|c| {
            let c = match c {
                'á' | 'à' | 'ã' | 'â' => 'a',
                'é' | 'è' | 'ë' => 'e',
                'í' => 'i',
                'ó' | 'ô' | 'ø' => 'o',
                'ú' | 'ü' => 'u',
                'ñ' => 'n',
                'ł' => 'l',
                ' ' => '-',
                c => c,
            };
            (c.is_ascii_alphanumeric() || c == '-').then(|| c.to_ascii_lowercase())
        })
        .collect()
}

fn digits(rng: &mut Rng, pattern: &str) -> String {
    pattern
        .chars()
        .map(|c| match c {
            '9' => char::from(b'0' + rng.below(10) as u8),
            'A' => char::from(b'A' + rng.below(26) as u8),
            c => c,
        })
        .collect()
}

/// The customer with this id under this seed.
fn customer(seed: u64, id: u64) -> Customer {
    let mut rng = Rng(seed ^ id.wrapping_mul(0xD1B5_4A32_D192_ED03));
    let first = rng.pick(FIRST);
    let last = rng.pick(LAST);
    let owner = rng.pick(LAST);
    let noun = rng.pick(COMPANY_NOUN);
    let company = match rng.below(4) {
        0 => format!("{owner} & Sons {noun} Ltd"),
        1 => format!("{owner} {noun} GmbH"),
        2 => format!("{owner} {noun} Inc."),
        _ => format!("{owner}-{} {noun}", rng.pick(LAST)),
    };
    let domain = format!("{}-{}.example", ascii_slug(owner), ascii_slug(noun));
    let (city, region, country, calling, postal) = CITIES[rng.below(CITIES.len() as u64) as usize];
    let created = DateTime {
        year: 2012 + rng.below(14) as i32,
        month: 1 + rng.below(12) as u8,
        day: 1 + rng.below(28) as u8,
        hour: rng.below(24) as u8,
        minute: rng.below(60) as u8,
        second: rng.below(60) as u8,
        nanos: if rng.chance(30) {
            rng.below(1000) as u32 * 1_000_000
        } else {
            0
        },
        offset_minutes: Some(0),
    };
    // Mostly small positive balances, some large accounts, some in credit.
    let cents = match rng.below(10) {
        0 => -(rng.below(500_000) as i128),
        1 => rng.below(25_000_000) as i128,
        _ => rng.below(1_000_000) as i128,
    };
    let mut tags: Vec<String> = Vec::new();
    for _ in 0..rng.below(4) {
        let tag = rng.pick(TAGS);
        if !tags.iter().any(|t| t == tag) {
            tags.push(tag.to_owned());
        }
    }
    Customer {
        id,
        first_name: first.to_owned(),
        last_name: last.to_owned(),
        email: format!(
            "{}.{}{}@{domain}",
            ascii_slug(first),
            ascii_slug(last),
            rng.below(100)
        ),
        phone: format!(
            "{calling} {} {}",
            digits(&mut rng, "999"),
            digits(&mut rng, "999 9999")
        ),
        company,
        address: Address {
            street: format!(
                "{} {} {}",
                1 + rng.below(2500),
                rng.pick(STREET),
                rng.pick(STREET_KIND)
            ),
            city: city.to_owned(),
            region: region.to_owned(),
            postal_code: digits(&mut rng, postal),
            country: country.to_owned(),
        },
        created,
        balance: Decimal::new(cents, 2),
        active: rng.chance(85),
        tags,
        notes: if rng.chance(25) {
            rng.pick(NOTES).to_owned()
        } else {
            String::new()
        },
    }
}

/// `count` customers with ids `first_id..first_id + count`.
pub fn generate(count: usize, seed: u64, first_id: u64) -> Vec<Customer> {
    (0..count as u64)
        .map(|i| customer(seed, first_id.wrapping_add(i)))
        .collect()
}

/// Customers (ids from 1) whose `add` request envelope is `target_xml_bytes` long, to within a few bytes
/// (the last record's notes are padded to close the gap). One customer (about 0.6 KB of envelope) is the
/// smallest possible request, so smaller targets get that.
pub fn generate_for_size(target_xml_bytes: usize, seed: u64) -> Vec<Customer> {
    let mut one = Vec::with_capacity(1024);
    write_request(&Request::Add(Vec::new()), &mut one);
    let mut size = one.len();
    let mut customers = Vec::new();
    loop {
        let next = customer(seed, customers.len() as u64 + 1);
        one.clear();
        super::write_customer(&mut one, &next);
        if !customers.is_empty() && size + one.len() > target_xml_bytes {
            break;
        }
        size += one.len();
        customers.push(next);
    }
    let Some(last) = customers.last_mut() else {
        return customers;
    };
    let mut gap = target_xml_bytes.saturating_sub(size);
    const NOTES_TAGS: usize = "<notes></notes>".len();
    if last.notes.is_empty() {
        if gap <= NOTES_TAGS {
            return customers;
        }
        gap -= NOTES_TAGS;
    }
    let mut rng = Rng(seed ^ 0x5EED);
    while gap > 0 {
        let sep = usize::from(!last.notes.is_empty());
        let word = rng.pick(NOTE_WORDS);
        if sep + word.len() > gap {
            // Close the last few bytes with a word cut to fit (all filler is ASCII).
            if gap > sep {
                last.notes.push_str(&" "[..sep]);
                last.notes.push_str(&word[..gap - sep]);
            }
            break;
        }
        if sep == 1 {
            last.notes.push(' ');
        }
        last.notes.push_str(word);
        gap -= sep + word.len();
    }
    customers
}
