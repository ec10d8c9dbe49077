//! Everything around the SOAP operations that bench-server also answers: `GET /`, `/health`, the project's
//! WSDLs at `?wsdl` (byte for byte, soap:address pointing back the way the client came), 405 and 404; the
//! validation hook of the WSDL's patterned types; and the settings of a serving context.
#include <climits>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <unistd.h>

#include "peer.h"

namespace peer {
namespace {

const std::string INDEX = "wsbench peer: gSOAP " + std::to_string(GSOAP_VERSION) +
                          "\n"
                          "POST /cxf-benchmark-soapdoclit/services/SoapHttpDocLitPort   CXF performance service "
                          "(WSDL: ?wsdl)\n"
                          "POST /services/CustomerService                               Customer service (WSDL: "
                          "?wsdl)\n"
                          "GET  /health                                                 liveness\n";

std::string cxf_wsdl, customer_wsdl;

/// The marker the WSDLs hold where the endpoint's address goes (JAX-WS's convention).
constexpr std::string_view MARKER = "REPLACE_WITH_ACTUAL_URL";
constexpr std::string_view COUNTRY_PATTERN = "[A-Z]{2}";

int reply(struct soap* soap, int status, const char* type, const std::string& body,
          const char* extra_header = nullptr) {
    // Stored, so the answer carries a Content-Length and the connection stays usable.
    const soap_mode omode = soap->omode;
    soap->omode = (soap->omode & ~SOAP_IO) | SOAP_IO_STORE;
    soap->mode = (soap->mode & ~SOAP_IO) | SOAP_IO_STORE;
    soap->http_content = type;
    soap->http_extra_header = extra_header;
    const bool failed = soap_response(soap, status == 200 ? SOAP_FILE : SOAP_FILE + status) ||
                        soap_send_raw(soap, body.data(), body.size()) || soap_end_send(soap);
    soap->omode = omode;
    return failed ? soap_closesock(soap) : SOAP_OK;
}

bool wants_wsdl(std::string_view query) {
    while (!query.empty()) {
        const std::size_t amp = query.find('&');
        const std::string_view p = query.substr(0, amp);
        if (p.size() == 4 && strncasecmp(p.data(), "wsdl", 4) == 0) {
            return true;
        }
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    }
    return false;
}

/// The authority the client used (Host header, which gSOAP keeps in soap->endpoint as `http://host`), so the
/// WSDL's soap:address points back the way it came; the listener's address when it is absent or odd.
std::string authority(const struct soap* soap) {
    std::string_view host(soap->endpoint);
    if (host.substr(0, 7) == "http://") {
        host.remove_prefix(7);
    }
    host = host.substr(0, host.find('/'));
    const bool ok = !host.empty() && host.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                            "0123456789.-:[]") == std::string_view::npos;
    return ok ? std::string(host) : "127.0.0.1";
}

std::string_view collapse(std::string_view s) {
    const auto ws = " \t\r\n";
    const std::size_t a = s.find_first_not_of(ws);
    if (a == std::string_view::npos) {
        return {};
    }
    return s.substr(a, s.find_last_not_of(ws) - a + 1);
}

bool read_file(const std::string& path, std::string& out) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    out = text.str();
    return in.good() && out.find(MARKER) != std::string::npos;
}

}  // namespace

int http_get(struct soap* soap) {
    const std::string_view full(soap->path);
    const std::size_t q = full.find('?');
    const std::string_view path = full.substr(0, q);
    const std::string_view query = q == std::string_view::npos ? std::string_view() : full.substr(q + 1);
    if (path == "/") {
        return reply(soap, 200, "text/plain; charset=utf-8", INDEX);
    }
    if (path == "/health") {
        return reply(soap, 200, "text/plain; charset=utf-8", "ok\n");
    }
    if (path != CXF_PATH && path != CUSTOMER_PATH) {
        return reply(soap, 404, "text/plain; charset=utf-8", "not found; see / for the endpoints\n");
    }
    if (!wants_wsdl(query)) {
        return reply(soap, 405, "text/plain; charset=utf-8", "POST SOAP 1.1 requests here; the WSDL is at ?wsdl\n",
                     "Allow: POST");
    }
    std::string wsdl = path == CXF_PATH ? cxf_wsdl : customer_wsdl;
    wsdl.replace(wsdl.find(MARKER), MARKER.size(), "http://" + authority(soap) + std::string(path));
    return reply(soap, 200, "text/xml; charset=utf-8", wsdl);
}

int validate_pattern(struct soap*, const char* pattern, const char* value) {
    if (pattern == COUNTRY_PATTERN) {
        const std::string_view code = collapse(value);
        const bool ok = code.size() == 2 && code[0] >= 'A' && code[0] <= 'Z' && code[1] >= 'A' && code[1] <= 'Z';
        return ok ? SOAP_OK : SOAP_TYPE;
    }
    // A pattern this hook does not know (the WSDL changed): refuse rather than let anything through.
    return SOAP_TYPE;
}

bool load_wsdls() {
    char exe[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        std::cerr << "wsbench-gsoap: cannot find its own executable (/proc/self/exe)\n";
        return false;
    }
    std::string dir(exe, static_cast<std::size_t>(n));
    dir = dir.substr(0, dir.rfind('/')) + "/wsdl/";
    for (auto [name, text] : {std::pair{"cxf.wsdl", &cxf_wsdl}, std::pair{"customer.wsdl", &customer_wsdl}}) {
        if (!read_file(dir + name, *text)) {
            std::cerr << "wsbench-gsoap: " << dir << name
                      << " is missing or has no REPLACE_WITH_ACTUAL_URL (the build copies peers/wsdl there)\n";
            return false;
        }
    }
    return true;
}

void configure(struct soap* soap, const Config& config) {
    // Strict: required elements, element order and value types are enforced, so a wrong message is a fault.
    // UTF-8 strings kept as UTF-8: by default gSOAP decodes text to Latin-1 chars and cuts every character
    // past U+00FF to its low byte ('ł', U+0142, came back as 'B' in the Customer echo).
    // Tree: document/literal messages have no id/href multi-references, and without this gSOAP tracks every
    // pointer for them (soap_update_pointers was 17 % of a 100 KB echo); 25.6 -> 19.2 M instructions a call.
    // Chunked output: the default computes Content-Length by serialising every response twice; 19.2 -> 15.8 M
    // instructions a 100 KB echo, 477 -> 412 k an echoComplexTypeDoc (callgrind, server side).
    const soap_mode common = SOAP_IO_KEEPALIVE | SOAP_C_UTFSTRING | SOAP_XML_TREE;
    soap_set_imode(soap, common | SOAP_XML_STRICT);
    soap_set_omode(soap, common | SOAP_IO_CHUNK);
    soap->max_keep_alive = 0;  // as many requests per connection as the client sends
    soap->bind_flags = SO_REUSEADDR;
    // bench-server's defaults: 60 s idle, 10 s for a stalled reader, 30 s for a whole message.
    soap->recv_timeout = 60;
    soap->send_timeout = 10;
    soap->transfer_timeout = 30;
    soap->recv_maxlength = config.max_body;
    soap->maxlevel = 64;       // bench-proto's Limits::DEFAULT_MAX_DEPTH
    soap->maxoccurs = 100000;  // bench-proto's Limits::DEFAULT_MAX_ITEMS
    soap->fget = http_get;
    soap->fsvalidate = validate_pattern;
}

}  // namespace peer
