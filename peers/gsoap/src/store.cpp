//! The bounded customer ring (see store.h).
#include "store.h"

#include <algorithm>
#include <utility>

#include "generate.h"

namespace peer {

CustomerPtr own(cust__Customer* heap) {
    // soap_del frees what the members point to (gSOAP's deep delete), then the object itself.
    return CustomerPtr(heap, [](const cust__Customer* p) {
        p->soap_del();
        delete p;
    });
}

CustomerPtr detach(const cust__Customer& c) {
    // soap_dup with no context allocates with new, outside gSOAP's per-request memory.
    return own(soap_dup_cust__Customer(nullptr, nullptr, &c));
}

CustomerStore::CustomerStore(std::size_t cap, std::size_t prefill)
    : slots_(new Slot[std::max<std::size_t>(cap, 1)]), cap_(std::max<std::size_t>(cap, 1)) {
    add(generate(std::min(prefill, cap_), PREFILL_SEED, PREFILL_FIRST_ID));
}

std::uint64_t CustomerStore::add(std::vector<CustomerPtr> customers) {
    const std::uint64_t n = customers.size();
    const std::uint64_t start = inserted_.fetch_add(n, std::memory_order_relaxed);
    for (std::uint64_t i = 0; i < n; i++) {
        Slot& slot = slots_[(start + i) % cap_];
        {
            std::lock_guard<std::mutex> guard(slot.lock);
            slot.customer.swap(customers[i]);
        }
        customers[i].reset();  // the one overwritten, freed outside the lock
    }
    return std::min<std::uint64_t>(start + n, cap_);
}

void CustomerStore::get(std::uint32_t count, std::uint64_t offset, std::vector<CustomerPtr>& out) const {
    const std::uint64_t len = std::min<std::uint64_t>(inserted_.load(std::memory_order_relaxed), cap_);
    if (len == 0) {
        return;
    }
    std::uint64_t pos = offset % len;
    std::uint64_t skips = len;
    std::uint32_t left = count;
    while (left > 0) {
        CustomerPtr c;
        {
            std::lock_guard<std::mutex> guard(slots_[pos].lock);
            c = slots_[pos].customer;
        }
        if (c) {
            out.push_back(std::move(c));
            left--;
        } else if (skips-- == 0) {
            break;
        }
        pos = (pos + 1) % len;
    }
}

}  // namespace peer
