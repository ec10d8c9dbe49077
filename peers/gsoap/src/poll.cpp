//! The `poll` mode (`--mode poll`): one thread waits on the listener and every idle keep-alive connection with
//! poll(), and a connection holds a thread only while a request is read and answered. With `--workers 0` that
//! thread serves the request itself (every connection from one thread); with `--workers N` it hands each
//! readable connection to a pool of N threads and goes on polling, so a slow sender stalls one worker, not the
//! server. Against the pool mode (a thread per open connection, idle or not), this is how event-driven servers
//! serve many connections on few cores.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <functional>
#include <thread>
#include <vector>

#include "peer.h"

namespace peer {
namespace {

using Clock = std::chrono::steady_clock;

/// One open connection and its gSOAP context (a copy of the master's settings and hooks).
struct Conn {
    struct soap* soap = nullptr;
    Clock::time_point last = Clock::now();
    bool busy = false;    // with a worker: not polled
    bool closed = false;  // set by whoever served it last
};

/// Serves the requests waiting on `c` (at least one: the poller saw it readable), as soap_serve's keep-alive
/// loop serves each, then returns: the connection goes back to the poller unless gSOAP buffered the start of
/// another request already (a pipelining client).
void serve(Conn* c) {
    struct soap* soap = c->soap;
    do {
        if (soap_begin_serve(soap)) {
            if (soap->error < SOAP_STOP) {
                c->closed = true;  // the client closed, or a request gSOAP could not read
                break;
            }
            // answered already (a GET through fget): on to the next request if the connection stays
        } else if ((soap_serve_request(soap) || soap->fserveloop(soap)) && soap->error && soap->error < SOAP_STOP) {
            soap_send_fault(soap);  // gSOAP's keep-alive loop ends on a fault, and so does this
            c->closed = true;
            break;
        }
        if (!soap->keep_alive) {
            c->closed = true;
            break;
        }
    } while (soap->bufidx < soap->buflen);
    c->last = Clock::now();
}

/// Readable connections handed to the workers, and served ones handed back (the poller is woken by a pipe).
class Handoff {
  public:
    Handoff() {
        if (pipe(wake_) != 0) {
            wake_[0] = wake_[1] = -1;
        }
    }

    void give(Conn* c) {
        std::lock_guard<std::mutex> lock(mutex_);
        todo_.push_back(c);
        more_.notify_one();
    }

    /// The next connection to serve, or nullptr once stopped.
    Conn* take() {
        std::unique_lock<std::mutex> lock(mutex_);
        more_.wait(lock, [&] { return stopped_ || !todo_.empty(); });
        if (todo_.empty()) {
            return nullptr;
        }
        Conn* c = todo_.front();
        todo_.pop_front();
        return c;
    }

    void served(Conn* c) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            done_.push_back(c);
        }
        const char b = 1;
        (void)!write(wake_[1], &b, 1);
    }

    std::vector<Conn*> returned() {
        char buf[256];
        (void)!read(wake_[0], buf, sizeof buf);
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<Conn*> out(done_.begin(), done_.end());
        done_.clear();
        return out;
    }

    void stop() {
        std::lock_guard<std::mutex> lock(mutex_);
        stopped_ = true;
        more_.notify_all();
    }

    int wake_fd() const { return wake_[0]; }

  private:
    std::mutex mutex_;
    std::condition_variable more_;
    std::deque<Conn*> todo_, done_;
    bool stopped_ = false;
    int wake_[2];
};

void close_conn(Conn* c) {
    soap_destroy(c->soap);
    soap_end(c->soap);
    soap_force_closesock(c->soap);
    soap_free(c->soap);
    delete c;
}

}  // namespace

void serve_polling(struct soap* master, const Config& config, CustomerStore* store,
                   const std::atomic<bool>& stopping) {
    Worker worker;  // the single-threaded mode's; each pool thread has its own
    worker.store = store;
    Handoff handoff;
    std::vector<std::thread> pool;
    std::atomic<int> running{0};
    for (int i = 0; i < config.workers; i++) {
        running++;
        pool.emplace_back([&] {
            Worker mine;
            mine.store = store;
            for (Conn* c; (c = handoff.take()) != nullptr;) {
                c->soap->user = &mine;
                serve(c);
                handoff.served(c);
            }
            running--;
        });
    }
    std::vector<Conn*> conns;
    std::vector<struct pollfd> fds;
    const auto idle = std::chrono::seconds(master->recv_timeout);
    while (!stopping) {
        fds.assign({{master->master, POLLIN, 0}, {handoff.wake_fd(), POLLIN, 0}});
        std::vector<Conn*> polled;
        for (Conn* c : conns) {
            if (!c->busy) {
                fds.push_back({c->soap->socket, POLLIN, 0});
                polled.push_back(c);
            }
        }
        if (poll(fds.data(), fds.size(), 1000) < 0) {
            continue;  // EINTR
        }
        if (fds[1].revents) {
            for (Conn* c : handoff.returned()) {
                c->busy = false;
            }
        }
        for (std::size_t i = 0; i < polled.size(); i++) {
            Conn* c = polled[i];
            if (!fds[i + 2].revents) {
                if (Clock::now() - c->last > idle) {
                    c->closed = true;  // idle past recv_timeout, as the pool mode closes it
                }
                continue;
            }
            if (config.workers == 0) {
                c->soap->user = &worker;
                serve(c);
            } else {
                c->busy = true;
                handoff.give(c);
            }
        }
        std::vector<Conn*> open;
        for (Conn* c : conns) {
            if (c->closed && !c->busy) {
                close_conn(c);
            } else {
                open.push_back(c);
            }
        }
        conns.swap(open);
        if ((fds[0].revents & POLLIN) && static_cast<int>(conns.size()) < config.queue) {
            const SOAP_SOCKET s = soap_accept(master);
            if (soap_valid_socket(s)) {
                const int one = 1;
                setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                Conn* c = new Conn;
                c->soap = soap_copy(master);
                c->soap->socket = s;
                c->soap->keep_alive = c->soap->max_keep_alive + 1;  // as soap_serve starts a connection
                conns.push_back(c);
            }
        }
    }
    handoff.stop();
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while (running > 0 && Clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    for (auto& t : pool) {
        t.detach();
    }
}

}  // namespace peer
