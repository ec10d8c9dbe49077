//! The generator port (see generate.h): same (seed, id), same record; keep in step with generate.rs (the zeep
//! check compares `get` answers with bench-server's).
#include "generate.h"

#include <algorithm>
#include <iterator>

namespace peer {
namespace {

/// SplitMix64 (Steele, Lea, Flood 2014), as generate.rs.
struct Rng {
    std::uint64_t state;

    std::uint64_t next() {
        state += 0x9E3779B97F4A7C15ULL;
        std::uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    std::uint64_t below(std::uint64_t n) { return next() % n; }
    template <std::size_t N>
    const char* pick(const char* const (&items)[N]) { return items[below(N)]; }
    bool chance(std::uint64_t percent) { return below(100) < percent; }
};

const char* const FIRST[] = {"James", "Mary", "Robert", "Patricia", "Michael", "Jennifer", "William", "Linda",
    "David", "Elizabeth", "José", "María", "Søren", "Zoë", "Chloé", "Lars", "Ingrid", "Hiroshi", "Yuki",
    "Priya", "Arjun", "Fatima", "Omar", "Olga", "Dmitri", "Aoife", "Seán", "Lucía", "Mateo", "Emma", "Noah",
    "Amélie"};
const char* const LAST[] = {"Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis",
    "Rodriguez", "Martinez", "Müller", "Schmidt", "O'Brien", "Nguyen", "Kowalski", "Rossi", "Dubois", "Jensen",
    "Tanaka", "Sato", "Patel", "Kumar", "Haddad", "Ivanova", "Petrov", "Murphy", "Fernández", "López",
    "Andersson", "Novak"};
const char* const COMPANY_NOUN[] = {"Logistics", "Industrial Supply", "Software", "Consulting", "Hardware",
    "Foods", "Textiles", "Analytics", "Marine", "Energy", "Printing", "Instruments", "Healthcare", "Outfitters"};
const char* const STREET[] = {"Maple", "Oak", "Station", "High", "Church", "Mill", "Park", "Bridge", "Harbour",
    "Victoria", "King", "Elm", "Lake", "Hill", "Market", "Garden"};
const char* const STREET_KIND[] = {"Street", "Avenue", "Road", "Lane", "Way", "Boulevard", "Drive", "Court"};
const char* const TAGS[] = {"vip", "wholesale", "retail", "newsletter", "priority", "net-30", "eu", "apac",
    "churn-risk", "partner", "reseller", "trial"};
const char* const NOTES[] = {"Prefers email contact.", "Invoices go to accounts payable, not the buyer.",
    "Asked for a call back about volume pricing.", "Ships to a loading dock: no deliveries before 8am.",
    "Net 30 terms approved by finance."};

struct City {
    const char *city, *region, *country, *calling, *postal;
};
/// Postal code patterns: 9 a digit, A a letter.
const City CITIES[] = {
    {"Springfield", "IL", "US", "+1", "99999"},
    {"Portland", "OR", "US", "+1", "99999"},
    {"Austin", "TX", "US", "+1", "99999"},
    {"Toronto", "ON", "CA", "+1", "A9A 9A9"},
    {"Manchester", "Greater Manchester", "GB", "+44", "AA9 9AA"},
    {"Edinburgh", "", "GB", "+44", "AA9 9AA"},
    {"München", "Bayern", "DE", "+49", "99999"},
    {"Lyon", "Auvergne-Rhône-Alpes", "FR", "+33", "99999"},
    {"Aarhus", "", "DK", "+45", "9999"},
    {"Kraków", "Małopolskie", "PL", "+48", "99-999"},
    {"Osaka", "Osaka", "JP", "+81", "999-9999"},
    {"Pune", "Maharashtra", "IN", "+91", "999999"},
    {"São Paulo", "SP", "BR", "+55", "99999-999"},
    {"Melbourne", "VIC", "AU", "+61", "9999"},
};

std::string digits(Rng& rng, const char* pattern) {
    std::string out;
    for (const char* p = pattern; *p; p++) {
        if (*p == '9') {
            out += static_cast<char>('0' + rng.below(10));
        } else if (*p == 'A') {
            out += static_cast<char>('A' + rng.below(26));
        } else {
            out += *p;
        }
    }
    return out;
}

/// `cents / 100` with exactly two fraction digits, as bench-proto's Decimal writes it.
std::string money(std::int64_t cents) {
    std::string out = cents < 0 ? "-" : "";
    std::string d = std::to_string(cents < 0 ? -cents : cents);
    if (d.size() <= 2) {
        out += "0." + std::string(2 - d.size(), '0') + d;
    } else {
        out += d.substr(0, d.size() - 2) + "." + d.substr(d.size() - 2);
    }
    return out;
}

/// The customer with this id under this seed (the random draws in generate.rs's order).
cust__Customer* customer(std::uint64_t seed, std::uint64_t id) {
    Rng rng{seed ^ (id * 0xD1B54A32D192ED03ULL)};
    const std::string first = rng.pick(FIRST);
    const std::string last = rng.pick(LAST);
    const std::string owner = rng.pick(LAST);
    const std::string noun = rng.pick(COMPANY_NOUN);
    std::string company;
    switch (rng.below(4)) {
        case 0: company = owner + " & Sons " + noun + " Ltd"; break;
        case 1: company = owner + " " + noun + " GmbH"; break;
        case 2: company = owner + " " + noun + " Inc."; break;
        default: company = owner + "-" + rng.pick(LAST) + " " + noun; break;
    }
    const std::string domain = ascii_slug(owner) + "-" + ascii_slug(noun) + ".example";
    const City& city = CITIES[rng.below(std::size(CITIES))];
    const int year = 2012 + static_cast<int>(rng.below(14));
    const int month = 1 + static_cast<int>(rng.below(12));
    const int day = 1 + static_cast<int>(rng.below(28));
    const int hour = static_cast<int>(rng.below(24));
    const int minute = static_cast<int>(rng.below(60));
    const int second = static_cast<int>(rng.below(60));
    const int millis = rng.chance(30) ? static_cast<int>(rng.below(1000)) : 0;
    std::int64_t cents;
    switch (rng.below(10)) {
        case 0: cents = -static_cast<std::int64_t>(rng.below(500000)); break;
        case 1: cents = static_cast<std::int64_t>(rng.below(25000000)); break;
        default: cents = static_cast<std::int64_t>(rng.below(1000000)); break;
    }
    auto* tags = new cust__Tags();
    for (std::uint64_t i = 0, n = rng.below(4); i < n; i++) {
        const std::string tag = rng.pick(TAGS);
        if (std::find(tags->tag.begin(), tags->tag.end(), tag) == tags->tag.end()) {
            tags->tag.push_back(tag);
        }
    }
    auto* c = new cust__Customer();
    c->id = id;
    c->firstName = first;
    c->lastName = last;
    c->email = ascii_slug(first) + "." + ascii_slug(last) + std::to_string(rng.below(100)) + "@" + domain;
    c->phone = std::string(city.calling) + " " + digits(rng, "999");
    c->phone += " " + digits(rng, "999 9999");
    c->company = company;
    c->address = new cust__Address();
    // One draw per statement: C++ leaves the order of operands of + unspecified.
    c->address->street = std::to_string(1 + rng.below(2500));
    c->address->street += std::string(" ") + rng.pick(STREET);
    c->address->street += std::string(" ") + rng.pick(STREET_KIND);
    c->address->city = city.city;
    c->address->region = city.region;
    c->address->postalCode = digits(rng, city.postal);
    c->address->country = city.country;
    c->created = peer_dateTime{year,
                               static_cast<std::uint8_t>(month),
                               static_cast<std::uint8_t>(day),
                               static_cast<std::uint8_t>(hour),
                               static_cast<std::uint8_t>(minute),
                               static_cast<std::uint8_t>(second),
                               static_cast<std::uint32_t>(millis) * 1000000u,
                               0,
                               true};
    c->balance = money(cents);
    c->active = rng.chance(85);
    c->tags = tags;
    // Empty notes are not written (bench-proto's writer omits them too).
    c->notes = rng.chance(25) ? new std::string(rng.pick(NOTES)) : nullptr;
    return c;
}

}  // namespace

std::string ascii_slug(const std::string& utf8) {
    std::string out;
    for (std::size_t i = 0; i < utf8.size();) {
        // Decode one UTF-8 sequence (the names are well-formed; anything else is dropped below).
        const unsigned char b = static_cast<unsigned char>(utf8[i]);
        std::uint32_t cp = b;
        std::size_t len = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
        if (len > 1) {
            cp = b & (0x3F >> (len - 1));
            for (std::size_t k = 1; k < len && i + k < utf8.size(); k++) {
                cp = (cp << 6) | (static_cast<unsigned char>(utf8[i + k]) & 0x3F);
            }
        }
        i += len;
        switch (cp) {
            case 0xE1: case 0xE0: case 0xE3: case 0xE2: cp = 'a'; break;  // á à ã â
            case 0xE9: case 0xE8: case 0xEB: cp = 'e'; break;             // é è ë
            case 0xED: cp = 'i'; break;                                   // í
            case 0xF3: case 0xF4: case 0xF8: cp = 'o'; break;             // ó ô ø
            case 0xFA: case 0xFC: cp = 'u'; break;                        // ú ü
            case 0xF1: cp = 'n'; break;                                   // ñ
            case 0x142: cp = 'l'; break;                                  // ł
            case ' ': cp = '-'; break;
            default: break;
        }
        const bool alnum = (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9');
        if (alnum || cp == '-') {
            out += static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp - 'A' + 'a' : cp);
        }
    }
    return out;
}

std::vector<CustomerPtr> generate(std::size_t count, std::uint64_t seed, std::uint64_t first_id) {
    std::vector<CustomerPtr> out;
    out.reserve(count);
    for (std::size_t i = 0; i < count; i++) {
        out.push_back(own(customer(seed, first_id + i)));
    }
    return out;
}

}  // namespace peer
