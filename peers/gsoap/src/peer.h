//! What the gSOAP peer's files share: its settings, the per-thread state the service operations reach through
//! soap->user, and the hooks installed on every context.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "soapH.h"

namespace peer {

/// Where the services are served (bench-proto's cxf::PATH and customer::PATH).
inline constexpr const char* CXF_PATH = "/cxf-benchmark-soapdoclit/services/SoapHttpDocLitPort";
inline constexpr const char* CUSTOMER_PATH = "/services/CustomerService";
/// Most customers one get returns (bench-server's bound: about 10 MB of XML).
inline constexpr std::uint32_t MAX_GET = 20000;

/// The command line, in bench-server's spelling where the meaning is the same.
struct Config {
    std::string host = "127.0.0.1";
    int port = 8080;
    /// Threads of the pool; each serves one connection at a time (gSOAP's pool pattern), so this is also the
    /// number of connections served at once.
    int workers = 64;
    /// Accepted connections waiting for a free worker; the accept loop blocks when it is full.
    int queue = 1024;
    int backlog = 1024;
    std::size_t store_cap = 100000;
    std::size_t store_prefill = 1000;
    std::uint64_t max_body = 8 * 1024 * 1024;
    /// `pool`: a thread per open connection (gSOAP's stand-alone pattern); `poll`: poll() over idle
    /// connections, `workers` threads serving readable ones (0: the polling thread serves them).
    bool poll = false;
};

/// Parses argv (exits 2 with the usage on a bad flag, 0 after --help).
Config parse_flags(int argc, char** argv);

class CustomerStore;

/// What a worker's service calls need besides the request: the store, and the customers a `get` response
/// points at, kept alive until the response is written (cleared after every request).
struct Worker {
    CustomerStore* store = nullptr;
    std::vector<std::shared_ptr<const cust__Customer>> pinned;
};

/// Settings, limits and hooks for a serving context (the master and each worker's copy).
void configure(struct soap* soap, const Config& config);

/// soap->fget: `GET /`, `/health`, `?wsdl` on the service paths; 405 and 404 as bench-server answers.
int http_get(struct soap* soap);

/// soap->fsvalidate: the patterns of the WSDL's restricted string types (the Customer CountryCode).
int validate_pattern(struct soap* soap, const char* pattern, const char* value);

/// The `poll` mode's loop (poll.cpp), until `stopping`; the master's fserveloop frees each request's data.
void serve_polling(struct soap* master, const Config& config, CustomerStore* store,
                   const std::atomic<bool>& stopping);

/// Reads the WSDLs from the `wsdl/` directory beside the executable (the build puts them there); false and
/// a message on stderr if one is missing.
bool load_wsdls();

}  // namespace peer
