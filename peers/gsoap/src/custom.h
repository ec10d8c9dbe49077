//! soapcpp2 import (typemap.dat names it): xsd:dateTime and xsd:decimal bound to types whose serialisers are
//! the peer's own (custom.cpp), in gSOAP's custom-serializer form, because gSOAP's built-in ones are lenient:
//! its dateTime mappings normalise out-of-range fields instead of refusing them, and its xsd:decimal string
//! (a whitespace-collapsed type) never reaches the pattern validator (soap_string_in returns before fsvalidate
//! for collapsed types in 2.8.124), so `3,14` was echoed.

#include "xsd_types.h"

extern typedef struct peer_dateTime xsd__dateTime;
extern typedef std::string xsd__decimal;
