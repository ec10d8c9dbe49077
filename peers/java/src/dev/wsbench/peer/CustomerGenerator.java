//! bench-proto's deterministic customer generator (bench-proto/src/customer/generate.rs), ported so the store
//! starts with the very records bench-server's does and `get` answers the same data.
package dev.wsbench.peer;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

import javax.xml.datatype.DatatypeConfigurationException;
import javax.xml.datatype.DatatypeConstants;
import javax.xml.datatype.DatatypeFactory;
import javax.xml.datatype.XMLGregorianCalendar;

import dev.wsbench.peer.customer.Address;
import dev.wsbench.peer.customer.Customer;
import dev.wsbench.peer.customer.Tags;

/** Same (seed, id), same record: keep in step with generate.rs (the zeep check compares get answers). */
public final class CustomerGenerator {
    /** bench-server's PREFILL_SEED and PREFILL_FIRST_ID (bench-server/src/http/store.rs). */
    public static final long PREFILL_SEED = 0x5753_4245_4e43_4821L;
    public static final long PREFILL_FIRST_ID = 1;

    private static final String[] FIRST = {"James", "Mary", "Robert", "Patricia", "Michael", "Jennifer",
        "William", "Linda", "David", "Elizabeth", "José", "María", "Søren", "Zoë", "Chloé", "Lars", "Ingrid",
        "Hiroshi", "Yuki", "Priya", "Arjun", "Fatima", "Omar", "Olga", "Dmitri", "Aoife", "Seán", "Lucía",
        "Mateo", "Emma", "Noah", "Amélie"};
    private static final String[] LAST = {"Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller",
        "Davis", "Rodriguez", "Martinez", "Müller", "Schmidt", "O'Brien", "Nguyen", "Kowalski", "Rossi",
        "Dubois", "Jensen", "Tanaka", "Sato", "Patel", "Kumar", "Haddad", "Ivanova", "Petrov", "Murphy",
        "Fernández", "López", "Andersson", "Novak"};
    private static final String[] COMPANY_NOUN = {"Logistics", "Industrial Supply", "Software", "Consulting",
        "Hardware", "Foods", "Textiles", "Analytics", "Marine", "Energy", "Printing", "Instruments",
        "Healthcare", "Outfitters"};
    private static final String[] STREET = {"Maple", "Oak", "Station", "High", "Church", "Mill", "Park",
        "Bridge", "Harbour", "Victoria", "King", "Elm", "Lake", "Hill", "Market", "Garden"};
    private static final String[] STREET_KIND = {"Street", "Avenue", "Road", "Lane", "Way", "Boulevard",
        "Drive", "Court"};
    private static final String[] TAGS = {"vip", "wholesale", "retail", "newsletter", "priority", "net-30",
        "eu", "apac", "churn-risk", "partner", "reseller", "trial"};
    private static final String[] NOTES = {"Prefers email contact.",
        "Invoices go to accounts payable, not the buyer.", "Asked for a call back about volume pricing.",
        "Ships to a loading dock: no deliveries before 8am.", "Net 30 terms approved by finance."};
    /** (city, region, country, calling code, postal code pattern: 9 digit, A letter). */
    private static final String[][] CITIES = {
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

    private static final DatatypeFactory DATATYPES;

    static {
        try {
            DATATYPES = DatatypeFactory.newInstance();
        } catch (DatatypeConfigurationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private CustomerGenerator() {}

    /** SplitMix64 (Steele, Lea, Flood 2014), as generate.rs. */
    private static final class Rng {
        private long state;

        Rng(long seed) {
            state = seed;
        }

        long next() {
            state += 0x9E37_79B9_7F4A_7C15L;
            long z = state;
            z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
            return z ^ (z >>> 31);
        }

        long below(long n) {
            return Long.remainderUnsigned(next(), n);
        }

        String pick(String[] items) {
            return items[(int) below(items.length)];
        }

        boolean chance(long percent) {
            return below(100) < percent;
        }
    }

    /** Lower-case ASCII for an e-mail local part or domain. */
    static String asciiSlug(String s) {
        StringBuilder out = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case 'á': case 'à': case 'ã': case 'â': c = 'a'; break;
                case 'é': case 'è': case 'ë': c = 'e'; break;
                case 'í': c = 'i'; break;
                case 'ó': case 'ô': case 'ø': c = 'o'; break;
                case 'ú': case 'ü': c = 'u'; break;
                case 'ñ': c = 'n'; break;
                case 'ł': c = 'l'; break;
                case ' ': c = '-'; break;
                default: break;
            }
            boolean alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
            if (alnum || c == '-') {
                out.append(Character.toLowerCase(c));
            }
        }
        return out.toString();
    }

    private static String digits(Rng rng, String pattern) {
        StringBuilder out = new StringBuilder(pattern.length());
        for (int i = 0; i < pattern.length(); i++) {
            char c = pattern.charAt(i);
            if (c == '9') {
                out.append((char) ('0' + rng.below(10)));
            } else if (c == 'A') {
                out.append((char) ('A' + rng.below(26)));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /** The customer with this id under this seed (the random draws in generate.rs's order). */
    static Customer customer(long seed, long id) {
        Rng rng = new Rng(seed ^ (id * 0xD1B5_4A32_D192_ED03L));
        String first = rng.pick(FIRST);
        String last = rng.pick(LAST);
        String owner = rng.pick(LAST);
        String noun = rng.pick(COMPANY_NOUN);
        String company;
        switch ((int) rng.below(4)) {
            case 0: company = owner + " & Sons " + noun + " Ltd"; break;
            case 1: company = owner + " " + noun + " GmbH"; break;
            case 2: company = owner + " " + noun + " Inc."; break;
            default: company = owner + "-" + rng.pick(LAST) + " " + noun; break;
        }
        String domain = asciiSlug(owner) + "-" + asciiSlug(noun) + ".example";
        String[] city = CITIES[(int) rng.below(CITIES.length)];
        int year = 2012 + (int) rng.below(14);
        int month = 1 + (int) rng.below(12);
        int day = 1 + (int) rng.below(28);
        int hour = (int) rng.below(24);
        int minute = (int) rng.below(60);
        int second = (int) rng.below(60);
        int millis = rng.chance(30) ? (int) rng.below(1000) : 0;
        XMLGregorianCalendar created = DATATYPES.newXMLGregorianCalendar(year, month, day, hour, minute,
                second, millis == 0 ? DatatypeConstants.FIELD_UNDEFINED : millis, 0);
        long cents;
        switch ((int) rng.below(10)) {
            case 0: cents = -rng.below(500_000); break;
            case 1: cents = rng.below(25_000_000); break;
            default: cents = rng.below(1_000_000); break;
        }
        Tags tags = new Tags();
        for (long i = 0, n = rng.below(4); i < n; i++) {
            String tag = rng.pick(TAGS);
            if (!tags.getTag().contains(tag)) {
                tags.getTag().add(tag);
            }
        }
        Customer c = new Customer();
        c.setId(new BigInteger(Long.toUnsignedString(id)));
        c.setFirstName(first);
        c.setLastName(last);
        c.setEmail(asciiSlug(first) + "." + asciiSlug(last) + rng.below(100) + "@" + domain);
        c.setPhone(city[3] + " " + digits(rng, "999") + " " + digits(rng, "999 9999"));
        c.setCompany(company);
        Address a = new Address();
        a.setStreet((1 + rng.below(2500)) + " " + rng.pick(STREET) + " " + rng.pick(STREET_KIND));
        a.setCity(city[0]);
        a.setRegion(city[1]);
        a.setPostalCode(digits(rng, city[4]));
        a.setCountry(city[2]);
        c.setAddress(a);
        c.setCreated(created);
        c.setBalance(BigDecimal.valueOf(cents, 2));
        c.setActive(rng.chance(85));
        c.setTags(tags);
        // Empty notes are not written (bench-proto's writer omits them too).
        c.setNotes(rng.chance(25) ? rng.pick(NOTES) : null);
        return c;
    }

    /** {@code count} customers with ids {@code firstId .. firstId + count}. */
    public static List<Customer> generate(int count, long seed, long firstId) {
        List<Customer> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(customer(seed, firstId + i));
        }
        return out;
    }
}
