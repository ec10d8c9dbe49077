//! The C++ types the peer binds two XML Schema built-ins to (custom.h tells soapcpp2, custom.cpp serialises
//! them): gSOAP's own mappings of xsd:dateTime (time_t, struct tm, struct timeval) all convert to UTC and
//! normalise out-of-range fields, so 2005-13-03 came back as 2006-01-03; these keep the value as written.
#pragma once

#include <cstdint>

/// An xsd:dateTime as written, as bench-proto's DateTime: local fields plus an optional timezone offset.
struct peer_dateTime {
    std::int32_t year;
    std::uint8_t month, day, hour, minute, second;
    /// Fraction of the second in nanoseconds (up to 9 fraction digits are accepted).
    std::uint32_t nanos;
    /// Offset from UTC in minutes; meaningful only with has_offset (a lexical form without a timezone has none).
    std::int16_t offset_minutes;
    bool has_offset;
};
