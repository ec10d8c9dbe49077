//! `wsbench-gsoap`: the CXF performance and Customer services on gSOAP 2.8, served by gSOAP's stand-alone
//! thread-pool pattern (the main thread accepts, a fixed pool of workers each serves one connection's
//! keep-alive requests at a time) or, with `--mode poll`, from poll() (poll.cpp); prints bench-server's
//! `READY …` line and stops on SIGINT/SIGTERM (exit 0).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "peer.h"
#include "store.h"

#include "CustomerBinding.nsmap"  // the namespace table (both services' namespaces; the two maps are equal)

namespace {

/// Accepted sockets waiting for a worker, bounded: a full queue blocks the accept loop (the listen backlog
/// then holds further connections). Closing it wakes every waiter.
class SocketQueue {
  public:
    explicit SocketQueue(std::size_t cap) : cap_(cap) {}

    bool push(SOAP_SOCKET s) {
        std::unique_lock<std::mutex> lock(mutex_);
        not_full_.wait(lock, [&] { return closed_ || queue_.size() < cap_; });
        if (closed_) {
            return false;
        }
        queue_.push_back(s);
        not_empty_.notify_one();
        return true;
    }

    /// The next socket, or SOAP_INVALID_SOCKET once closed and drained.
    SOAP_SOCKET pop() {
        std::unique_lock<std::mutex> lock(mutex_);
        not_empty_.wait(lock, [&] { return closed_ || !queue_.empty(); });
        if (queue_.empty()) {
            return SOAP_INVALID_SOCKET;
        }
        const SOAP_SOCKET s = queue_.front();
        queue_.pop_front();
        not_full_.notify_one();
        return s;
    }

    void close() {
        std::lock_guard<std::mutex> lock(mutex_);
        closed_ = true;
        not_empty_.notify_all();
        not_full_.notify_all();
    }

  private:
    std::mutex mutex_;
    std::condition_variable not_empty_, not_full_;
    std::deque<SOAP_SOCKET> queue_;
    std::size_t cap_;
    bool closed_ = false;
};

/// Frees what a request allocated once its response is sent: gSOAP's keep-alive loop (soap_serve) keeps
/// everything of every request on the connection otherwise. (soap_dealloc rather than soap_end: the next
/// request's soap_begin clears the temporary data and id tables anyway, and clearing them twice cost 47 k of
/// the 412 k instructions of an echoComplexTypeDoc.)
int after_request(struct soap* soap) {
    soap_destroy(soap);
    soap_dealloc(soap, nullptr);
    static_cast<peer::Worker*>(soap->user)->pinned.clear();
    return SOAP_OK;
}

std::atomic<int> workers_running{0};

/// One worker: serves the connections the queue hands it, one at a time, on its own copy of the context.
void serve_connections(struct soap* soap, SocketQueue* queue, peer::CustomerStore* store) {
    peer::Worker worker;
    worker.store = store;
    soap->user = &worker;
    soap->fserveloop = after_request;
    for (SOAP_SOCKET s; soap_valid_socket(s = queue->pop());) {
        // Each response leaves in one write of its head and body; without this a small one waits for the
        // client's delayed ACK under Nagle's algorithm.
        const int one = 1;
        setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        soap->socket = s;
        soap_serve(soap);  // every request on the connection until it closes, idles out, or a fault
        after_request(soap);
        soap_end(soap);
        soap_force_closesock(soap);
    }
    soap_free(soap);
    workers_running--;
}

/// The listener's address as bench-server prints it: numeric, `[v6]:port` for IPv6.
std::string bound_address(SOAP_SOCKET listener) {
    struct sockaddr_storage a {};
    socklen_t len = sizeof a;
    getsockname(listener, reinterpret_cast<struct sockaddr*>(&a), &len);
    char host[INET6_ADDRSTRLEN] = "?";
    if (a.ss_family == AF_INET6) {
        const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
        inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
        return "[" + std::string(host) + "]:" + std::to_string(ntohs(v6->sin6_port));
    }
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
    inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
    return std::string(host) + ":" + std::to_string(ntohs(v4->sin_port));
}

}  // namespace

int main(int argc, char** argv) {
    const peer::Config config = peer::parse_flags(argc, argv);
    if (!peer::load_wsdls()) {
        return 1;
    }
    // Signals go to the thread that waits for them, not to whichever thread they happen to hit.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    signal(SIGPIPE, SIG_IGN);

    peer::CustomerStore store(config.store_cap, config.store_prefill);
    struct soap master;
    soap_init(&master);
    peer::configure(&master, config);
    if (!soap_valid_socket(soap_bind(&master, config.host.c_str(), config.port, config.backlog))) {
        std::cerr << "wsbench-gsoap: cannot listen on " << config.host << ":" << config.port << ": ";
        soap_stream_fault(&master, std::cerr);
        return 1;
    }
    const std::string bound = bound_address(master.master);

    std::atomic<bool> stopping{false};
    std::thread([&] {
        int sig = 0;
        sigwait(&stop_signals, &sig);
        stopping = true;
        shutdown(master.master, SHUT_RDWR);  // wakes the accept loop
    }).detach();

    std::printf("READY http=%s workers=%d pid=%d\n", bound.c_str(), config.workers, static_cast<int>(getpid()));
    std::fflush(stdout);
    if (config.poll) {
        master.fserveloop = after_request;
        peer::serve_polling(&master, config, &store, stopping);
        std::fflush(stdout);
        _exit(0);
    }
    SocketQueue queue(static_cast<std::size_t>(config.queue));
    std::vector<std::thread> pool;
    for (int i = 0; i < config.workers; i++) {
        workers_running++;
        pool.emplace_back(serve_connections, soap_copy(&master), &queue, &store);
    }

    while (!stopping) {
        const SOAP_SOCKET s = soap_accept(&master);
        if (soap_valid_socket(s)) {
            queue.push(s);
        } else if (!stopping) {
            // Out of descriptors or a connection reset before accept: not fatal; back off briefly.
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    // Workers finish the connection they serve (bench-server's 5 s grace), then the process exits either way.
    queue.close();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (workers_running > 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::fflush(stdout);
    _exit(0);
}
