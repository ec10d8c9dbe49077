//! Serialisers of the two built-ins custom.h binds: xsd:dateTime as written (fields and offset, nanoseconds,
//! every field range-checked as XML Schema says) and xsd:decimal as its exact lexical form, checked. A value
//! that is not of the type is a Client fault (gSOAP's "Validation constraint violation: data type mismatch").
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "soapH.h"

namespace {

std::string_view collapse(std::string_view s) {
    const auto ws = " \t\r\n";
    const std::size_t a = s.find_first_not_of(ws);
    if (a == std::string_view::npos) {
        return {};
    }
    return s.substr(a, s.find_last_not_of(ws) - a + 1);
}

/// Reads exactly `n` digits at `i`.
bool digits(std::string_view s, std::size_t& i, std::size_t n, std::uint32_t& out) {
    if (i + n > s.size()) {
        return false;
    }
    out = 0;
    for (std::size_t k = 0; k < n; k++, i++) {
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
        out = out * 10 + static_cast<std::uint32_t>(s[i] - '0');
    }
    return true;
}

bool expect(std::string_view s, std::size_t& i, char c) {
    return i < s.size() && s[i] == c && (i++, true);
}

bool leap(std::int32_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

int days_in_month(std::int32_t y, int m) {
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && leap(y) ? 29 : days[m - 1];
}

/// `[-]yyyy-mm-ddThh:mm:ss[.f{1,9}][Z|(+|-)hh:mm]`, every field in range (bench-proto's DateTime::parse).
bool parse_date_time(std::string_view s, peer_dateTime& v) {
    s = collapse(s);
    std::size_t i = 0;
    const bool negative = expect(s, i, '-');
    std::size_t year_len = 0;
    while (i + year_len < s.size() && s[i + year_len] >= '0' && s[i + year_len] <= '9') {
        year_len++;
    }
    std::uint32_t year, month, day, hour, minute, second, nanos = 0;
    if (year_len < 4 || year_len > 9 || (year_len > 4 && s[i] == '0') || !digits(s, i, year_len, year)) {
        return false;
    }
    if (!(expect(s, i, '-') && digits(s, i, 2, month) && expect(s, i, '-') && digits(s, i, 2, day) &&
          expect(s, i, 'T') && digits(s, i, 2, hour) && expect(s, i, ':') && digits(s, i, 2, minute) &&
          expect(s, i, ':') && digits(s, i, 2, second))) {
        return false;
    }
    if (expect(s, i, '.')) {
        std::size_t n = 0;
        while (i + n < s.size() && s[i + n] >= '0' && s[i + n] <= '9') {
            n++;
        }
        if (n == 0 || n > 9 || !digits(s, i, n, nanos)) {
            return false;
        }
        for (; n < 9; n++) {
            nanos *= 10;
        }
    }
    v.has_offset = false;
    v.offset_minutes = 0;
    if (expect(s, i, 'Z')) {
        v.has_offset = true;
    } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
        const bool west = s[i++] == '-';
        std::uint32_t h, m;
        if (!(digits(s, i, 2, h) && expect(s, i, ':') && digits(s, i, 2, m)) || m > 59 || h * 60 + m > 14 * 60) {
            return false;
        }
        v.has_offset = true;
        v.offset_minutes = static_cast<std::int16_t>(west ? -(h * 60 + m) : h * 60 + m);
    }
    if (i != s.size()) {
        return false;
    }
    v.year = negative ? -static_cast<std::int32_t>(year) : static_cast<std::int32_t>(year);
    if (month < 1 || month > 12 || day < 1 || static_cast<int>(day) > days_in_month(v.year, static_cast<int>(month))) {
        return false;
    }
    const bool end_of_day = hour == 24 && minute == 0 && second == 0 && nanos == 0;
    if ((hour > 23 && !end_of_day) || minute > 59 || second > 59) {
        return false;
    }
    v.month = static_cast<std::uint8_t>(month);
    v.day = static_cast<std::uint8_t>(day);
    v.hour = static_cast<std::uint8_t>(hour);
    v.minute = static_cast<std::uint8_t>(minute);
    v.second = static_cast<std::uint8_t>(second);
    v.nanos = nanos;
    return true;
}

/// xsd:decimal's lexical form, `[+-]?(digits[.digits?]|.digits)`, after whitespace collapse.
bool is_decimal(std::string_view s) {
    s = collapse(s);
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
        s.remove_prefix(1);
    }
    std::size_t digit_count = 0, dots = 0;
    for (char c : s) {
        if (c >= '0' && c <= '9') {
            digit_count++;
        } else if (c != '.' || dots++ > 0) {
            return false;
        }
    }
    return digit_count > 0;
}

/// Reads a simple-typed element's text with `parse`, as gSOAP's own serialisers do (no id/href: literal).
template <class T, class Parse>
T* read_element(struct soap* soap, const char* tag, T* a, Parse parse) {
    if (soap_element_begin_in(soap, tag, 0, nullptr)) {
        return nullptr;
    }
    if (!a && !(a = static_cast<T*>(soap_malloc(soap, sizeof(T))))) {
        return nullptr;
    }
    // soap_value reads at most one buffer (SOAP_TMPLEN) of text: a value that fills it may have more, and
    // no dateTime or decimal is that long anyway.
    const char* text = soap_value(soap);
    if (text && std::strlen(text) >= sizeof soap->tmpbuf - 1) {
        soap->error = SOAP_TYPE;
        return nullptr;
    }
    if (parse(soap, text, a) || (soap->body && soap_element_end_in(soap, tag))) {
        return nullptr;
    }
    return a;
}

}  // namespace

void soap_default_xsd__dateTime(struct soap*, struct peer_dateTime* a) { std::memset(a, 0, sizeof *a); }

void soap_serialize_xsd__dateTime(struct soap*, const struct peer_dateTime*) {}

int soap_s2xsd__dateTime(struct soap* soap, const char* s, struct peer_dateTime* a) {
    if (!s || !parse_date_time(s, *a)) {
        return soap->error = SOAP_TYPE;
    }
    return SOAP_OK;
}

/// The canonical form: fraction without trailing zeros, UTC as `Z` (bench-proto's DateTime::write).
const char* soap_xsd__dateTime2s(struct soap* soap, struct peer_dateTime a) {
    char* out = soap->tmpbuf;
    const std::size_t cap = sizeof soap->tmpbuf;
    int n = std::snprintf(out, cap, "%s%04d-%02u-%02uT%02u:%02u:%02u", a.year < 0 ? "-" : "",
                          a.year < 0 ? -a.year : a.year, a.month, a.day, a.hour, a.minute, a.second);
    if (a.nanos != 0) {
        std::uint32_t frac = a.nanos;
        int width = 9;
        while (frac % 10 == 0) {
            frac /= 10;
            width--;
        }
        n += std::snprintf(out + n, cap - n, ".%0*u", width, frac);
    }
    if (a.has_offset && a.offset_minutes == 0) {
        std::snprintf(out + n, cap - n, "Z");
    } else if (a.has_offset) {
        const int off = a.offset_minutes < 0 ? -a.offset_minutes : a.offset_minutes;
        std::snprintf(out + n, cap - n, "%c%02d:%02d", a.offset_minutes < 0 ? '-' : '+', off / 60, off % 60);
    }
    return out;
}

int soap_out_xsd__dateTime(struct soap* soap, const char* tag, int id, const struct peer_dateTime* a,
                           const char* type) {
    if (soap_element_begin_out(soap, tag, soap_embedded_id(soap, id, a, SOAP_TYPE_xsd__dateTime), type) ||
        soap_string_out(soap, soap_xsd__dateTime2s(soap, *a), 0)) {
        return soap->error;
    }
    return soap_element_end_out(soap, tag);
}

struct peer_dateTime* soap_in_xsd__dateTime(struct soap* soap, const char* tag, struct peer_dateTime* a,
                                            const char*) {
    return read_element(soap, tag, a, soap_s2xsd__dateTime);
}

int soap_s2xsd__decimal(struct soap* soap, const char* s, std::string* a) {
    if (!s || !is_decimal(s)) {
        return soap->error = SOAP_TYPE;
    }
    a->assign(s);
    return SOAP_OK;
}

const char* soap_xsd__decimal2s(struct soap*, std::string a) {
    // Only ever called by gSOAP for attribute values; the peer has none of this type.
    static thread_local std::string held;
    held = std::move(a);
    return held.c_str();
}

int soap_out_xsd__decimal(struct soap* soap, const char* tag, int id, const std::string* a, const char* type) {
    if (soap_element_begin_out(soap, tag, soap_embedded_id(soap, id, a, SOAP_TYPE_xsd__decimal), type) ||
        soap_string_out(soap, a->c_str(), 0)) {
        return soap->error;
    }
    return soap_element_end_out(soap, tag);
}

std::string* soap_in_xsd__decimal(struct soap* soap, const char* tag, std::string* a, const char*) {
    if (!a && !(a = soap_new_std__string(soap, -1))) {
        return nullptr;
    }
    return read_element(soap, tag, a, soap_s2xsd__decimal);
}
