//! The gSOAP peer's command line, in bench-server's spelling where the meaning is the same.
#include <cstdlib>
#include <iostream>
#include <string>

#include "peer.h"

namespace peer {
namespace {

const char* const USAGE =
    "usage: wsbench-gsoap [--http HOST:PORT] [--workers N] [--queue N] [--store-cap N] [--max-body BYTES]"
    " [--backlog N] [--mode pool|poll]\n"
    "  --http       listen address, port 0 picks a free one [127.0.0.1:8080]\n"
    "  --workers    threads of the pool; each serves one connection at a time (gSOAP's thread-pool pattern),\n"
    "               so this is also how many connections are served at once [64]\n"
    "  --queue      accepted connections waiting for a worker before accepting pauses [1024]\n"
    "  --store-cap  most customers the store keeps (a ring: the oldest are overwritten) [100000]\n"
    "  --max-body   largest request body accepted [8388608]\n"
    "  --backlog    listen backlog [1024]\n"
    "  --mode       pool: a thread per open connection, --workers of them (gSOAP's stand-alone pattern);\n"
    "               poll: one thread polls every idle connection and accepts, --workers threads serve the\n"
    "               readable ones (0: the polling thread serves them itself); --queue bounds the open\n"
    "               connections [pool]\n";

[[noreturn]] void usage_error(const std::string& why) {
    std::cerr << "wsbench-gsoap: " << why << "\n" << USAGE;
    std::exit(2);
}

unsigned long long at_least(const std::string& name, const std::string& v, unsigned long long min) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || v[0] == '-' || n < min) {
        usage_error(name + ": not a number of at least " + std::to_string(min) + ": " + v);
    }
    return n;
}

unsigned long long positive(const std::string& name, const std::string& v) { return at_least(name, v, 1); }

}  // namespace

Config parse_flags(int argc, char** argv) {
    Config c;
    for (int i = 1; i < argc; i++) {
        const std::string name = argv[i];
        if (name == "-h" || name == "--help") {
            std::cout << USAGE;
            std::exit(0);
        }
        if (i + 1 >= argc) {
            usage_error(name + " needs a value");
        }
        const std::string v = argv[++i];
        if (name == "--http") {
            const std::size_t colon = v.rfind(':');
            if (colon == std::string::npos) {
                usage_error("--http: expected HOST:PORT, e.g. 127.0.0.1:8080, not " + v);
            }
            c.host = v.substr(0, colon);
            if (c.host.size() > 2 && c.host.front() == '[' && c.host.back() == ']') {
                c.host = c.host.substr(1, c.host.size() - 2);
            }
            const std::string port = v.substr(colon + 1);
            c.port = port == "0" ? 0 : static_cast<int>(positive("--http port", port));
            if (c.port > 65535) {
                usage_error("--http: port out of range in " + v);
            }
        } else if (name == "--workers") {
            c.workers = static_cast<int>(at_least(name, v, 0));
        } else if (name == "--mode") {
            if (v != "pool" && v != "poll") {
                usage_error("--mode: pool or poll, not " + v);
            }
            c.poll = v == "poll";
        } else if (name == "--queue") {
            c.queue = static_cast<int>(positive(name, v));
        } else if (name == "--store-cap") {
            c.store_cap = positive(name, v);
        } else if (name == "--max-body") {
            c.max_body = positive(name, v);
        } else if (name == "--backlog") {
            c.backlog = static_cast<int>(positive(name, v));
        } else {
            usage_error("unknown flag " + name);
        }
    }
    if (!c.poll && c.workers < 1) {
        usage_error("--workers must be at least 1 in the pool mode");
    }
    return c;
}

}  // namespace peer
